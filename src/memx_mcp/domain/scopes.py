"""Hierarchical scopes: ``global`` → ``project:NAME`` → ``project:NAME/workspace:NAME``.

An upper scope is visible from the scopes below it, never the reverse."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidScopeError

GLOBAL = "global"
_NAME = re.compile(r"^[\w.@+\-]{1,100}$", re.UNICODE)
_UNSAFE = re.compile(r"[^\w.@+\-]+", re.UNICODE)


@dataclass(frozen=True, order=True)
class Scope:
    project: str | None = None
    workspace: str | None = None

    def __post_init__(self) -> None:
        if self.workspace is not None and self.project is None:
            raise InvalidScopeError("a workspace scope needs a project")
        for name in (self.project, self.workspace):
            if name is None:
                continue
            if not _NAME.fullmatch(name) or unicodedata.normalize("NFKC", name) != name:
                raise InvalidScopeError(
                    f"invalid scope name {name!r}: use letters, digits, '.', '_', '-', '@' or '+' (≤ 100)"
                )
            if ".." in name or name.strip(".") == "":  # reads like a path upward, and looks like none
                raise InvalidScopeError(f"invalid scope name {name!r}: no '..' and not only dots")

    def __str__(self) -> str:
        if self.project is None:
            return GLOBAL
        if self.workspace is None:
            return f"project:{self.project}"
        return f"project:{self.project}/workspace:{self.workspace}"

    @property
    def is_global(self) -> bool:
        return self.project is None

    def project_scope(self) -> Scope:
        return Scope(self.project)

    def owns(self, scope: str) -> bool:
        """Whether a bullet of ``scope`` belongs where this scope works: this scope itself or, from a
        workspace, its project (new bullets go to the project scope, so a branch sees them as its own)."""
        return scope in (str(self), str(self.project_scope()))

    def boost(self, scope: str, own: float, project: float) -> float:
        """The multiplier for a bullet of ``scope`` seen from here: ``own`` for this very scope, ``project``
        for this workspace's project, 1.0 for anything else (global and other projects)."""
        if scope == str(self):
            return own
        return project if self.workspace is not None and scope == str(self.project_scope()) else 1.0

    def visible(self) -> tuple[str, ...]:
        """This scope and every scope above it, nearest first."""
        chain = [str(self)]
        if self.workspace is not None:
            chain.append(str(Scope(self.project)))
        if self.project is not None:
            chain.append(GLOBAL)
        return tuple(chain)


def parse_scope(text: str, current: Scope | None = None) -> Scope:
    """Parse the long form, or the short forms ``workspace:NAME`` (within the current project) and
    ``project``/``workspace`` (the current project or workspace). Full-width and other compatibility forms
    of letters are read as the letters themselves (``ｐｒｏｊ`` is ``proj``), so one name means one scope."""
    raw = unicodedata.normalize("NFKC", text).strip()
    if raw in ("", GLOBAL):
        return Scope()
    if raw in ("project", "workspace", "current"):
        if current is None or current.is_global:
            raise InvalidScopeError(f"scope {raw!r} needs a current project (run inside a git repository)")
        return current.project_scope() if raw == "project" else current
    if raw.startswith("workspace:"):
        if current is None or current.project is None:
            raise InvalidScopeError(f"{raw!r} needs a current project; write project:NAME/{raw}")
        return Scope(current.project, raw.removeprefix("workspace:"))
    if not raw.startswith("project:"):
        raise InvalidScopeError(
            f"invalid scope {text!r}: expected global, project:NAME, project:NAME/workspace:NAME or workspace:NAME"
        )
    body = raw.removeprefix("project:")
    project, sep, rest = body.partition("/")
    if not sep:
        return Scope(project)
    if not rest.startswith("workspace:"):
        raise InvalidScopeError(f"invalid scope {text!r}: expected project:NAME/workspace:NAME")
    return Scope(project, rest.removeprefix("workspace:"))


def safe_name(name: str) -> str:
    """Turn a folder, remote or branch name into a valid scope name."""
    cleaned = _UNSAFE.sub("-", unicodedata.normalize("NFKC", name).strip()).strip("-")[:100]
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    return cleaned if cleaned.strip(".") else "unnamed"


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def repository_root(cwd: Path) -> Path | None:
    """The top folder of the git repository ``cwd`` is in, if any."""
    top = _git(cwd, "rev-parse", "--show-toplevel") if cwd.is_dir() else None
    return Path(top) if top else None


def detect_scope(cwd: Path) -> Scope:
    """Project from the git repository (its origin remote's name, else its top folder), workspace from the
    branch (or the linked worktree's folder). Outside a repository: global."""
    if not cwd.is_dir():
        return Scope()
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if top is None:
        return Scope()
    remote = _git(cwd, "config", "--get", "remote.origin.url")
    name = remote.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") if remote else ""
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if not name and common:
        name = Path(common).parent.name  # a linked worktree: the main checkout names the project
    project = safe_name(name or Path(top).name)
    branch = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    if branch and branch != "HEAD":
        return Scope(project, safe_name(branch))
    return Scope(project, safe_name(Path(top).name)) if common and Path(common).parent != Path(top) else Scope(project)
