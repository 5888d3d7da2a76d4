"""RoutedStore: the personal store and the team store behind the methods Memory calls on one store.

- New bullets go by scope: a team scope (``TeamScopes``) to the team store, any other to the personal one.
  A bullet already stored stays where it is (``memx share`` / ``unshare`` move it), so changes to a stored
  bullet (a merge, an edit, an archive, its recall count) go to the store that holds it.
- The Curator compares a new bullet with the bullets of the store it goes to.
- Reads ask both stores and put their candidates together; the Generator scores them alike (its keyword
  layers weigh terms over the candidates, not over one store's corpus), so hits from both are fused.
- With the team store not answering, recall answers from its copy (or the personal store alone) and says so;
  writes to team scopes wait in the team store's outbox, never in the personal store where the team would
  not see them. (``team`` None is left for a team store that could not even be constructed.)"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from ...domain.errors import InvalidInputError, MemxError, TeamStoreError, TeamStoreUnavailable
from ...domain.models import Bullet, Conflict, Status
from ...domain.review import ReviewNote
from ...ports import EVERY, Where
from .lance import LanceStore
from .remote import detail
from .staged import StagedWrite
from .team import TeamStore

T = TypeVar("T")


@dataclass(frozen=True)
class TeamScopes:
    """Which scopes the team store holds: each listed scope, and (for a project) its workspaces."""

    scopes: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> TeamScopes:
        """``project:api, project:web`` (commas or whitespace); each must be a scope's long form."""
        from ...domain.errors import InvalidScopeError
        from ...domain.scopes import parse_scope

        found = []
        for raw in text.replace(",", " ").split():
            try:
                scope = parse_scope(raw)
            except InvalidScopeError as exc:
                raise InvalidInputError(f"team_scopes: {raw!r} is not a scope ({exc})") from exc
            if str(scope) != raw.strip():
                raise InvalidInputError(f"team_scopes: write {raw!r} in its long form ({scope})")
            found.append(str(scope))
        return cls(tuple(dict.fromkeys(found)))

    def holds(self, scope: str) -> bool:
        return any(scope == s or (s != "global" and scope.startswith(s + "/workspace:")) for s in self.scopes)


class RoutedStore:
    def __init__(
        self, personal: LanceStore, team: TeamStore | None, scopes: TeamScopes, uri: str, why_absent: str = ""
    ) -> None:
        self.personal = personal
        self.team = team
        self.scopes = scopes
        self.uri = uri
        self.why_absent = why_absent  # why ``team`` is None

    # -- what Memory reads off a store ------------------------------------------------------------------

    @property
    def scope_names(self) -> tuple[str, ...]:
        return self.scopes.scopes

    @property
    def dim(self) -> int:
        return self.personal.dim

    @property
    def vectors_model(self) -> str:
        return self.personal.vectors_model

    @property
    def root(self) -> Path:
        return self.personal.root

    def shares(self, scope: str) -> bool:
        """Whether ``scope`` is one the team configured (its bullets go to the team store)."""
        return self.scopes.holds(scope)

    def _stores(self) -> list[LanceStore]:
        return [self.personal] if self.team is None else [self.personal, self.team]

    def _for_scope(self, scope: str) -> LanceStore:
        if not self.scopes.holds(scope):
            return self.personal
        if self.team is None:
            raise TeamStoreUnavailable(
                f"{scope} is a team scope, and the team store {self.uri} could not be opened ({self.why_absent}): "
                "nothing was written. Try again when it is back (`memx doctor` shows it)"
            )
        return self.team

    def _for_bullet(self, b: Bullet) -> LanceStore:
        """Where a new bullet goes: by its scope, except a learned bullet waiting for review, which stays on
        this machine until its user approves it (then it is written again, active, by its scope)."""
        return self.personal if b.status is Status.PENDING else self._for_scope(b.scope)

    def holder(self, ids: Sequence[str]) -> dict[str, LanceStore]:
        """Which store holds each of ``ids`` (the team's answer wins: an id is in one store)."""
        found: dict[str, LanceStore] = {}
        for store in self._stores():
            try:
                held = [b.id for b in store.get(ids)] if ids else []
            except TeamStoreError:  # the team store does not answer: its copy knows which are the team's
                assert self.team is not None
                held = self.team.holds(ids)
            for i in held:
                found[i] = store
        return found

    def _by_holder(self, bullets: Sequence[Bullet]) -> list[tuple[LanceStore, list[Bullet]]]:
        """Bullets grouped by the store that holds their id, else by the store their scope goes to."""
        held = self.holder([b.id for b in bullets])
        groups: dict[int, tuple[LanceStore, list[Bullet]]] = {}
        for b in bullets:
            store = held.get(b.id) or self._for_bullet(b)
            groups.setdefault(id(store), (store, []))[1].append(b)
        return list(groups.values())

    def _ids_by_holder(self, ids: Sequence[str]) -> list[tuple[LanceStore, list[str]]]:
        held = self.holder(ids)
        groups: dict[int, tuple[LanceStore, list[str]]] = {}
        for i in ids:
            if i in held:
                groups.setdefault(id(held[i]), (held[i], []))[1].append(i)
        return list(groups.values())

    def close(self) -> None:
        """Stop following the team store (a process that ends needs not: the refresher is a daemon)."""
        if self.team is not None:
            self.team.close()

    def read_notes(self) -> list[str]:
        if self.team is None:
            return [f"the team store {self.uri} could not be opened ({self.why_absent}): personal store only"]
        return self.team.read_notes()

    # -- locking -----------------------------------------------------------------------------------------

    @contextmanager
    def write_lock(self, wait: float | None = None) -> Iterator[None]:
        """This machine's writers, one at a time, on both stores (always the personal lock first)."""
        with ExitStack() as stack:
            for store in self._stores():
                stack.enter_context(store.write_lock(wait))
            yield

    # -- writes ------------------------------------------------------------------------------------------

    def add(self, bullets: Sequence[Bullet]) -> None:
        groups: dict[int, tuple[LanceStore, list[Bullet]]] = {}
        for b in bullets:
            store = self._for_bullet(b)
            groups.setdefault(id(store), (store, []))[1].append(b)
        for store, group in groups.values():
            store.add(group)

    def upsert(self, bullets: Sequence[Bullet], vectors_changed: bool = True) -> None:
        for store, group in self._by_holder(bullets):
            store.upsert(group, vectors_changed)

    def set_status(self, ids: Sequence[str], status: Status, now: datetime) -> None:
        for store, group in self._ids_by_holder(ids):
            store.set_status(group, status, now)

    def delete(self, ids: Sequence[str]) -> None:
        for store, group in self._ids_by_holder(ids):
            store.delete(group)

    def mark_recalled(self, counts: Mapping[str, int], now: datetime) -> None:
        """On a recall's path: which store holds a hit comes from the team's in-memory copy (the team store
        batches its counts)."""
        team = set(self.team.holds(list(counts))) if self.team is not None else set()
        mine = {i: n for i, n in counts.items() if i not in team}
        if mine:
            self.personal.mark_recalled(mine, now)
        if team and self.team is not None:
            self.team.mark_recalled({i: counts[i] for i in team}, now)

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        groups: dict[int, tuple[LanceStore, list[Conflict]]] = {}
        for c in conflicts:
            store = self._for_scope(c.scope)
            groups.setdefault(id(store), (store, []))[1].append(c)
        for store, group in groups.values():
            store.add_conflicts(group)

    def resolve_conflicts(self, ids: Sequence[str], resolution: str) -> None:
        for store in self._stores():
            mine = [i for i in ids if store.get_conflict(i) is not None]
            store.resolve_conflicts(mine, resolution)

    def rescope_conflicts(self, ids: Sequence[str], scope: str) -> None:
        for store in self._stores():
            store.rescope_conflicts([i for i in ids if store.get_conflict(i) is not None], scope)

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        return self._for_scope(scope).neighbours(vector, scope, limit)

    def find_content(self, content: str, scope: str) -> Bullet | None:
        return self._for_scope(scope).find_content(content, scope)

    def staged(self, bullets: Sequence[Bullet] = ()) -> RoutedStaged:
        return RoutedStaged(self, bullets)

    def replace_all(self, bullets: Sequence[Bullet], model_name: str, dim: int) -> None:
        held = self.holder([b.id for b in bullets])
        if self.team is not None:
            self.team.replace_all([b for b in bullets if held.get(b.id) is self.team], model_name, dim)
        self.personal.replace_all([b for b in bullets if held.get(b.id) is not self.team], model_name, dim)

    def checkpoint(self) -> None:
        self.personal.checkpoint()

    def reflected_upto(self, key: str) -> int:
        return self.personal.reflected_upto(key)

    def mark_reflected(self, key: str, steps: int) -> None:
        self.personal.mark_reflected(key, steps)

    # Review notes live in the personal store, whichever store holds the pending bullet.
    def review_notes(self, ids: Sequence[str]) -> dict[str, ReviewNote]:
        return self.personal.review_notes(ids)

    def keep_review_notes(self, notes: Mapping[str, ReviewNote]) -> None:
        self.personal.keep_review_notes(notes)

    def drop_review_notes(self, ids: Sequence[str]) -> None:
        self.personal.drop_review_notes(ids)

    # -- reads -------------------------------------------------------------------------------------------

    def get(self, ids: Sequence[str]) -> list[Bullet]:
        found: dict[str, Bullet] = {}
        for store in self._stores():
            found.update({b.id: b for b in store.get(ids)} if ids else {})
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def _both(self, read: Callable[[LanceStore], list[T]]) -> list[T]:
        """One read on each store, put together; a team store that cannot be reached is left out (its
        note says why), any other failure is raised."""
        found = read(self.personal)
        if self.team is not None:
            try:
                found = found + read(self.team)
            except TeamStoreError:
                pass  # it said why: its note says so
            except MemxError:
                raise
            except Exception as exc:
                if self.team.sync():  # it answers: a failure of its own, never taken for the personal store's
                    raise TeamStoreError(f"the team store {self.uri}: reading it failed: {detail(exc)}") from exc
        return found

    def vector_candidates(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[Bullet]:
        return self._both(lambda s: s.vector_candidates(vector, scopes, limit))

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[Bullet, float]]:
        return self._both(lambda s: s.keyword_search(terms, scopes, limit))

    def prepare_vector_search(self, scopes: Sequence[str]) -> None:
        """``LanceStore.prepare_vector_search`` of each store; one that cannot (a team store away) is left to
        its search, which says why."""
        for store in self._stores():
            with contextlib.suppress(Exception):
                store.prepare_vector_search(scopes)

    def adjacent(self, ids: Sequence[str], window: float) -> dict[str, list[Bullet]]:
        """Each bullet's neighbours in time, from the store that holds it (the Generator's context)."""
        found: dict[str, list[Bullet]] = {}
        for store in self._stores():
            for i, near in store.adjacent(ids, window).items():
                found.setdefault(i, []).extend(near)
        return found

    def similarities(self, ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        found: dict[str, float] = {}
        for store in self._stores():
            found.update(store.similarities(ids, vector))
        return found

    def similar(
        self, vector: Sequence[float], scopes: Sequence[str], limit: int, fresh: bool = True
    ) -> list[tuple[Bullet, float]]:
        found = [h for s in self._stores() for h in s.similar(vector, scopes, limit, fresh)]
        return sorted(found, key=lambda h: -h[1])[:limit]

    def active_in(self, scopes: Sequence[str]) -> list[Bullet]:
        return self._both(lambda s: s.active_in(scopes))

    @contextmanager
    def one_read(self) -> Iterator[None]:
        """``LanceStore.one_read`` of both stores."""
        with ExitStack() as stack:
            for store in self._stores():
                stack.enter_context(store.one_read())
            yield

    def generation(self) -> str:
        """``ports.Generational`` of both stores ("" when either cannot say)."""
        seen = [store.generation() for store in self._stores()]
        return "|".join(seen) if all(seen) else ""

    def warm(self) -> None:
        for store in self._stores():
            store.warm()

    def all_bullets(self, where: Where = EVERY) -> list[Bullet]:
        return [b for s in self._stores() for b in s.all_bullets(where)]

    def decay_inputs(self) -> list[tuple[datetime, int]]:
        return [d for s in self._stores() for d in s.decay_inputs()]

    def active_contents(self) -> list[str]:
        return [c for s in self._stores() for c in s.active_contents()]

    def column_counts(self, column: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for store in self._stores():
            for k, n in store.column_counts(column).items():
                counts[k] = counts.get(k, 0) + n
        return counts

    def count(self, where: Where = EVERY) -> int:
        return sum(s.count(where) for s in self._stores())

    def verify(self) -> str:
        return self.personal.verify()  # the team store's own check is its doctor line

    def size_bytes(self) -> int:
        return self.personal.size_bytes()

    def conflicts(self, scopes: Sequence[str], status: str = "open") -> list[Conflict]:
        return [c for s in self._stores() for c in s.conflicts(scopes, status)]

    def get_conflict(self, conflict_id: str) -> Conflict | None:
        for store in self._stores():
            found = store.get_conflict(conflict_id)
            if found is not None:
                return found
        return None

    def conflict_pairs(self) -> set[frozenset[str]]:
        return {p for s in self._stores() for p in s.conflict_pairs()}

    def count_conflicts(self, status: str = "open") -> int:
        return sum(s.count_conflicts(status) for s in self._stores())


class RoutedStaged:
    """A batch of curated writes: each bullet staged with the store its scope goes to, each store's part
    committed on its own (a team commit failing leaves the personal part stored, and says so)."""

    def __init__(self, routed: RoutedStore, bullets: Sequence[Bullet]) -> None:
        self._routed = routed
        self._parts: dict[int, StagedWrite] = {}
        by_store: dict[int, tuple[LanceStore, list[Bullet]]] = {}
        for b in bullets:
            store = routed._for_bullet(b)
            by_store.setdefault(id(store), (store, []))[1].append(b)
        for key, (store, group) in by_store.items():
            self._parts[key] = store.staged(group)

    def _part(self, scope: str, store: LanceStore | None = None) -> StagedWrite:
        store = store or self._routed._for_scope(scope)
        if id(store) not in self._parts:
            self._parts[id(store)] = store.staged()
        return self._parts[id(store)]

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        return self._part(scope).neighbours(vector, scope, limit)

    def find_content(self, content: str, scope: str) -> Bullet | None:
        return self._part(scope).find_content(content, scope)

    def add(self, bullets: Sequence[Bullet]) -> None:
        for b in bullets:
            self._part(b.scope, self._routed._for_bullet(b)).add([b])

    def upsert(self, bullets: Sequence[Bullet]) -> None:
        for b in bullets:
            self._part(b.scope).upsert([b])

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        for c in conflicts:
            self._part(c.scope).add_conflicts([c])

    def commit(self) -> str:
        return "; ".join(failed for part in self._parts.values() if (failed := part.commit()))
