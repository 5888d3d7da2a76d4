"""Memory back by itself at session start and with each prompt, in every client that has hooks for it:
`memx install CLIENT` writes the hooks, and the command it wrote, run through the shell as the client runs
it with a payload of the shape the client's documentation (or its own tests and schemas) gives, prints what
that client reads as added context (Claude Code: plain text; Codex, Gemini CLI, VS Code:
``hookSpecificOutput.additionalContext``, Gemini's stdout pure JSON; Cursor: ``additional_context``; Copilot
CLI: ``additionalContext``). Uninstall gives every file back as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.cli.clients import Launcher, configure, configured_entries
from memx_mcp.clients import Places
from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings

from ..helpers import env_for, script

FACT = "Run this project's test suite with make check, never with pytest directly"
PROMPT = "How should I run the test suite of this project?"
SESSION = "3f1c2a4e-8d8b-4c55-9a11-0c2d6f6b2f10"


def _start(client: str, cwd: str) -> tuple[str, dict[str, Any]]:
    """Each client's session-start event and payload, as its documentation shows it."""
    return {
        "claude-code": ("SessionStart", {"session_id": SESSION, "transcript_path": "", "cwd": cwd,
                                         "hook_event_name": "SessionStart", "source": "startup"}),
        "codex": ("SessionStart", {"session_id": SESSION, "transcript_path": None, "cwd": cwd,
                                   "hook_event_name": "SessionStart", "model": "gpt-5.4", "permission_mode": "default",
                                   "source": "startup"}),
        "gemini": ("SessionStart", {"session_id": SESSION, "transcript_path": "", "cwd": cwd,
                                    "hook_event_name": "SessionStart", "timestamp": "2026-12-04T05:00:00.000Z",
                                    "source": "startup"}),
        "cursor": ("sessionStart", {"conversation_id": SESSION, "generation_id": "g-1", "model": "default",
                                    "hook_event_name": "sessionStart", "cursor_version": "2.3.1",
                                    "workspace_roots": [cwd], "user_email": None, "transcript_path": None,
                                    "session_id": SESSION, "is_background_agent": False, "composer_mode": "agent"}),
        "vscode": ("SessionStart", {"timestamp": "2026-12-04T05:00:00.000Z", "cwd": cwd, "session_id": SESSION,
                                    "hook_event_name": "SessionStart", "transcript_path": "", "source": "new"}),
        "copilot-cli": ("sessionStart", {"sessionId": SESSION, "timestamp": 1796360400000, "cwd": cwd,
                                         "source": "new", "initialPrompt": ""}),
    }[client]  # fmt: skip


def _prompt(client: str, cwd: str) -> tuple[str, dict[str, Any]]:
    _, payload = _start(client, cwd)
    name = {"gemini": "BeforeAgent", "copilot-cli": "userPromptSubmitted"}.get(client, "UserPromptSubmit")
    payload = {k: v for k, v in payload.items() if k not in ("source", "initialPrompt")}
    if client == "cursor":
        return "beforeSubmitPrompt", {**payload, "hook_event_name": "beforeSubmitPrompt", "prompt": PROMPT}
    if "hook_event_name" in payload:
        payload["hook_event_name"] = name
    return name, {**payload, "prompt": PROMPT, **({"turn_id": "t-1"} if client == "codex" else {})}


def _plain(stdout: str, event: str) -> str:
    return stdout


def _hook_specific(stdout: str, event: str) -> str:
    data = json.loads(stdout)  # the whole of stdout is one JSON object (Gemini CLI requires it)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    return str(data["hookSpecificOutput"]["additionalContext"])


def _key(key: str) -> Callable[[str, str], str]:
    return lambda stdout, event: str(json.loads(stdout)[key])


SHAPES: dict[str, Callable[[str, str], str]] = {
    "claude-code": _plain,
    "codex": _hook_specific,
    "gemini": _hook_specific,
    "vscode": _hook_specific,
    "cursor": _key("additional_context"),
    "copilot-cli": _key("additionalContext"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clients")
    (root / "home").mkdir()
    (root / "proj").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root / "proj", check=True)
    open_memory(load_settings(root / "data"), cwd=root / "proj").remember(FACT, scope="global")
    return root


def _run(world: Path, command: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    env = {**env_for(world / "data", MEMX_HOOK_DAEMON_IDLE_MINUTES="1"), "HOME": str(world / "home")}
    # the hooks name `memx` as installed on PATH (the launcher says so): this environment's scripts are
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=world / "proj",
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("client", list(SHAPES))
def test_memx_install_adds_memory_at_session_start_and_with_each_prompt_in_the_clients_own_shape(
    world: Path, client: str
) -> None:
    places = Places(world / "home", world / "proj", "linux", {"CODEX_HOME": str(world / "home" / ".codex")})
    launch = Launcher("installed", ("memx-mcp",), tuple(script("memx")), on_path=True)
    scope = "project" if client == "vscode" else "user"  # VS Code reads agent hooks from the project
    configure(client, scope, places, launch=launch)
    hooks = {e: c.hook for c in configured_entries(places) if c.client == client and c.what == "hook" for e in c.events}
    cwd = str(world / "proj")
    event, payload = _start(client, cwd)
    started = _run(world, hooks[event], payload)
    assert started.returncode == 0 and FACT in SHAPES[client](started.stdout, event), started
    event, payload = _prompt(client, cwd)
    if client == "cursor":  # beforeSubmitPrompt can only let a prompt through: memx does not hook it
        assert event not in hooks
        return
    other = f"prompt-{client}"  # a bullet is handed back once per session: each client a session of its own
    ids = {k: other for k in ("session_id", "sessionId", "conversation_id") if k in payload}
    asked = _run(world, hooks[event], {**payload, **ids})
    assert asked.returncode == 0 and FACT in SHAPES[client](asked.stdout, event), asked
    configure(client, scope, places, install=False)
    assert not [c for c in configured_entries(places) if c.client == client]


def test_codex_hooks_go_beside_the_users_own_and_uninstall_gives_both_files_back(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify-me.sh"}]}]}}
    (home / "hooks.json").write_text(json.dumps(mine))
    config = '# mine\nmodel = "gpt-5.4"\n\n[features]\nweb_search = true\n'
    (home / "config.toml").write_text(config)
    places = Places(tmp_path, tmp_path, "linux", {"CODEX_HOME": str(home)})
    configure("codex", "user", places, launch=Launcher("installed", ("memx-mcp",), ("memx",), on_path=True))
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"] == mine["hooks"]["Stop"]
    assert set(hooks) == {"Stop", "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
    text = (home / "config.toml").read_text()
    assert "codex_hooks" not in text and "web_search = true" in text  # hooks are on by default in Codex 0.171
    configure("codex", "user", places, install=False)
    assert json.loads((home / "hooks.json").read_text()) == mine
    assert (home / "config.toml").read_text() == config


def test_copilot_cli_user_hooks_go_inline_in_its_settings_and_come_out_again(tmp_path: Path) -> None:
    folder = tmp_path / ".copilot"
    folder.mkdir()
    mine = {"theme": "dark", "hooks": {"sessionEnd": [{"type": "command", "bash": "./bye.sh"}]}}
    (folder / "settings.json").write_text(json.dumps(mine))
    places = Places(tmp_path, tmp_path, "linux", {})
    launch = Launcher("installed", ("memx-mcp",), ("memx",), on_path=True)
    configure("copilot-cli", "user", places, launch=launch, tool_hooks=False)
    settings = json.loads((folder / "settings.json").read_text())
    assert "version" not in settings and settings["hooks"]["sessionEnd"] == mine["hooks"]["sessionEnd"]
    (start,) = settings["hooks"]["sessionStart"]
    assert start["type"] == "command" and start["bash"].endswith("memx hook copilot-cli || exit 0")
    server = json.loads((folder / "mcp-config.json").read_text())["mcpServers"]["memx"]
    assert server == {"type": "local", "command": "memx-mcp", "args": [], "tools": ["*"]}
    configure("copilot-cli", "user", places, install=False)
    assert json.loads((folder / "settings.json").read_text()) == mine
    assert not (folder / "mcp-config.json").exists()
