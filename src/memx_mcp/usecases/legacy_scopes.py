"""Bullets stored under a project's bare name, from before memx told repositories apart (issue 31): the
project scope was the repository's name, so ``project:api`` may hold the bullets of ``github.com/acme/api``
and of ``github.com/evil/api`` alike. They move to a project's identity (``project:api@github.com/acme``,
``domain/projects.py``) on this rule:

- **Automatically, one bullet at a time, on evidence.** When memx works in a repository, a bullet of
  ``project:NAME`` (or of one of its workspaces) whose NAME is the repository's name moves to the repository's
  identity when one of its origins is a session that ran there: the transcript the origin names
  (``session:ID`` or ``path:HASH``) is found in a client's session folder, and the folder it ran in (its
  ``cwd``) is, today, in a repository with the same identity, and no session of its origins ran in another
  one. A session that ran in another repository of the same name moves nothing here: that repository takes
  its bullets when memx meets it, whichever is met first; a bullet the Curator merged from sessions in both
  belongs to neither alone, and waits.
- **The rest only when the person says so.** A bullet with no such evidence (``remember``, an import, a
  transcript that is gone) stays where it is, seen by no repository, and memx says so in one line (``memx
  doctor``, the answers' ``scope_why``, the page); ``memx adopt project:NAME`` inside the repository moves
  all of them (and ``memx list --scope project:NAME`` shows them first).

Only this machine's store is read and moved: a team store's rows stay under the name the team configured
(``team_note``). Moves take the store's cross-process write lock and read the old scope again under it, so two processes
meeting the repository at once move each bullet once; a second run finds nothing to move (idempotent). A
move goes through the write path (``Draft.of``: the bullet's id, text, counts, vector and state stay) and
takes the conflict records between moved bullets along. The reflected-upto markers are keyed by transcript,
not by scope (``adapters/lance/reflections.py``): a session read before the move is not read again after it."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..domain.errors import InvalidScopeError
from ..domain.models import Bullet
from ..domain.projects import is_identity
from ..domain.scopes import Scope
from ..files import atomic_write
from ..ports import Store, Where
from .deps import Deps
from .reflect import SESSION_FOLDERS
from .writes import Draft
from .writing import checked, write

log = logging.getLogger(__name__)
LOCK_WAIT = 2.0  # seconds a meeting waits for another writer (a hook must not wait the store's 30 s)
HEAD_BYTES = 1 << 20  # where a transcript says the folder it ran in: its first lines
_CWD = re.compile(r'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')
_KEY = re.compile(r"^(session|path):([\w.\-]+)$")


@dataclass(frozen=True)
class Move:
    """What moving ``old`` (and its workspaces) to ``new`` did: bullets moved, and bullets left behind."""

    old: str
    new: str
    moved: int
    left: int


def legacy_scopes(stored: Iterable[str], project: Scope) -> list[str]:
    """The stored scopes that are ``project``'s bare name or one of its workspaces."""
    bare = f"project:{project.short}"
    return sorted(s for s in stored if s == bare or s.startswith(bare + "/workspace:"))


def _moved_scope(scope: str, project: Scope) -> str:
    workspace = scope.partition("/workspace:")[2]
    return str(Scope(project.project, workspace) if workspace else project.project_scope())


class Sessions:
    """The clients' transcripts on this machine, found by the key memx recorded as a bullet's origin, and
    the folder each ran in; read once per move."""

    def __init__(self, home: Path, detect: Callable[[Path], Scope]) -> None:
        self.detect = detect  # the scope of a folder's repository (``Workspace.detect``)
        self.by_key: dict[str, Path] = {}
        for folder in SESSION_FOLDERS:
            root = home / folder
            for path in root.rglob("*") if root.is_dir() else ():
                if path.suffix in (".jsonl", ".json") and path.is_file():
                    self.by_key.setdefault(f"session:{path.stem}", path)
                    digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "replace")).hexdigest()[:24]
                    self.by_key.setdefault(f"path:{digest}", path)
        self._folders: dict[str, Scope | None] = {}

    def project_of(self, key: str) -> Scope | None:
        """The project the session ``key`` ran in, as it is today (None: unknown)."""
        path = self.by_key.get(key)
        if path is None:
            return None
        try:
            with path.open("rb") as f:
                head = f.read(HEAD_BYTES).decode("utf-8", "replace")
            found = _CWD.search(head)
            cwd = json.loads(found.group(1)) if found else ""
        except (OSError, ValueError):
            return None
        if not isinstance(cwd, str) or not cwd:
            return None
        if cwd not in self._folders:
            folder = Path(cwd)
            self._folders[cwd] = self.detect(folder).project_scope() if folder.is_dir() else None
        return self._folders[cwd]


def _taught_here(bullet: Bullet, sessions: Sessions, project: Scope) -> bool:
    """Every session of the bullet's origins that can be found ran in ``project`` (at least one can): a
    bullet the Curator merged from sessions in two clones of one name belongs to neither alone."""
    found = [p for p in (sessions.project_of(k) for k in origins(bullet)) if p is not None]
    return bool(found) and all(p == project for p in found)


def origins(bullet: Bullet) -> list[str]:
    """The transcript keys among a bullet's origins (``session:ID · steps 3,4 · claude-code``, joined)."""
    return [w for w in re.split(r"[\s·]+", bullet.origin) if _KEY.match(w)]


def meet(deps: Deps, here: Scope) -> Move | None:
    """Move the bullets of ``here``'s bare name that sessions in this repository taught (see the module's
    rule). None when nothing is under the bare name. Once per repository and store: what was left behind
    is recorded (``state/legacy-scopes.json``), so later processes read one small file, not the store."""
    if here.project is None or not is_identity(here.project):
        return None
    project, bare = here.project_scope(), f"project:{here.short}"
    looked = deps.settings.home / "state" / "legacy-scopes.json"
    seen = _read(looked)
    if str(project) in seen:  # looked at before: only how many are still there (an indexed count)
        left = _own(deps).count(Where(scopes=seen[str(project)])) if seen[str(project)] else 0
        return Move(bare, str(project), 0, left) if left else None
    with deps.store.write_lock(wait=LOCK_WAIT):  # busy: the next process looks (StoreBusyError, logged)
        done = None
        if legacy_scopes(_own(deps).column_counts("scope"), here):
            sessions = Sessions(Path.home(), deps.workspace.detect)
            done = _move(deps, here, lambda b: _taught_here(b, sessions, project))
        _record(deps, here, legacy_scopes(_own(deps).column_counts("scope"), here))
    return done


def _record(deps: Deps, here: Scope, left: list[str]) -> None:
    """Which scopes of ``here``'s bare name still hold bullets after a move (under the write lock)."""
    looked = deps.settings.home / "state" / "legacy-scopes.json"
    try:
        seen = _read(looked)
        seen[str(here.project_scope())] = left
        looked.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(looked, json.dumps(seen, indent=1))
    except OSError as exc:  # only a saving: the next process looks again
        log.warning("could not record what was looked at: %s", exc)


def _read(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(x) for x in v] for k, v in data.items() if isinstance(v, list)}


def adopt(deps: Deps, old: str) -> Move:
    """The person's word: every bullet of the bare name ``old`` (and its workspaces) moves to the current
    project, whatever its origin."""
    here = deps.workspace.current()
    if here.project is None or not is_identity(here.project):
        raise InvalidScopeError("memx adopt works inside a git repository: run it in the one the bullets are for")
    name = old.strip().removeprefix("project:")
    if name != here.short:
        raise InvalidScopeError(
            f"this repository is project:{here.project}; only bullets of its old name project:{here.short} "
            "can be adopted here"
        )
    with deps.store.write_lock():
        done = _move(deps, here, lambda b: True)
        _record(deps, here, [])
    deps.caches.setdefault("met_projects", {})[str(here.project_scope())] = deps.workspace.met = ""
    return done


def _move(deps: Deps, here: Scope, belongs: Callable[[Bullet], bool]) -> Move:
    project = here.project_scope()
    bare = f"project:{here.short}"
    with deps.store.write_lock():  # read again under the lock: another process may have moved them
        old = legacy_scopes(_own(deps).column_counts("scope"), here)
        bullets = _own(deps).all_bullets(Where(scopes=old)) if old else []
        chosen = [b for b in bullets if belongs(b)]
        drafts = [checked(deps, Draft.of(b, scope=_moved_scope(b.scope, project))) for b in chosen]
        if drafts:
            write(deps, drafts, how="replace")
            log.info("moved %d bullet(s) of %s to %s", len(chosen), bare, project)
        if old:
            _move_conflicts(deps, old, project)
    return Move(bare, str(project), len(chosen), len(bullets) - len(chosen))


def _own(deps: Deps) -> Store:
    """This machine's store: the team's rows stay where the team put them (``team_note``)."""
    return deps.teams.personal if deps.teams is not None else deps.store


def _within(scope: str, project: Scope) -> bool:
    return scope == str(project) or scope.startswith(f"{project}/workspace:")


def _move_conflicts(deps: Deps, old: list[str], project: Scope) -> None:
    """Conflict records of the old scopes whose bullets are now the project's follow them (also those a
    process cut off between the two writes left behind)."""
    records = [c for status in ("open", "resolved") for c in deps.store.conflicts(old, status)]
    scopes = {b.id: b.scope for b in deps.store.get([i for c in records for i in (c.a_id, c.b_id)])} if records else {}
    for c in records:
        if any(_within(scopes.get(i, ""), project) for i in (c.a_id, c.b_id)):
            deps.store.rescope_conflicts([c.id], _moved_scope(c.scope, project))


def waiting(deps: Deps) -> tuple[str, int]:
    """The current project's bare name and how many of its bullets wait for ``memx adopt`` (0 outside an
    identified project)."""
    here = deps.workspace.current()
    if here.project is None or not is_identity(here.project):
        return "", 0
    counts = _own(deps).column_counts("scope")
    return f"project:{here.short}", sum(counts[s] for s in legacy_scopes(counts, here))


def team_note(deps: Deps, here: Scope) -> str:
    """Team stores keep their rows: a team scope is the team's word, and a bare ``project:api`` in
    ``team_scopes`` cannot say which repository called api it means (sharing every one would share a
    stranger's clone). So the rows stay under the bare name and this repository's new bullets stay personal
    until ``team_scopes`` names its identity; this says so ('' when nothing is to say)."""
    names = deps.teams.scope_names if deps.teams is not None else ()
    bare = f"project:{here.short}"
    if here.project is None or not is_identity(here.project) or bare not in names:
        return ""
    if str(here.project_scope()) in names:
        return ""
    return (
        f"; team_scopes lists {bare}, a bare name: this repository is {here.project_scope()}, write that in "
        "team_scopes to share its new bullets with the team"
    )


def said(move: Move | None) -> str:
    """What a meeting did, as the tail of ``scope_why`` ('' when there was nothing under the old name)."""
    if move is None:
        return ""
    parts = []
    if move.moved:
        parts.append(f"{move.moved} bullet(s) of {move.old} that sessions here taught moved here")
    if move.left:
        parts.append(
            f"{move.left} bullet(s) of {move.old}, the name before memx told repositories apart, are not shown "
            f"here (nothing ties them to this repository): `memx adopt {move.old}` moves them here"
        )
    return "".join(f"; {p}" for p in parts)
