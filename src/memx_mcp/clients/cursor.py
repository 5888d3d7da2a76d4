"""Cursor (cursor.com/docs/agent/hooks): the server in ``.cursor/mcp.json``, hooks in ``.cursor/hooks.json``
(``{"version": 1, "hooks": {event: [{"command": …}]}}``), the user's or the project's. ``sessionStart`` adds
context with ``{"additional_context": …}``; ``beforeSubmitPrompt`` can only let a prompt through or stop it
(``continue``, ``user_message``), so memx does not hook it. ``stop`` and ``sessionEnd`` carry
``conversation_id``, ``workspace_roots`` and a ``transcript_path`` the CLI leaves null: the transcript is then
found where Cursor keeps it, ``~/.cursor/projects/<workspace path, other characters as "-">/
agent-transcripts/<id>.jsonl`` (or ``<id>/<id>.jsonl``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .edits import flat_hooks_in, found_json, server_file, with_flat_hooks
from .model import Client, ConfigFile, Found, Hook, HookEvent, Scope, Sessions, Wiring, existing, text_of
from .places import Places

NAME = "cursor"
_COMMON = {"conversation_id": "memx-doctor", "workspace_roots": [], "cursor_version": "2.0"}
HOOKS = (
    Hook("stop", "session_end", sample={"hook_event_name": "MemxDoctorProbe", **_COMMON}),
    Hook("sessionEnd", "session_end"),
    Hook("sessionStart", "session_start", "cursor", {"hook_event_name": "sessionStart", **_COMMON}),
    Hook("preToolUse", "before_tool", "cursor"),
    Hook("postToolUse", "after_tool", "cursor"),
    Hook("postToolUseFailure", "tool_failure", "cursor"),
)
EVENTS = tuple(h.event for h in HOOKS)


def slugs(workspace: str) -> list[str]:
    """Cursor's folder names for a workspace: the path without its leading separator, the other characters
    than letters and digits as "-" (one each, or one a run: Windows paths were seen both ways)."""
    bare = workspace.lstrip("/\\")
    return list(dict.fromkeys(re.sub(pattern, "-", bare) for pattern in (r"[^A-Za-z0-9]", r"[^A-Za-z0-9]+")))


def transcript(payload: Mapping[str, Any], home: Path) -> Path | None:
    given = existing(text_of(payload.get("transcript_path")))
    if given is not None:
        return given
    conversation = str(payload.get("conversation_id") or payload.get("session_id") or "")
    roots = payload.get("workspace_roots") or []
    if not re.fullmatch(r"[A-Za-z0-9-]+", conversation) or not isinstance(roots, list):
        return None
    for root in (str(r) for r in roots):
        for slug in slugs(root):
            folder = home / ".cursor" / "projects" / slug / "agent-transcripts"
            for candidate in (folder / f"{conversation}.jsonl", folder / conversation / f"{conversation}.jsonl"):
                if candidate.is_file():
                    return candidate
    return None


def _hooks(data: Any, wiring: Wiring, path: Path) -> Any:
    return with_flat_hooks(data, NAME, wiring.events, EVENTS, path, lambda _e: {"command": wiring.hook})


def _find(data: Any) -> Found:
    return found_json(data, None, lambda d: flat_hooks_in(d, NAME, EVENTS))


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    folder = (places.home if scope == "user" else places.project) / ".cursor"
    return (server_file(folder / "mcp.json"), ConfigFile(folder / "hooks.json", "json", _hooks, _find))


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    event = text_of(payload.get("hook_event_name"))
    hook = next((h for h in HOOKS if h.event == event), None)
    roots = payload.get("workspace_roots") or []
    cwd = text_of(payload.get("cwd")) or (str(roots[0]) if isinstance(roots, list) and roots else "")
    moment = hook.moment if hook else None
    return HookEvent(
        NAME,
        event,
        moment,
        session_id=str(payload.get("conversation_id") or payload.get("session_id") or ""),
        cwd=cwd,
        prompt=text_of(payload.get("prompt")),
        transcript=transcript(payload, places.home) if moment == "session_end" else None,
        payload=payload,
    )


CLIENT = Client(
    NAME,
    "Cursor",
    files,
    HOOKS,
    read,
    sessions=Sessions(lambda p: (p.home / ".cursor" / "projects",), ("*/agent-transcripts/**/*.jsonl",), "cursor"),
    notes="beforeSubmitPrompt cannot add context in Cursor, so memx adds it at sessionStart only",
)
