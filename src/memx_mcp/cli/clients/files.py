"""Changing a client's configuration file: JSON (with a refusal for files with comments, which a rewrite
would lose), Codex's TOML edited as text, Claude Code's hooks and approvals; a backup, a diff, and nothing
written when nothing changes."""

from __future__ import annotations

import difflib
import itertools
import json
import re
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ...domain.errors import InvalidInputError
from ...files import atomic_write
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


def is_memx_hook(command: str, client: str = "claude-code") -> bool:
    return (MARKER if client == "claude-code" else f"hook {client}") in command


def with_hooks(
    data: dict[str, Any],
    command: str,
    events: tuple[str, ...],
    path: Path,
    known: tuple[str, ...] = HOOK_EVENTS,
    client: str = "claude-code",
) -> dict[str, Any]:
    """memx's own hook entries replaced by one for each of ``events`` (none: removed); others kept. Claude
    Code's and Gemini CLI's shape (event → groups → hooks); Gemini counts a timeout in milliseconds."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    hooks = _object(updated, "hooks", path)
    for event in known:
        kept = []
        for group in (g for g in hooks.get(event, []) if isinstance(g, dict)):
            inner = [h for h in group.get("hooks", []) if not is_memx_hook(str(h.get("command", "")), client)]
            if inner or not group.get("hooks"):
                kept.append({**group, "hooks": inner})
        if event in events:
            seconds = 60 if event in REFLECT_EVENTS or client != "claude-code" else 10
            hook: dict[str, Any] = {"type": "command", "command": command}
            if client == "gemini":
                hook |= {"name": "memx", "timeout": seconds * 1000}
            else:
                hook["timeout"] = seconds
            kept.append({"hooks": [hook]})
        _put(hooks, event, kept)
    if not hooks:
        updated.pop("hooks")
    return updated


def _put(hooks: dict[str, Any], event: str, entries: list[Any]) -> None:
    """An event keeps its entries, or goes when none is left."""
    if entries:
        hooks[event] = entries
    else:
        hooks.pop(event, None)


CURSOR_EVENTS = ("stop", "sessionEnd")


def with_cursor_hooks(data: dict[str, Any], command: str, events: tuple[str, ...], path: Path) -> dict[str, Any]:
    """Cursor's ``hooks.json`` (``{"version": 1, "hooks": {event: [{"command": …}]}}``, cursor.com/docs/
    agent/hooks) with memx's entries replaced by one per event of ``events`` (none: removed). A file left
    with nothing but its version goes away: install wrote it."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    hooks = _object(updated, "hooks", path)
    for event in CURSOR_EVENTS:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise InvalidInputError(f'{path}: the "{event}" hooks are not a list; nothing was changed')
        kept = [h for h in entries if not (isinstance(h, dict) and is_memx_hook(str(h.get("command", "")), "cursor"))]
        if event in events:
            kept.append({"command": command})
        _put(hooks, event, kept)
    if not hooks:
        updated.pop("hooks")
        if set(updated) == {"version"}:
            updated.pop("version")
    elif "version" not in updated:
        updated = {"version": 1, **updated}
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


_NOTIFY = re.compile(r"^\s*notify\s*=")


def _is_memx_notify(value: Any) -> bool:
    words = [str(w) for w in value] if isinstance(value, list) else []
    return any(a == "hook" and b == "codex" for a, b in itertools.pairwise(words))


def _one_line(line: str) -> Any:
    try:
        return tomllib.loads(line + "\n").get("notify")
    except tomllib.TOMLDecodeError:  # the first line of a value written over several
        return None


def with_toml_notify(text: str, notify: list[str] | None, path: Path) -> str:
    """``text`` with Codex's top-level ``notify`` set to memx's program (None: memx's taken out). Codex runs
    one notify program (openai/codex docs/config.md), so one the user set is never replaced: memx refuses,
    and says how to go on. Codex starts the program and does not wait for it (codex-rs user_notification.rs:
    fire and forget, a program that cannot start is a warning in its log), so it fails open as it is."""
    parsed = tomllib.loads(text) if text.strip() else {}
    current = parsed.get("notify")
    if current is not None and not _is_memx_notify(current):
        if notify is None:
            return text
        raise InvalidInputError(
            f"{path} already sets notify = {json.dumps(current)}, and Codex runs one notify program; memx "
            "will not replace yours, nothing was changed. Run `memx install codex --no-reflect` for the "
            'server alone, or call `memx hook codex "$1"` from your own notify program'
        )
    lines = text.splitlines()
    first_table = next((i for i, line in enumerate(lines) if _HEADER.match(line)), len(lines))
    if current is not None:
        at = [i for i, line in enumerate(lines[:first_table]) if _NOTIFY.match(line)]
        if len(at) != 1 or _one_line(lines[at[0]]) != current:
            raise InvalidInputError(f"{path}: memx's notify is not on one line any more; edit it by hand")
        del lines[at[0]]
        first_table -= 1
        after = lines[at[0] : at[0] + 2]
        if len(after) == 2 and not after[0].strip() and _HEADER.match(after[1]):
            del lines[at[0]]  # the blank line install put after it
            first_table -= 1
    if notify is not None:
        lines.insert(first_table, "notify = [" + ", ".join(_toml_string(a) for a in notify) + "]")
        if first_table + 1 < len(lines):
            lines.insert(first_table + 1, "")  # a blank line before the table that follows
    body = "\n".join(lines).strip("\n")
    return body + "\n" if body else ""


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


def _apply_toml(path: Path, entry: Entry | None, dry_run: bool, notify: list[str] | None = None) -> InstallResult:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    after = with_toml_notify(with_toml_server(before, entry, path), notify, path)
    if before and after and tomllib.loads(before) == tomllib.loads(after):
        return InstallResult(path, False, "", None)
    return _write(path, before, after, dry_run)
