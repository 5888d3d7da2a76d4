"""Before a bullet is injected: does what it names still exist in the repository it is about? A bullet of
the current project (or workspace) that names a file gone from the working tree is left out and marked
``stale`` (the page shows it, with a one-key confirm or forget); one a person confirmed is trusted."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..domain.errors import NotFoundError
from ..domain.models import Bullet
from ..domain.tags import CONFIRMED, STALE, state_of
from ..engine.staleness import stale_reason
from .deps import Deps
from .writes import Draft
from .writing import checked, write

HISTORY = 2000  # commits whose deletions are looked at


@dataclass
class WorkingTree:
    """What one repository holds now (on disk) and what it ever tracked (its index, and the paths its last
    ``HISTORY`` commits deleted), read again when the index or HEAD changes."""

    root: Path
    _files: set[str] = field(default_factory=set)  # on disk and tracked, with their base names
    _known: set[str] = field(default_factory=set)  # ever tracked, with their base names
    _stamp: tuple[int, str] = (0, "")

    def _git(self, *args: str) -> list[str]:
        try:
            done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return []
        return (
            [x for x in done.stdout.decode("utf-8", "replace").replace("\0", "\n").splitlines() if x]
            if done.returncode == 0
            else []
        )

    def refresh(self) -> None:
        """Read the repository again if its index or HEAD moved (two cheap looks otherwise)."""
        try:
            index = (self.root / ".git" / "index").stat().st_mtime_ns
        except OSError:
            index = 0
        head = next(iter(self._git("rev-parse", "HEAD")), "")
        if (index, head) == self._stamp:
            return
        tracked = [f for f in self._git("ls-files", "-z") if (self.root / f).exists()]
        gone = self._git("log", f"-{HISTORY}", "--diff-filter=D", "--name-only", "--format=")
        gone += self._git("diff", "--cached", "--diff-filter=D", "--name-only")  # deleted, not committed yet
        self._files = {*tracked, *(f.rsplit("/", 1)[-1] for f in tracked)}
        ever = [*self._git("ls-files", "-z"), *gone]
        self._known = {*ever, *(f.rsplit("/", 1)[-1] for f in ever)}
        self._stamp = (index, head)

    def exists(self, path: str) -> bool:
        return (self.root / path).exists() or ("/" not in path and path in self._files)

    def was_here(self, path: str) -> bool:
        return path in self._known


def _tree(deps: Deps) -> WorkingTree | None:
    root = deps.workspace.repositories.root(deps.workspace.cwd)
    if root is None:
        return None
    trees: dict[Path, WorkingTree] = deps.caches.setdefault("working_trees", {})
    return trees.setdefault(root, WorkingTree(root))


def fresh(deps: Deps, bullets: Sequence[Bullet]) -> list[Bullet]:
    """``bullets`` without the stale ones of the current project; the newly stale are marked so."""
    tree = _tree(deps)
    scope = deps.workspace.current()
    if tree is None or scope.project is None:
        return list(bullets)
    tree.refresh()  # once per injection, not once per path a bullet names
    kept, newly = [], []
    for b in bullets:
        if confirmed(b) or not scope.owns(b.scope) or b.scope == "global":
            kept.append(b)
            continue
        if stale_reason(b.content, tree.exists, tree.was_here):
            if STALE not in b.tags:
                newly.append(b)
            continue
        kept.append(b)
    if newly:
        mark_stale(deps, newly)
    return kept


def confirmed(b: Bullet) -> bool:
    """A person confirmed the bullet: the confirm action is the only writer of this state."""
    return CONFIRMED in b.tags


def _retag(deps: Deps, bullet_id: str, state: Callable[[Bullet], list[str]]) -> Bullet:
    """A new state for one bullet through the write path, under the write lock; everything else stays."""
    with deps.store.write_lock():
        found = deps.store.get([bullet_id])
        if not found:
            raise NotFoundError(f"no bullet {bullet_id}")
        draft = Draft.of(found[0], state=tuple(state(found[0])), updated_at=deps.clock())
        done = write(deps, [checked(deps, draft)], how="replace")
    return done[0].bullet if done[0] else found[0]


def mark_stale(deps: Deps, bullets: Sequence[Bullet]) -> None:
    for b in bullets:
        with contextlib.suppress(Exception):  # a busy store: the bullet is left out anyway, marked next time
            _retag(deps, b.id, lambda now: list(dict.fromkeys((*state_of(now.tags), STALE))))


def _confirmed_state(now: Bullet) -> list[str]:
    return [*(t for t in state_of(now.tags) if t not in (STALE, CONFIRMED)), CONFIRMED]


def confirm(deps: Deps, bullet_id: str) -> Bullet:
    """A person says the bullet still holds: no longer stale, and never checked again."""
    return _retag(deps, bullet_id, _confirmed_state)
