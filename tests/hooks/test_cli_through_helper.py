"""The `memx` command answered by the warm helper: no second store open and no second model load when a
helper runs for the same data folder and settings, the same output and exit code as the command run
itself, and a command of other settings, or a helper that cannot prove itself, runs the command here.

All real: the helper process, the `memx` script, a LanceDB store in a temporary folder, the offline model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import MODEL
from ..helpers import env_for
from ..helpers import run_memx as memx
from .test_helper_channel import Helpers, read_state, take_over

POOL = "Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10"


def answered_by_helper(home: Path) -> int:
    log = home / "logs" / "hook.log"
    return log.read_text(encoding="utf-8").count("answered a memx command") if log.exists() else 0


class SameSettings(Helpers):
    """A helper started with the very environment the commands run with (the fixture's own helpers idle
    out after a minute, a setting of their own)."""

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memx_mcp.hooks.helper", "--home", str(self.home), *args],
            env=env_for(self.home),
            cwd=self.home.parent,
        )
        self.procs.append(proc)
        deadline = time.monotonic() + 120
        while read_state(self.home).get("pid") != proc.pid:
            assert proc.poll() is None, f"the helper exited with {proc.returncode}"
            assert time.monotonic() < deadline, "the helper did not start"
            time.sleep(0.05)
        return proc


@pytest.fixture
def helpers(tmp_path: Path, embedder: Embedder) -> Iterator[SameSettings]:
    home = tmp_path / "home"
    store = LanceStore(home / "store", MODEL, 384)  # the store exists before any helper runs
    Memory(Settings(home=home), store, ReadyEmbedder(embedder), cwd=tmp_path).remember(POOL, scope="global")
    started = SameSettings(home)
    yield started
    started.stop_all()


def test_commands_are_answered_by_a_running_helper_as_they_would_answer_themselves(helpers: SameSettings) -> None:
    home = helpers.home
    helpers.start()
    wrote = memx(home, "remember", "Run alembic upgrade head after pulling new migrations", "--json")
    assert wrote.returncode == 0, wrote.stderr
    assert json.loads(wrote.stdout)["action"] == "inserted"
    assert answered_by_helper(home) == 1

    warm = memx(home, "recall", "redis connection pool", "--scope", "global", "--json")
    cold = memx(home, "recall", "redis connection pool", "--scope", "global", "--json", MEMX_NO_HELPER="1")
    assert warm.returncode == cold.returncode == 0
    assert answered_by_helper(home) == 2  # the second one ran itself
    got, expected = json.loads(warm.stdout), json.loads(cold.stdout)
    assert [r["id"] for r in got["results"]] == [r["id"] for r in expected["results"]]
    assert got["results"][0]["content"] == POOL and got["mode"] == expected["mode"] == "hybrid"

    # what one process wrote, the other sees: the helper's open store follows writes made elsewhere
    assert memx(home, "remember", "The staging API listens on port 8443", MEMX_NO_HELPER="1").returncode == 0
    listed = json.loads(memx(home, "list", "--json").stdout)["bullets"]
    assert answered_by_helper(home) == 3
    assert {b["content"] for b in listed} >= {POOL, "The staging API listens on port 8443"}

    text = memx(home, "stats")
    assert text.returncode == 0 and "bullets: 3 " in text.stdout and "\x1b[" not in text.stdout  # a pipe: no colour


def test_a_failing_command_fails_the_same_way_through_the_helper(helpers: SameSettings) -> None:
    home = helpers.home
    helpers.start()
    warm = memx(home, "recall", "anything", "--scope", "bogus::")
    cold = memx(home, "recall", "anything", "--scope", "bogus::", MEMX_NO_HELPER="1")
    assert warm.returncode == cold.returncode == 1
    assert warm.stderr == cold.stderr and warm.stderr.startswith("memx: error: invalid scope")
    missing = memx(home, "show", "b_0000000000000000")
    assert missing.returncode == 1 and "b_0000000000000000" in missing.stderr
    assert answered_by_helper(home) == 2


def test_a_command_with_other_settings_runs_itself(helpers: SameSettings) -> None:
    home = helpers.home
    helpers.start()
    done = memx(home, "recall", "redis connection pool", "--scope", "global", "--json", MEMX_MAX_RESULTS="1")
    assert done.returncode == 0 and len(json.loads(done.stdout)["results"]) == 1
    assert answered_by_helper(home) == 0


def test_a_command_never_talks_to_what_stands_in_for_a_dead_helper(helpers: SameSettings) -> None:
    home = helpers.home
    impostor = take_over(helpers, helpers.start())
    try:
        done = memx(home, "recall", "redis connection pool", "--scope", "global", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"][0]["content"] == POOL  # ran itself
        assert impostor.connections >= 1
        assert b"command" not in impostor.received and b"redis" not in impostor.received
    finally:
        impostor.close()
