"""A client memx has never heard of, declared the way every client module in ``memx_mcp/clients/`` is:
its configuration file (``~/.fakecli/config.json``: servers under ``tools``, hooks as ``{event: [command]}``),
its hook events and their payloads (``{"kind", "chat", "dir", "words"}``), and how it reads context from a
hook's stdout (``{"memory": TEXT}``). Importing it registers it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memx_mcp.clients import Client, ConfigFile, Found, Hook, HookEvent, Places, Scope, Wiring, register
from memx_mcp.clients.edits import is_memx_hook, server_in, with_server

NAME = "fake-cli"
_PAYLOAD = {"chat": "doctor-1", "dir": ""}
HOOKS = (
    Hook("begin", "session_start", "copilot", {"kind": "begin", **_PAYLOAD}),
    Hook("ask", "prompt", "copilot", {"kind": "ask", "words": "memx doctor", **_PAYLOAD}),
    Hook("after", "after_tool", "copilot"),
)


def _change(data: Any, wiring: Wiring, path: Path) -> Any:
    updated = with_server(data, wiring.server, wiring.install, path, "tools")
    hooks = {e: [c for c in cs if not is_memx_hook(c, NAME)] for e, cs in dict(updated.get("hooks", {})).items()}
    for event in wiring.events:
        hooks.setdefault(event, []).append(wiring.hook)
    hooks = {e: cs for e, cs in hooks.items() if cs}
    updated.pop("hooks", None)
    return {**updated, "hooks": hooks} if hooks else updated


def _find(data: Any) -> Found:
    hooks = data.get("hooks", {}) if isinstance(data, dict) else {}
    mine: dict[str, list[str]] = {}
    for event, commands in hooks.items():
        for command in commands:
            if is_memx_hook(command, NAME):
                mine.setdefault(command, []).append(event)
    return Found(server_in(data, "tools") if isinstance(data, dict) else None, {c: tuple(e) for c, e in mine.items()})


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    base = places.home if scope == "user" else places.project
    return (ConfigFile(base / ".fakecli" / "config.json", "json", _change, _find),)


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    kind = str(payload.get("kind", ""))
    hook = next((h for h in HOOKS if h.event == kind), None)
    return HookEvent(
        NAME,
        kind,
        hook.moment if hook else None,
        session_id=str(payload.get("chat", "")),
        cwd=str(payload.get("dir", "")),
        prompt=str(payload.get("words", "")),
        payload=payload,
    )


CLIENT = register(Client(NAME, "Fake CLI", files, HOOKS, read))
