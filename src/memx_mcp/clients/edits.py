"""memx's entries in a client's configuration, as pure changes of its content: a JSON object's server
entry, hooks in the grouped shape (Claude Code, Codex, Gemini CLI, VS Code: event → groups → hooks) or the
flat one (Cursor, Copilot CLI: event → hooks), Codex's TOML edited as text. Every other entry is kept;
memx's are found by the words ``hook CLIENT`` in their command."""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..domain.errors import InvalidInputError
from .model import ConfigFile, Found, Wiring

SERVER_NAME = "memx"
FAIL_OPEN = " || exit 0"  # a hook whose command cannot start still exits 0 (sh and cmd alike)


def marker(client: str) -> str:
    return f"hook {client}"


def is_memx_hook(command: str, client: str) -> bool:
    return marker(client) in command


def _copy(data: Mapping[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInputError(f'{path}: the "{key}" entry is not an object; nothing was changed')
    return value


def with_server(
    data: Mapping[str, Any], entry: Mapping[str, Any], install: bool, path: Path, key: str = "mcpServers"
) -> dict[str, Any]:
    updated = _copy(data)
    servers = _object(updated, key, path)
    if install:
        servers[SERVER_NAME] = dict(entry)
    else:
        servers.pop(SERVER_NAME, None)
        if not servers:
            updated.pop(key)
    return updated


def server_in(data: Mapping[str, Any], key: str = "mcpServers") -> Mapping[str, Any] | None:
    servers = data.get(key)
    found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return found if isinstance(found, dict) else None


def with_approval(data: Mapping[str, Any], install: bool) -> dict[str, Any]:
    """Claude Code's ``enabledMcpjsonServers`` with memx in it (or out of it); other names kept."""
    updated = _copy(data)
    names = updated.get("enabledMcpjsonServers", [])
    names = [n for n in names if n != SERVER_NAME] if isinstance(names, list) else []
    if install:
        names.append(SERVER_NAME)
    if names:
        updated["enabledMcpjsonServers"] = names
    else:
        updated.pop("enabledMcpjsonServers", None)
    return updated


def _put(hooks: dict[str, Any], event: str, entries: list[Any]) -> None:
    """An event keeps its entries, or goes when none is left."""
    if entries:
        hooks[event] = entries
    else:
        hooks.pop(event, None)


def with_grouped_hooks(
    data: Mapping[str, Any],
    client: str,
    events: tuple[str, ...],
    known: tuple[str, ...],
    path: Path,
    entry: Callable[[str], dict[str, Any]],
) -> dict[str, Any]:
    """memx's hook entries of ``client`` replaced by ``entry(event)`` for each of ``events`` (none: removed)
    among the ``known`` events; the user's kept. The shape event → [{matcher?, hooks: [{type, command …}]}]."""
    updated = _copy(data)
    hooks = _object(updated, "hooks", path)
    for event in known:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInputError(f'{path}: the "{event}" hooks are not a list; nothing was changed')
        kept = []
        for group in (g for g in groups if isinstance(g, dict)):
            inner = [
                h
                for h in group.get("hooks", [])
                if not (isinstance(h, dict) and is_memx_hook(str(h.get("command", "")), client))
            ]
            if inner or not group.get("hooks"):
                kept.append({**group, "hooks": inner})
        if event in events:
            kept.append({"hooks": [entry(event)]})
        _put(hooks, event, kept)
    if not hooks:
        updated.pop("hooks")
    return updated


def grouped_hooks_in(data: Mapping[str, Any], client: str, known: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """memx's hook commands of ``client`` in the grouped shape, each with its events."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    pairs = [
        (event, str(h.get("command", "")))
        for event in known
        for g in (hooks.get(event) or [] if isinstance(hooks.get(event), list) else [])
        if isinstance(g, dict)
        for h in g.get("hooks") or []
        if isinstance(h, dict) and is_memx_hook(str(h.get("command", "")), client)
    ]
    return {c: tuple(e for e, d in pairs if d == c) for c in dict.fromkeys(c for _, c in pairs)}


def with_flat_hooks(
    data: Mapping[str, Any],
    client: str,
    events: tuple[str, ...],
    known: tuple[str, ...],
    path: Path,
    entry: Callable[[str], dict[str, Any]],
    command_keys: tuple[str, ...] = ("command",),
) -> dict[str, Any]:
    """The flat shape ``{"version": 1, "hooks": {event: [{command …}]}}`` (Cursor's hooks.json, Copilot CLI's
    hook files), memx's entries replaced by ``entry(event)`` for each of ``events``. A file left with nothing
    but its version goes away: install wrote it."""
    updated = _copy(data)
    hooks = _object(updated, "hooks", path)

    def mine(h: Any) -> bool:
        return isinstance(h, dict) and any(is_memx_hook(str(h.get(k, "")), client) for k in command_keys)

    for event in known:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise InvalidInputError(f'{path}: the "{event}" hooks are not a list; nothing was changed')
        kept = [h for h in entries if not mine(h)]
        if event in events:
            kept.append(entry(event))
        _put(hooks, event, kept)
    if not hooks:
        updated.pop("hooks")
        if set(updated) == {"version"}:
            updated.pop("version")
    elif "version" not in updated:
        updated = {"version": 1, **updated}
    return updated


def flat_hooks_in(
    data: Mapping[str, Any], client: str, known: tuple[str, ...], command_keys: tuple[str, ...] = ("command",)
) -> dict[str, tuple[str, ...]]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    pairs = [
        (event, str(h.get(k, "")))
        for event in known
        for h in (hooks.get(event) or [] if isinstance(hooks.get(event), list) else [])
        if isinstance(h, dict)
        for k in command_keys[:1]
        if is_memx_hook(str(h.get(k, "")), client)
    ]
    return {c: tuple(e for e, d in pairs if d == c) for c in dict.fromkeys(c for _, c in pairs)}


def found_json(
    data: Any, key: str | None, hooks: Callable[[Mapping[str, Any]], dict[str, tuple[str, ...]]] | None = None
) -> Found:
    if not isinstance(data, dict):
        return Found()
    return Found(server_in(data, key) if key else None, hooks(data) if hooks else {})


# -- Codex's TOML, edited as text so every other line stays as the user wrote it ---------------------------

_TABLE = re.compile(r"^\s*\[\s*mcp_servers\.(?:memx|\"memx\")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
_HEADER = re.compile(r"^\s*\[")


def toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def with_toml_server(text: str, entry: Mapping[str, Any] | None, path: Path) -> str:
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
        block = [f"[mcp_servers.{SERVER_NAME}]", f"command = {toml_string(str(entry['command']))}"]
        block.append("args = [" + ", ".join(toml_string(str(a)) for a in entry.get("args", ())) + "]")
        env = entry.get("env") or {}
        if env:
            block.append("env = { " + ", ".join(f"{k} = {toml_string(str(v))}" for k, v in env.items()) + " }")
        body = (body + "\n\n" if body else "") + "\n".join(block)
    result = body + "\n" if body else ""
    if entry is None and SERVER_NAME not in (parsed.get("mcp_servers") or {}):
        return text
    return result


def toml_server_in(text: str) -> Mapping[str, Any] | None:
    try:
        servers: Any = tomllib.loads(text).get("mcp_servers")
    except tomllib.TOMLDecodeError:
        return None
    found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return found if isinstance(found, dict) else None


_NOTIFY = re.compile(r"^\s*notify\s*=")


def is_memx_notify(value: Any, client: str = "codex") -> bool:
    words = [str(w) for w in value] if isinstance(value, list) else []
    return any(a == "hook" and b == client for a, b in itertools.pairwise(words))


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
    if current is not None and not is_memx_notify(current):
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
        lines.insert(first_table, "notify = [" + ", ".join(toml_string(a) for a in notify) + "]")
        if first_table + 1 < len(lines):
            lines.insert(first_table + 1, "")  # a blank line before the table that follows
    body = "\n".join(lines).strip("\n")
    return body + "\n" if body else ""


_FEATURES = re.compile(r"^\s*\[\s*features\s*\]\s*(?:#.*)?$")
_MEMX_FLAG = "  # memx"


def with_toml_feature(text: str, flag: str, on: bool, path: Path) -> str:
    """``[features] FLAG = true`` set (``on``) or, where memx set it, taken out again. A value the user set
    is left alone either way: memx marks its own line with a comment."""
    parsed = tomllib.loads(text) if text.strip() else {}
    features = parsed.get("features")
    current = features.get(flag) if isinstance(features, dict) else None
    lines = text.splitlines()
    ours = [i for i, line in enumerate(lines) if line.strip().startswith(f"{flag} =") and line.endswith(_MEMX_FLAG)]
    if not on:
        for i in reversed(ours):
            del lines[i]
        table = next((i for i, line in enumerate(lines) if _FEATURES.match(line)), None)
        if ours and table is not None:
            rest = lines[table + 1 :]
            end = next((j for j, line in enumerate(rest) if _HEADER.match(line)), len(rest))
            if not any(line.strip() for line in rest[:end]):  # an empty [features] table memx added
                del lines[table : table + 1 + end]
        body = "\n".join(lines).strip("\n")
        return body + "\n" if body else ""
    if current is not None:
        return text  # set already, by the user or by memx
    if isinstance(features, dict) or any(_FEATURES.match(line) for line in lines):
        table = next(i for i, line in enumerate(lines) if _FEATURES.match(line))
        lines.insert(table + 1, f"{flag} = true{_MEMX_FLAG}")
    else:
        if lines and lines[-1].strip():
            lines.append("")
        lines += ["[features]", f"{flag} = true{_MEMX_FLAG}"]
    body = "\n".join(lines).strip("\n")
    result = body + "\n"
    try:
        tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{path}: memx could not set [features] {flag}; edit it by hand ({exc})") from exc
    return result


def server_file(path: Path, key: str = "mcpServers", typed: bool = False) -> ConfigFile:
    """A JSON file holding memx's server entry under ``key`` (``typed``: with ``"type": "stdio"``)."""

    def change(data: Any, wiring: Wiring, at: Path) -> Any:
        entry = {"type": "stdio", **wiring.server} if typed else wiring.server
        return with_server(data, entry, wiring.install, at, key)

    def find(data: Any) -> Found:
        return found_json(data, key)

    return ConfigFile(path, "json", change, find)


def user_only(title: str, scope: str) -> None:
    if scope == "project":
        raise InvalidInputError(f"{title} has no project configuration; use --scope user")
