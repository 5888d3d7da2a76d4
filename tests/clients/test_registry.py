"""The client registry: a new client is one module and its registration. A fake client registered by a
module of its own is installed, found by the doctor, its hooks run as the client would run them (adding
memory at its session start and prompt in its own output shape), and uninstalled, with no other change to
memx. Every registered client declares what it reads with a reader that exists."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memx_mcp.cli.client_check import probe_hook
from memx_mcp.cli.clients import Launcher, configure, configured_entries
from memx_mcp.clients import Places, client, clients, names, unregister
from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.domain import backends

from ..helpers import env_for

RUNNER = Path(__file__).parent / "run_memx_with_fake.py"
FACT = "Run the fake project's tests with make check, never with pytest directly"


@pytest.fixture
def fake() -> Iterator[str]:
    sys.path.insert(0, str(Path(__file__).parent))
    module = importlib.import_module("fake_client")
    importlib.reload(module)  # registered again after an earlier test took it out
    yield module.NAME
    unregister(module.NAME)
    sys.path.remove(str(Path(__file__).parent))


def _hook(command: str, payload: dict[str, str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**env_for(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="1"), "HOME": str(cwd / "home")}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_a_fake_client_registered_by_its_own_module_installs_runs_its_hooks_and_uninstalls(
    tmp_path: Path, fake: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("MEMX_HOME", str(data))
    open_memory(load_settings(data), cwd=tmp_path).remember(FACT, scope="global")
    (tmp_path / "home").mkdir()
    places = Places(tmp_path / "home", tmp_path, "linux", {})
    config = tmp_path / "home" / ".fakecli" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"theme": "dark", "hooks": {"begin": ["echo mine"]}}))
    launch = Launcher("installed", ("memx-mcp",), (sys.executable, str(RUNNER)))

    assert fake in names()
    configure(fake, "user", places, launch=launch)
    written = json.loads(config.read_text())
    assert written["tools"]["memx"] == {"command": "memx-mcp", "args": []}
    assert written["hooks"]["begin"][0] == "echo mine" and set(written["hooks"]) == {"begin", "ask", "after"}
    configure(fake, "user", places, launch=launch, tool_hooks=False)
    assert set(json.loads(config.read_text())["hooks"]) == {"begin", "ask"}

    (hook, server) = sorted((c for c in configured_entries(places) if c.client == fake), key=lambda c: c.what)
    assert hook.what == "hook" and hook.events == ("begin", "ask") and server.command == ("memx-mcp",)
    probe = probe_hook(hook, tmp_path)  # the doctor: each event, the client's payload, its output checked
    assert probe.ok and "begin, ask" in probe.detail, probe.detail

    started = _hook(hook.hook, {"kind": "begin", "chat": "c-1", "dir": str(tmp_path)}, tmp_path, data)
    assert FACT in json.loads(started.stdout)["additionalContext"], started
    asked = _hook(
        hook.hook,
        {"kind": "ask", "chat": "c-2", "dir": str(tmp_path), "words": "how do I run the tests of the fake project?"},
        tmp_path,
        data,
    )
    assert FACT in json.loads(asked.stdout)["additionalContext"], asked

    configure(fake, "user", places, install=False)
    assert json.loads(config.read_text()) == {"theme": "dark", "hooks": {"begin": ["echo mine"]}}
    assert not [c for c in configured_entries(places) if c.client == fake]


def test_without_its_module_the_fake_client_is_unknown_to_memx(tmp_path: Path) -> None:
    places = Places(tmp_path, tmp_path, "linux", {})
    assert "fake-cli" not in names()
    with pytest.raises(Exception, match="unknown client 'fake-cli'"):
        configure("fake-cli", "user", places)


def test_every_client_names_a_transcript_reader_and_a_headless_backend_that_exist() -> None:
    formats = Path(importlib.import_module("memx_mcp.engine.reflector.transcripts.formats").__file__ or "").parent
    for known in clients():
        if known.sessions is not None:
            reader = known.sessions.reader
            assert reader == "claude-code" or (formats / f"{reader}.py").is_file(), (known.name, reader)
        if known.headless is not None:
            assert known.headless in backends.backend_names(), (known.name, known.headless)
        for hook in known.hooks:
            assert hook.moment in (
                "session_start",
                "prompt",
                "session_end",
                "before_tool",
                "after_tool",
                "tool_failure",
            )
    assert client("codex").sessions is not None and "**/rollout-*.jsonl.zst" in client("codex").sessions.patterns
