"""What identifies a project: more than its repository's name (issue 31). Pure: the caller reads git.

A project's scope name is ``NAME@WHERE``, human-readable and unique:

- ``api@github.com/acme``: the repository's remote, normalised (host and owner path in lower case, no user,
  password, token or port; ``git@github.com:acme/api.git``, ``ssh://git@github.com:22/acme/api`` and
  ``https://user:token@github.com/Acme/API`` are one project). The remote is what a person calls the project,
  it is the same on every clone and on every teammate's machine (shallow clones too), and unlike the first
  commit it tells a fork (``evil/api``) from its upstream (``acme/api``).
- ``api@commit-0123456789ab``: a repository without a remote (or whose remote is a local folder): its first
  (root) commit, which every clone and worktree of it shares and a second repository of the same name has not.
- ``api@path-0123456789ab``: a repository with no commit yet: a hash of its absolute top folder.

``NAME`` alone (``project:api``) is the name memx used before it told repositories apart, and whatever a
person names by hand; ``short_name`` gives a project's ``NAME`` back."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

MAX_PROJECT_CHARS = 200
_SEGMENT = re.compile(r"[^\w.+\-]+", re.UNICODE)
_HOST = re.compile(r"[^a-z0-9.\-]+")
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")  # git@host:owner/name.git
_IDENTITY = re.compile(r"^[\w.+\-]{1,100}@[\w.\-]{1,100}(?:/[\w.+\-]{1,100})*$", re.UNICODE)


@dataclass(frozen=True)
class Remote:
    """A remote reduced to what names a project: host, owner path and repository name, lower case."""

    host: str
    owner: str  # "acme", or "group/subgroup" on GitLab; "" when the remote has none
    name: str


def _segment(text: str) -> str:
    cleaned = _SEGMENT.sub("-", unicodedata.normalize("NFKC", unquote(text)).strip()).strip("-.")
    return re.sub(r"\.{2,}", ".", cleaned)


def parse_remote(url: str) -> Remote | None:
    """The project a remote URL names (ssh, scp-like, https, git), or None for a local folder, a bundle or
    what does not read as a remote. Credentials, ports, queries and ``.git`` never reach the result."""
    raw = url.strip()
    if not raw or raw.startswith(("/", ".", "~", "file:")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        return None
    if "://" in raw:
        parts = urlsplit(raw)
        host, path = parts.hostname or "", parts.path
    else:
        scp = _SCP.match(raw)
        if scp is None:
            return None
        host, path = scp.group("host"), scp.group("path")
    host = _HOST.sub("", host.lower()).strip(".-")
    segments = [_segment(s) for s in path.replace("\\", "/").split("/")]
    segments = [s for s in segments if s]
    if not host or not segments:
        return None
    name = segments[-1].lower().removesuffix(".git") or "unnamed"
    owner = "/".join(s.lower().lstrip("~") for s in segments[:-1])
    return Remote(host, owner, name)


def _bounded(name: str, where: str) -> str:
    text = f"{name}@{where}"
    if len(text) <= MAX_PROJECT_CHARS:
        return text
    digest = hashlib.sha256(where.encode("utf-8")).hexdigest()[:12]
    return f"{name[:100]}@{where.split('/', 1)[0][:60]}/{digest}"


def remote_project(remote: Remote) -> str:
    """``api@github.com/acme``."""
    where = f"{remote.host}/{remote.owner}" if remote.owner else remote.host
    return _bounded(remote.name[:100], where)


def commit_project(name: str, root_commit: str) -> str:
    """``api@commit-0123456789ab``: a repository without a remote, by its first commit."""
    return f"{name}@commit-{root_commit.strip().lower()[:12]}"


def path_project(name: str, top: str) -> str:
    """``api@path-0123456789ab``: a repository without a commit, by its absolute top folder."""
    return f"{name}@path-{hashlib.sha256(top.encode('utf-8', 'replace')).hexdigest()[:12]}"


def is_identity(project: str) -> bool:
    """Whether a project name says where the project is (``api@github.com/acme``), not only its name."""
    return bool(_IDENTITY.fullmatch(project))


def short_name(project: str) -> str:
    """``api`` for ``api@github.com/acme``; a name without a place is its own short name."""
    return project.split("@", 1)[0] if is_identity(project) else project


def where(project: str) -> str:
    """``github.com/acme`` for ``api@github.com/acme``, '' for a bare name."""
    return project.split("@", 1)[1] if is_identity(project) else ""
