"""GitHub Copilot CLI (docs.github.com/copilot/reference/copilot-cli-reference/cli-hooks-reference; ``copilot
help config``, ``copilot mcp --help``): the server in ``~/.copilot/mcp-config.json`` or the project's
``.github/mcp.json`` (``{"type": "local", "command", "args", "tools": ["*"]}``); hooks in camelCase events,
``{"type": "command", "bash": …, "powershell": …, "timeoutSec": …}``, inline under ``hooks`` in the user's
``~/.copilot/settings.json`` or in a file of the project's ``.github/hooks/`` (memx's own:
``memx-copilot.json``). Payloads are camelCase (``sessionId``, ``cwd``, ``prompt``, ``source``);
context through ``{"additionalContext": …}``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .edits import flat_hooks_in, found_json, with_flat_hooks, with_server
from .model import Client, ConfigFile, Found, Hook, HookEvent, Scope, Wiring, text_of
from .places import Places

NAME = "copilot-cli"
_COMMON = {"sessionId": "memx-doctor", "cwd": "", "timestamp": 1767225600000}
# no tool hooks: memx has no reader of this client's tool payloads yet (hooks/tool_payloads.py), and a
# hook on every tool call that can say nothing would only cost the user a process start each time
HOOKS = (
    Hook("sessionStart", "session_start", "copilot", {"source": "new", **_COMMON}),
    Hook("userPromptSubmitted", "prompt", "copilot", {"prompt": "memx doctor", **_COMMON}),
)
EVENTS = tuple(h.event for h in HOOKS)
KEYS = ("bash", "powershell")


def _entry(wiring: Wiring, _event: str) -> dict[str, Any]:
    return {"type": "command", "bash": wiring.hook, "powershell": wiring.hook, "timeoutSec": 30}


def _hooks_change(data: Any, wiring: Wiring, path: Path) -> Any:
    return with_flat_hooks(data, NAME, wiring.events, EVENTS, path, lambda e: _entry(wiring, e), KEYS)


def _find_hooks(data: Any) -> Found:
    return found_json(data, None, lambda d: flat_hooks_in(d, NAME, EVENTS, KEYS))


def _settings_change(data: Any, wiring: Wiring, path: Path) -> Any:
    """The user's settings.json: memx's inline hooks, and no ``version`` key added to it."""
    updated = _hooks_change(data, wiring, path)
    return updated if "version" in data else {k: v for k, v in updated.items() if k != "version"}


def _server_file(path: Path) -> ConfigFile:
    def change(data: Any, wiring: Wiring, at: Path) -> Any:
        entry = {"type": "local", **wiring.server, "tools": ["*"]}
        return with_server(data, entry, wiring.install, at)

    return ConfigFile(path, "json", change, lambda d: found_json(d, "mcpServers"))


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    if scope == "user":
        folder = places.home / ".copilot"
        return (
            _server_file(folder / "mcp-config.json"),
            ConfigFile(folder / "settings.json", "json", _settings_change, _find_hooks),
        )
    github = places.project / ".github"
    return (
        _server_file(github / "mcp.json"),
        ConfigFile(github / "hooks" / "memx-copilot.json", "json", _hooks_change, _find_hooks),
    )


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    """Copilot CLI names the event by the hook that runs, not in the payload: ``memx hook copilot-cli``
    tells them apart by their fields (a prompt, a tool's result, a start's source)."""
    event = text_of(payload.get("hook_event_name") or payload.get("hookEventName"))
    if not event:
        if "toolResult" in payload:
            event = "postToolUse"
        elif "toolName" in payload:
            event = "preToolUse"
        elif "prompt" in payload:
            event = "userPromptSubmitted"
        elif "source" in payload:
            event = "sessionStart"
    hook = next((h for h in HOOKS if h.event == event), None)
    return HookEvent(
        NAME,
        event,
        hook.moment if hook else None,
        session_id=text_of(payload.get("sessionId") or payload.get("session_id")),
        cwd=text_of(payload.get("cwd")),
        prompt=text_of(payload.get("prompt")),
        source=text_of(payload.get("source")),
        payload=payload,
    )


CLIENT = Client(NAME, "Copilot CLI", files, HOOKS, read, headless=None)
