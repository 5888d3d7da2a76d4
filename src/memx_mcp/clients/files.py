"""Changing a client's configuration file: JSON (with a refusal for files with comments, which a rewrite
would lose), Codex's TOML edited as text, Claude Code's hooks and approvals; a backup, a diff, and nothing
written when nothing changes."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from ..files import atomic_write
from .common import HOOK_EVENTS, MARKER, REFLECT_EVENTS, SERVER_NAME
from .launch import Entry


@dataclass(frozen=True)
class InstallResult:
    path: Path
    changed: bool
    diff: str
    backup: Path | None
    removed: bool = False  # uninstall deleted a file that install had created


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _without_comments(text: str) -> str:
    """JSON with comments (Zed's and VS Code's settings) as plain JSON, strings left whole."""
    plain = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return re.sub(r",(\s*[}\]])", r"\1", plain)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text or "{}")
    except ValueError as exc:
        try:
            json.loads(_without_comments(text) or "{}")
        except ValueError:
            raise InvalidInputError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
        raise InvalidInputError(
            f"{path} has comments, which rewriting it would lose; nothing was changed. Add memx by hand: "
            "`memx install CLIENT --dry-run --json` prints the entry"
        ) from exc
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInputError(f'{path}: the "{key}" entry is not an object; nothing was changed')
    return value


def with_server(
    data: dict[str, Any], entry: dict[str, Any], install: bool, path: Path, key: str = "mcpServers"
) -> dict[str, Any]:
    updated: dict[str, Any] = json.loads(json.dumps(data))
    servers = _object(updated, key, path)
    if install:
        servers[SERVER_NAME] = entry
    else:
        servers.pop(SERVER_NAME, None)
        if not servers:
            updated.pop(key)
    return updated


def with_approval(data: dict[str, Any], install: bool) -> dict[str, Any]:
    """Claude Code's ``enabledMcpjsonServers`` with memx in it (or out of it); other names kept."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    names = updated.get("enabledMcpjsonServers", [])
    names = [n for n in names if n != SERVER_NAME] if isinstance(names, list) else []
    if install:
        names.append(SERVER_NAME)
    if names:
        updated["enabledMcpjsonServers"] = names
    else:
        updated.pop("enabledMcpjsonServers", None)
    return updated


def is_memx_hook(command: str) -> bool:
    return MARKER in command


def with_hooks(data: dict[str, Any], command: str, events: tuple[str, ...], path: Path) -> dict[str, Any]:
    """memx's own hook entries replaced by one for each of ``events`` (none: removed); others kept."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    hooks = _object(updated, "hooks", path)
    for event in HOOK_EVENTS:
        kept = []
        for group in (g for g in hooks.get(event, []) if isinstance(g, dict)):
            inner = [h for h in group.get("hooks", []) if not is_memx_hook(str(h.get("command", "")))]
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


# Codex keeps TOML; memx edits only its own table, as text, so every other line stays as the user wrote it.
_TABLE = re.compile(r"^\s*\[\s*mcp_servers\.(?:memx|\"memx\")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
_HEADER = re.compile(r"^\s*\[")


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def with_toml_server(text: str, entry: Entry | None, path: Path) -> str:
    """``text`` with memx's ``[mcp_servers.memx]`` table replaced by ``entry`` (None: removed)."""
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{path} is not valid TOML ({exc}); fix it first, nothing was changed") from exc
    lines, kept, inside = text.splitlines(), [], False
    for line in lines:
        if _HEADER.match(line):
            inside = bool(_TABLE.match(line))
        if not inside:
            kept.append(line)
    body = "\n".join(kept).rstrip()
    remaining = tomllib.loads(body + "\n") if body else {}
    if SERVER_NAME in (remaining.get("mcp_servers") or {}):
        raise InvalidInputError(f"{path} defines mcp_servers.memx inline; edit it by hand, nothing was changed")
    if entry is not None:
        block = [f"[mcp_servers.{SERVER_NAME}]", f"command = {_toml_string(entry.command)}"]
        block.append("args = [" + ", ".join(_toml_string(a) for a in entry.args) + "]")
        if entry.env:
            block.append("env = { " + ", ".join(f"{k} = {_toml_string(v)}" for k, v in entry.env.items()) + " }")
        body = (body + "\n\n" if body else "") + "\n".join(block)
    result = body + "\n" if body else ""
    if entry is None and SERVER_NAME not in (parsed.get("mcp_servers") or {}):
        return text
    return result


def _write(path: Path, before: str, after: str, dry_run: bool) -> InstallResult:
    if before == after:
        return InstallResult(path, False, "", None)
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), str(path), str(path)))
    if dry_run:
        return InstallResult(path, True, diff, None)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.memx-backup-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    if not after:  # uninstall took out the last of what install had put in a file of its own
        path.unlink()
        return InstallResult(path, True, diff, backup, removed=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, after, mode=(path.stat().st_mode & 0o777) if path.exists() else 0o644)
    return InstallResult(path, True, diff, backup)


def apply(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], dry_run: bool) -> InstallResult:
    """Rewrite one JSON file with ``change``: atomically, after a backup, only if something differs."""
    data = _load(path)
    after = change(data)
    if after == data:
        return InstallResult(path, False, "", None)
    before_text = _dump(data) if path.exists() else ""
    return _write(path, before_text, _dump(after) if after else "", dry_run)


def _apply_toml(path: Path, entry: Entry | None, dry_run: bool) -> InstallResult:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    after = with_toml_server(before, entry, path)
    if before and after and tomllib.loads(before) == tomllib.loads(after):
        return InstallResult(path, False, "", None)
    return _write(path, before, after, dry_run)
