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

from ...clients import Places, Wiring, claude_code, edits
from ...domain.errors import InvalidInputError
from ...files import atomic_write


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


def with_server(
    data: dict[str, Any], entry: dict[str, Any], install: bool, path: Path, key: str = "mcpServers"
) -> dict[str, Any]:
    return edits.with_server(data, entry, install, path, key)


def with_hooks(data: dict[str, Any], command: str, events: tuple[str, ...], path: Path) -> dict[str, Any]:
    """Claude Code's hooks: memx's entries replaced by one for each of ``events`` (none: removed)."""
    wiring = Wiring(True, {}, command, (), events)
    return dict(claude_code.files(Places(path.parent, path.parent), "user")[1].change(data, wiring, path))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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


def apply_toml(path: Path, change: Callable[[str], str], dry_run: bool) -> InstallResult:
    """Rewrite one TOML file with ``change`` (its text to its text), only if its meaning differs."""
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    after = change(before)
    if before and after and tomllib.loads(before) == tomllib.loads(after):
        return InstallResult(path, False, "", None)
    return _write(path, before, after, dry_run)
