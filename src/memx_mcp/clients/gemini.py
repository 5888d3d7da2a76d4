"""Gemini CLI (google-gemini/gemini-cli docs/hooks/reference.md): the server and the hooks in the same
``.gemini/settings.json`` (user's or project's); hooks in Claude Code's grouped shape with a ``name`` and a
timeout in milliseconds. stdout must be JSON alone: ``SessionStart`` and ``BeforeAgent`` (after the prompt)
add ``hookSpecificOutput.additionalContext``; ``AfterTool`` appends it to the tool's result. Chats live under
``~/.gemini/tmp/<project>/chats/``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .edits import found_json, grouped_hooks_in, with_grouped_hooks, with_server
from .model import (
    Client,
    ConfigFile,
    Found,
    Hook,
    HookEvent,
    Scope,
    Sessions,
    Wiring,
    read_claude_shaped,
)
from .places import Places

NAME = "gemini"
_COMMON = {"session_id": "memx-doctor", "cwd": "", "transcript_path": "", "timestamp": "2026-01-01T00:00:00Z"}
_START = {"hook_event_name": "SessionStart", "source": "startup", **_COMMON}
_PROMPT = {"hook_event_name": "BeforeAgent", "prompt": "memx doctor", **_COMMON}
HOOKS = (
    Hook("SessionEnd", "session_end", sample={"hook_event_name": "MemxDoctorProbe", **_COMMON}),
    Hook("PreCompress", "session_end"),
    Hook(
        "SessionStart",
        "session_start",
        "hook_specific",
        {"hook_event_name": "SessionStart", "source": "startup", **_COMMON},
    ),
    Hook(
        "BeforeAgent", "prompt", "hook_specific", {"hook_event_name": "BeforeAgent", "prompt": "memx doctor", **_COMMON}
    ),
    Hook("BeforeTool", "before_tool", "hook_specific"),
    Hook("AfterTool", "after_tool", "hook_specific"),
)
EVENTS = tuple(h.event for h in HOOKS)
REFLECT = ("SessionEnd", "PreCompress")


def _change(data: Any, wiring: Wiring, path: Path) -> Any:
    def entry(event: str) -> dict[str, Any]:
        seconds = 60 if event in REFLECT else 10
        return {"type": "command", "command": wiring.hook, "name": "memx", "timeout": seconds * 1000}

    with_it = with_server(data, wiring.server, wiring.install, path)
    return with_grouped_hooks(with_it, NAME, wiring.events, EVENTS, path, entry)


def _find(data: Any) -> Found:
    return found_json(data, "mcpServers", lambda d: grouped_hooks_in(d, NAME, EVENTS))


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    base = places.home if scope == "user" else places.project
    return (ConfigFile(base / ".gemini" / "settings.json", "json", _change, _find),)


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    return read_claude_shaped(NAME, HOOKS, payload)


CLIENT = Client(
    NAME,
    "Gemini CLI",
    files,
    HOOKS,
    read,
    sessions=Sessions(lambda p: (p.home / ".gemini" / "tmp",), ("*/chats/*.json", "*/chats/*/*.json"), "gemini"),
    headless="gemini-cli",
)
