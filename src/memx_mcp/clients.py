"""Client configuration: ``memx install claude-code`` adds the Reflector's session-end hooks to Claude
Code's settings without touching anything else, keeps a backup, shows the diff, and is idempotent."""

from __future__ import annotations

import difflib
import json
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import InvalidInputError

HOOK_EVENTS = ("SessionEnd", "PreCompact")
MARKER = "hook claude-code"


def hook_command() -> str:
    """The command Claude Code should run: the installed ``memx`` if there is one, else through uvx."""
    found = shutil.which("memx")
    if found and ".cache/uv" not in found and "/uv/archive" not in found:
        return f"{found} hook claude-code"
    beside = Path(sys.executable).parent / "memx"
    if beside.exists() and "uv" not in str(beside):
        return f"{beside} hook claude-code"
    return "uvx --from memx-mcp memx hook claude-code"


def claude_settings_path(scope: str, home: Path | None = None, project: Path | None = None) -> Path:
    if scope == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    if scope == "project":
        return (project or Path.cwd()) / ".claude" / "settings.json"
    raise InvalidInputError("--scope must be user or project")


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


def _with_hooks(settings: dict[str, Any], command: str, install: bool) -> dict[str, Any]:
    updated: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = updated.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInputError('the settings\' "hooks" entry is not an object; nothing was changed')
    for event in HOOK_EVENTS:
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict)]
        kept = []
        for g in groups:  # drop memx's own entries; keep every other hook as it was
            inner = [h for h in g.get("hooks", []) if MARKER not in str(h.get("command", ""))]
            if inner or not g.get("hooks"):
                kept.append({**g, "hooks": inner})
        if install:
            kept.append({"hooks": [{"type": "command", "command": command, "timeout": 60}]})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        updated.pop("hooks", None)
    return updated


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def configure_claude_code(
    path: Path, *, install: bool = True, dry_run: bool = False, command: str | None = None
) -> InstallResult:
    before = _load(path)
    after = _with_hooks(before, command or hook_command(), install)
    old_text = _dump(before) if path.exists() else ""
    new_text = _dump(after)
    if before == after and path.exists():
        return InstallResult(path, False, "", None)
    diff = "".join(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True), str(path), str(path)))
    if dry_run:
        return InstallResult(path, True, diff, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.memx-backup-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    tmp = path.with_suffix(".memx-tmp")
    tmp.write_text(new_text, encoding="utf-8")
    tmp.replace(path)
    return InstallResult(path, True, diff, backup)
