"""Client configuration: ``memx install claude-desktop | claude-code | cursor`` writes memx's MCP server
entry (and, for Claude Code, its hooks) into the client's own files at their real location on macOS,
Linux and Windows. Every other entry is kept, a backup is written, the diff is shown, and running it twice
changes nothing. ``memx uninstall`` removes exactly what install added."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import InvalidInputError
from .files import atomic_write

CLIENTS = ("claude-desktop", "claude-code", "cursor")
SERVER_NAME = "memx"
MARKER = "hook claude-code"
REFLECT_EVENTS = ("SessionEnd", "PreCompact")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
HOOK_EVENTS = REFLECT_EVENTS + CONTEXT_EVENTS


@dataclass(frozen=True)
class Places:
    """Where things live for one machine: tests pass a temporary home and another platform."""

    home: Path
    project: Path
    platform: str = sys.platform
    env: Mapping[str, str] | None = None

    def var(self, name: str) -> str | None:
        return (os.environ if self.env is None else self.env).get(name)


def _installed(name: str) -> Path | None:
    """The installed ``name`` script, unless it lives in a throw-away uv cache."""
    for candidate in (shutil.which(name), str(Path(sys.executable).parent / name)):
        if candidate and Path(candidate).exists() and "/uv/" not in candidate and ".cache/uv" not in candidate:
            return Path(candidate)
    return None


def server_entry() -> dict[str, Any]:
    """How a client should start the server: the installed ``memx-mcp`` if there is one, else uvx."""
    found = _installed("memx-mcp")
    return {"command": str(found), "args": []} if found else {"command": "uvx", "args": ["memx-mcp"]}


def hook_command() -> str:
    found = _installed("memx")
    return f"{found} hook claude-code" if found else "uvx --from memx-mcp memx hook claude-code"


def desktop_config(places: Places) -> Path:
    if places.platform == "darwin":
        return places.home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if places.platform.startswith("win"):
        appdata = places.var("APPDATA")
        base = Path(appdata) if appdata else places.home / "AppData" / "Roaming"
        return base / "Claude" / "claude_desktop_config.json"
    xdg = places.var("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else places.home / ".config") / "Claude" / "claude_desktop_config.json"


def claude_settings_path(scope: str, home: Path | None = None, project: Path | None = None) -> Path:
    """Claude Code's settings file, where hooks live."""
    if scope == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    if scope == "project":
        return (project or Path.cwd()) / ".claude" / "settings.json"
    raise InvalidInputError("--scope must be user or project")


def config_files(client: str, scope: str, places: Places) -> list[tuple[Path, str]]:
    """The files ``client`` reads for ``scope``, each with what memx puts there (``mcp`` or ``hooks``)."""
    if scope not in ("user", "project"):
        raise InvalidInputError("--scope must be user or project")
    if client == "claude-desktop":
        if scope == "project":
            raise InvalidInputError("Claude Desktop has no project configuration; use --scope user")
        return [(desktop_config(places), "mcp")]
    if client == "claude-code":
        mcp = places.home / ".claude.json" if scope == "user" else places.project / ".mcp.json"
        return [(mcp, "mcp"), (claude_settings_path(scope, places.home, places.project), "hooks")]
    if client == "cursor":
        base = places.home if scope == "user" else places.project
        return [(base / ".cursor" / "mcp.json", "mcp")]
    raise InvalidInputError(f"unknown client {client!r}; one of: {', '.join(CLIENTS)}")


@dataclass(frozen=True)
class InstallResult:
    path: Path
    changed: bool
    diff: str
    backup: Path | None


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise InvalidInputError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInputError(f'{path}: the "{key}" entry is not an object; nothing was changed')
    return value


def with_server(data: dict[str, Any], entry: dict[str, Any], install: bool, path: Path) -> dict[str, Any]:
    updated: dict[str, Any] = json.loads(json.dumps(data))
    servers = _object(updated, "mcpServers", path)
    if install:
        servers[SERVER_NAME] = entry
    else:
        servers.pop(SERVER_NAME, None)
        if not servers:
            updated.pop("mcpServers")
    return updated


def with_hooks(data: dict[str, Any], command: str, events: tuple[str, ...], path: Path) -> dict[str, Any]:
    """memx's own hook entries replaced by one for each of ``events`` (none: removed); others kept."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    hooks = _object(updated, "hooks", path)
    for event in HOOK_EVENTS:
        kept = []
        for group in (g for g in hooks.get(event, []) if isinstance(g, dict)):
            inner = [h for h in group.get("hooks", []) if MARKER not in str(h.get("command", ""))]
            if inner or not group.get("hooks"):
                kept.append({**group, "hooks": inner})
        if event in events:
            timeout = 60 if event in REFLECT_EVENTS else 10
            kept.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        updated.pop("hooks")
    return updated


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def apply(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], dry_run: bool) -> InstallResult:
    """Rewrite one JSON file with ``change``: atomically, after a backup, only if something differs."""
    before = _load(path)
    after = change(before)
    if before == after:
        return InstallResult(path, False, "", None)
    old_text = _dump(before) if path.exists() else ""
    diff = "".join(difflib.unified_diff(old_text.splitlines(True), _dump(after).splitlines(True), str(path), str(path)))
    if dry_run:
        return InstallResult(path, True, diff, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.memx-backup-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    atomic_write(path, _dump(after), mode=(path.stat().st_mode & 0o777) if path.exists() else 0o644)
    return InstallResult(path, True, diff, backup)


def configure(
    client: str,
    scope: str,
    places: Places,
    *,
    install: bool = True,
    dry_run: bool = False,
    reflect: bool = True,
    session_start: bool = True,
    prompt: bool = True,
) -> list[InstallResult]:
    """Install (or remove) memx in ``client``. For Claude Code, ``reflect`` adds the session-end hooks,
    ``session_start`` and ``prompt`` the context-injection hooks."""
    wanted = {"SessionEnd": reflect, "PreCompact": reflect, "SessionStart": session_start, "UserPromptSubmit": prompt}
    events = tuple(e for e in HOOK_EVENTS if install and wanted[e])
    entry, command = server_entry(), hook_command()

    def change(path: Path, what: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        if what == "mcp":
            return lambda data: with_server(data, entry, install, path)
        return lambda data: with_hooks(data, command, events, path)

    return [apply(path, change(path, what), dry_run) for path, what in config_files(client, scope, places)]


def configured(places: Places) -> dict[str, list[str]]:
    """What memx finds of itself in each client's files (for ``memx doctor``)."""
    found: dict[str, list[str]] = {}
    for client in CLIENTS:
        for scope in ("user", "project"):
            try:
                files = config_files(client, scope, places)
            except InvalidInputError:
                continue
            for path, what in files:
                try:
                    data = _load(path)
                except InvalidInputError:
                    found.setdefault(client, []).append(f"{path}: not valid JSON")
                    continue
                if what == "mcp" and SERVER_NAME in (data.get("mcpServers") or {}):
                    found.setdefault(client, []).append(f"server in {path}")
                if what == "hooks":
                    events = [e for e in HOOK_EVENTS if MARKER in json.dumps((data.get("hooks") or {}).get(e, []))]
                    if events:
                        found.setdefault(client, []).append(f"hooks {', '.join(events)} in {path}")
    return found
