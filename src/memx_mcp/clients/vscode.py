"""VS Code: the server in ``mcp.json`` (``servers``, typed; the user's profile or the project's ``.vscode/``).
Its agent hooks (code.visualstudio.com/docs/agent-customization/hooks, Preview) are read from the project's
``.github/hooks/*.json`` in Claude Code's event names and payloads, each entry ``{"type": "command",
"command": …, "timeout": seconds}``, context through ``hookSpecificOutput.additionalContext``: memx writes
its own file, ``.github/hooks/memx-vscode.json``, so a project install adds them (a user install writes the
server only). VS Code's session files are not among the formats memx reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .edits import flat_hooks_in, found_json, server_file, with_flat_hooks
from .model import Client, ConfigFile, Found, Hook, HookEvent, Scope, existing, text_of
from .places import Places

NAME = "vscode"
_COMMON = {"session_id": "memx-doctor", "cwd": "", "timestamp": "2026-01-01T00:00:00Z"}
_START = {"hook_event_name": "SessionStart", "source": "new", **_COMMON}
_PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "memx doctor", **_COMMON}
# no tool hooks: memx has no reader of this client's tool payloads yet (hooks/tool_payloads.py), and a
# hook on every tool call that can say nothing would only cost the user a process start each time
HOOKS = (
    Hook(
        "SessionStart",
        "session_start",
        "hook_specific",
        {"hook_event_name": "SessionStart", "source": "new", **_COMMON},
    ),
    Hook(
        "UserPromptSubmit",
        "prompt",
        "hook_specific",
        {"hook_event_name": "UserPromptSubmit", "prompt": "memx doctor", **_COMMON},
    ),
)
EVENTS = tuple(h.event for h in HOOKS)


def _hooks_file(path: Path) -> ConfigFile:
    def change(data: Any, wiring: Any, at: Path) -> Any:
        def entry(_event: str) -> dict[str, Any]:
            return {"type": "command", "command": wiring.hook, "timeout": 10}

        updated = with_flat_hooks(data, NAME, wiring.events, EVENTS, at, entry)
        return {k: v for k, v in updated.items() if k != "version" or updated.get("hooks")}

    def find(data: Any) -> Found:
        return found_json(data, None, lambda d: flat_hooks_in(d, NAME, EVENTS))

    return ConfigFile(path, "json", change, find)


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    if scope == "user":
        return (server_file(places.config_base() / "Code" / "User" / "mcp.json", "servers", typed=True),)
    return (
        server_file(places.project / ".vscode" / "mcp.json", "servers", typed=True),
        _hooks_file(places.project / ".github" / "hooks" / "memx-vscode.json"),
    )


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    event = text_of(payload.get("hook_event_name") or payload.get("hookEventName"))
    hook = next((h for h in HOOKS if h.event == event), None)
    return HookEvent(
        NAME,
        event,
        hook.moment if hook else None,
        session_id=text_of(payload.get("session_id") or payload.get("sessionId")),
        cwd=text_of(payload.get("cwd")),
        prompt=text_of(payload.get("prompt")),
        source=text_of(payload.get("source")),
        transcript=existing(text_of(payload.get("transcript_path"))),
        payload=payload,
    )


CLIENT = Client(
    NAME, "VS Code", files, HOOKS, read, notes="agent hooks: project scope (.github/hooks/memx-vscode.json)"
)
