"""Claude Code (code.claude.com/docs/en/hooks): the server in ``~/.claude.json`` (a project: ``.mcp.json``,
approved in the user's own ``.claude/settings.local.json``), hooks in ``.claude/settings.json`` (event →
groups → hooks, timeouts in seconds). Plain stdout is added to the model's context for SessionStart and
UserPromptSubmit; the tool events need JSON ``hookSpecificOutput.additionalContext``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ..domain.errors import InvalidInputError
from .edits import found_json, grouped_hooks_in, server_file, with_approval, with_grouped_hooks
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

NAME = "claude-code"
_PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "memx-doctor", "cwd": "", "prompt": "memx doctor"}
HOOKS = (
    Hook("SessionEnd", "session_end", sample={"hook_event_name": "MemxDoctorProbe", "session_id": "memx-doctor"}),
    Hook("PreCompact", "session_end"),
    Hook("SessionStart", "session_start", "plain", {"hook_event_name": "SessionStart", "source": "startup"}),
    Hook("UserPromptSubmit", "prompt", "plain", _PROMPT),
    Hook("PreToolUse", "before_tool", "hook_specific"),
    Hook("PostToolUse", "after_tool", "hook_specific"),
    Hook("PostToolUseFailure", "tool_failure", "hook_specific"),
)
EVENTS = tuple(h.event for h in HOOKS)
REFLECT = ("SessionEnd", "PreCompact")


def settings_path(scope: str, home: Path | None = None, project: Path | None = None) -> Path:
    """Claude Code's settings file, where hooks live."""
    if scope == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    if scope == "project":
        return (project or Path.cwd()) / ".claude" / "settings.json"
    raise InvalidInputError("--scope must be user or project")


def _entry(command: str, event: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": 60 if event in REFLECT else 10}


def _hooks(data: Any, wiring: Wiring, path: Path) -> Any:
    return with_grouped_hooks(data, NAME, wiring.events, EVENTS, path, partial(_entry, wiring.hook))


def _find_hooks(data: Any) -> Found:
    return found_json(data, None, lambda d: grouped_hooks_in(d, NAME, EVENTS))


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    hooks = ConfigFile(settings_path(scope, places.home, places.project), "json", _hooks, _find_hooks)
    if scope == "user":
        return (server_file(places.home / ".claude.json", typed=True), hooks)
    local = places.project / ".claude" / "settings.local.json"  # the user's own, unshared: the approval
    return (
        server_file(places.project / ".mcp.json", typed=True),
        hooks,
        ConfigFile(local, "json", lambda d, w, p: with_approval(d, w.install)),
    )


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    return read_claude_shaped(NAME, HOOKS, payload)


CLIENT = Client(
    NAME,
    "Claude Code",
    files,
    HOOKS,
    read,
    sessions=Sessions(lambda p: (p.home / ".claude" / "projects",), ("*/*.jsonl",), "claude-code"),
    headless="claude-cli",
)
