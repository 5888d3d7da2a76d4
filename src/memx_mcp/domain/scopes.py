"""Hierarchical scopes: ``global`` → ``project:NAME`` → ``project:NAME/workspace:NAME``.

An upper scope is visible from the scopes below it, never the reverse. A detected project's NAME says where
the repository is, not only what it is called (``project:api@github.com/acme``, ``domain/projects.py``), so
two repositories of one name never share a scope; a person may still type ``project:api``.

Pure: what git says of a folder (``Checkout``) is read by ``adapters/git.py`` behind ``ports.Repositories``;
the scope is decided here from those facts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from .errors import InvalidScopeError
from .projects import MAX_PROJECT_CHARS, Remote, commit_project, is_identity, parse_remote, path_project, remote_project
from .projects import short_name as _short

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
        for name, placed in ((self.project, True), (self.workspace, False)):
            if name is None:
                continue
            identity = placed and len(name) <= MAX_PROJECT_CHARS and is_identity(name)
            if not (identity or _NAME.fullmatch(name)) or unicodedata.normalize("NFKC", name) != name:
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

    @property
    def short(self) -> str:
        """The project's name without where it is (``api`` for ``api@github.com/acme``); '' for global."""
        return "" if self.project is None else _short(self.project)

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


def parse_scope(text: str, current: Scope | None = None, known: Iterable[str] = ()) -> Scope:
    """Parse the long form, or the short forms ``workspace:NAME`` (within the current project) and
    ``project``/``workspace`` (the current project or workspace). Full-width and other compatibility forms
    of letters are read as the letters themselves (``ｐｒｏｊ`` is ``proj``), so one name means one scope.

    ``project:api`` without a place (``@…``) is the scope stored under exactly that name if ``known`` (the
    stored scopes) has it; else the current project if that is called ``api``; else the one stored project
    called ``api``; several are refused, naming them; none leaves the name as typed."""
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
    project, sep, workspace = body.partition("/workspace:")
    if "/" in project and not is_identity(project):
        raise InvalidScopeError(f"invalid scope {text!r}: expected project:NAME/workspace:NAME")
    project = _resolve_short(project, current, known)
    return Scope(project, workspace) if sep else Scope(project)


def _resolve_short(project: str, current: Scope | None, known: Iterable[str]) -> str:
    if "@" in project or not project:
        return project
    stored = {Scope(p).project for p in _projects(known)}
    if project in stored:
        return project
    if current is not None and current.project is not None and current.short == project:
        return current.project
    named = sorted(p for p in stored if p is not None and is_identity(p) and _short(p) == project)
    if len(named) > 1:
        listed = ", ".join(f"project:{p}" for p in named)
        raise InvalidScopeError(f"project:{project} names several projects ({listed}): write one in full")
    return named[0] if named else project


def _projects(known: Iterable[str]) -> set[str]:
    """The project names of stored scopes (``project:NAME`` and ``project:NAME/workspace:W``)."""
    found = set()
    for scope in known:
        if scope.startswith("project:"):
            name = scope.removeprefix("project:").partition("/workspace:")[0]
            if name and (is_identity(name) or _NAME.fullmatch(name)):
                found.add(name)
    return found


def safe_name(name: str) -> str:
    """Turn a folder, remote or branch name into a valid scope name."""
    cleaned = _UNSAFE.sub("-", unicodedata.normalize("NFKC", name).strip()).strip("-")[:100]
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    return cleaned if cleaned.strip(".") else "unnamed"


@dataclass(frozen=True)
class Checkout:
    """What git says of the repository a folder is in, read by ``adapters/git.py``: the facts a project's
    identity (``project_identity``) and its workspace (``scope_of``) are decided from, here, running nothing.
    Paths are as git gives them (absolute)."""

    top: str  # the repository's top folder (``git rev-parse --show-toplevel``)
    common: str = ""  # its common git folder ('' unknown): a linked worktree's is its main checkout's ``.git``
    remote_url: str = ""  # the URL of the remote that names it (``naming_remote``); '' for none
    first_commit: str = ""  # the oldest root commit; '' without a commit, or not read (a remote names it)
    branch: str = ""  # the branch checked out; 'HEAD' when detached, '' unknown
    place: str = ""  # ``main_checkout`` with its links resolved: read only for a repository without a commit


def naming_remote(names: Iterable[str]) -> str | None:
    """The remote that names the project: ``origin``, else the first by name; None without one."""
    ordered = sorted(names, key=lambda r: (r != "origin", r))
    return ordered[0] if ordered else None


def needs_history(remote_url: str) -> bool:
    """Whether the first commit (or the folder) is what tells the project apart: no remote names a place."""
    return parse_remote(remote_url) is None


def main_checkout(top: str, common: str) -> PurePath:
    """The folder of the main checkout: a linked worktree's is the one its common ``.git`` is in."""
    return PurePath(common).parent if common and PurePath(common).name == ".git" else PurePath(top)


def project_identity(checkout: Checkout) -> str:
    """The project name of the repository (``domain/projects.py``): its remote, else its first commit, else
    its folder (``place``). A remote that is a local folder names the project (as before) but places it by
    the first commit: a clone of it is its project."""
    found = parse_remote(checkout.remote_url)
    if found is not None:
        return remote_project(Remote(found.host, found.owner, safe_name(found.name)))
    main = main_checkout(checkout.top, checkout.common)
    local = checkout.remote_url.rstrip("/\\").rsplit("/", 1)[-1].removesuffix(".git")
    name = safe_name((local or main.name).replace("@", "-"))  # a linked worktree: its main checkout's name
    if checkout.first_commit:
        return commit_project(name, checkout.first_commit)
    return path_project(name, checkout.place)


def scope_of(checkout: Checkout | None) -> Scope:
    """Project from the repository (``project_identity``), workspace from the branch (or the linked
    worktree's folder). Outside a repository (None): global."""
    if checkout is None:
        return Scope()
    project = project_identity(checkout)
    top = PurePath(checkout.top)
    if checkout.branch and checkout.branch != "HEAD":
        return Scope(project, safe_name(checkout.branch))
    common = checkout.common
    return Scope(project, safe_name(top.name)) if common and PurePath(common).parent != top else Scope(project)
