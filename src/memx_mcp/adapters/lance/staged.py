"""A batch of curated writes held in memory and committed to the store at once.

Written one at a time, each of 10,000 imported records cost a LanceDB commit, a new table version (and a
compaction every 20), a change-log entry and a query for its neighbours' rows: about 70 ms a record. A
``StagedWrite`` gives the Curator the same view of the store as those single writes would have, and stores
the batch in one commit: its vector view changes after every staged write exactly as the in-memory copy
changes after a stored one (a changed bullet leaves its row and is appended at the end, a new one is
appended), so each record meets the same neighbours, in the same order and at the same similarities, as it
would have met one write at a time; rows read back are what the table would have given (float32 scores,
microsecond times). It is used under the store's write lock, which it does not take itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...domain.models import Bullet, Conflict, Status
from .rows import as_stored
from .vectors import VectorIndex, nearest, quantize, unit

if TYPE_CHECKING:
    from .lance import LanceStore

_PREFETCH = 12  # neighbour rows read ahead per record (a write asks for 10)
_BLOCK_ROWS = 8192  # rows widened to float32 at a time when reading ahead (12 MB at 384 dimensions)


class StagedVectors:
    """The in-memory copy's rows as the batch's writes change them. The copy's arrays are shared until the
    first change, then copied once into buffers that grow by doubling."""

    def __init__(self, index: VectorIndex) -> None:
        self._ids, self._scope_index, scope_codes, matrix, scales = index.snapshot()
        self._present = set(self._ids)
        self._n = len(self._ids)
        self._scope_codes, self._matrix, self._scales = scope_codes, matrix, scales
        self._own = False

    def _codes(self, scopes: Sequence[str]) -> list[int]:
        return [self._scope_index[sc] for sc in scopes if sc in self._scope_index]

    def search(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        n = self._n
        return nearest(
            self._ids, self._matrix[:n], self._scales[:n], self._scope_codes[:n], self._codes(scopes), vector, limit
        )

    def likely_neighbours(self, vectors: Sequence[Sequence[float]], scopes: Sequence[str], limit: int) -> set[str]:
        """Ids near each of ``vectors`` (in the scope beside it) among the rows as they are now: the rows a
        batch will ask for, read ahead in one query. Matrix products over blocks of rows, not exact: a row
        it misses is read when it is asked for."""
        n = self._n
        if not n or not len(vectors):
            return set()
        queries = np.stack([unit(v) for v in vectors])
        found: set[str] = set()
        for scope in set(scopes):
            codes = self._codes([scope])
            visible = np.flatnonzero(np.isin(self._scope_codes[:n], codes)) if codes else np.zeros(0, np.int64)
            if not len(visible):
                continue
            mine = queries[[k for k, s in enumerate(scopes) if s == scope]].T
            best_sims = np.zeros((0, mine.shape[1]), np.float32)
            best_rows = np.zeros((0, mine.shape[1]), np.int64)
            for start in range(0, len(visible), _BLOCK_ROWS):
                rows = visible[start : start + _BLOCK_ROWS]
                sims = (self._matrix[rows].astype(np.float32) * self._scales[rows, None]) @ mine
                sims = np.vstack([best_sims, sims])
                where = np.vstack([best_rows, np.broadcast_to(rows[:, None], (len(rows), mine.shape[1]))])
                k = min(limit, len(sims))
                top = np.argpartition(-sims, k - 1, axis=0)[:k]
                best_sims = np.take_along_axis(sims, top, axis=0)
                best_rows = np.take_along_axis(where, top, axis=0)
            found.update(self._ids[i] for i in np.unique(best_rows))
        return found

    def put(self, bullet: Bullet) -> None:
        """As a stored write changes the copy: the bullet's old row goes, and an active bullet with a
        vector is appended."""
        if bullet.id in self._present:
            self._own_arrays()
            p = self._ids.index(bullet.id)
            n = self._n
            for array in (self._matrix, self._scales, self._scope_codes):
                array[p : n - 1] = array[p + 1 : n]
            del self._ids[p]
            self._present.discard(bullet.id)
            self._n -= 1
        if bullet.vector is None or bullet.status is not Status.ACTIVE:
            return
        self._own_arrays(len(bullet.vector))
        if self._n == len(self._matrix):
            self._grow()
        codes, scales = quantize(np.asarray([bullet.vector], dtype=np.float32))
        self._matrix[self._n], self._scales[self._n] = codes[0], scales[0]
        self._scope_codes[self._n] = self._scope_index.setdefault(bullet.scope, len(self._scope_index))
        self._ids.append(bullet.id)
        self._present.add(bullet.id)
        self._n += 1

    def _own_arrays(self, dim: int = 0) -> None:
        if self._own:
            return
        n = self._n
        dim = self._matrix.shape[1] if self._matrix.size else dim
        capacity = max(64, 2 * n)
        matrix = np.empty((capacity, dim), np.int8)
        scales = np.empty(capacity, np.float32)
        scope_codes = np.empty(capacity, np.int32)
        if n:
            matrix[:n], scales[:n], scope_codes[:n] = self._matrix[:n], self._scales[:n], self._scope_codes[:n]
        self._matrix, self._scales, self._scope_codes = matrix, scales, scope_codes
        self._own = True

    def _grow(self) -> None:
        n, capacity = self._n, 2 * len(self._matrix)
        matrix = np.empty((capacity, self._matrix.shape[1]), np.int8)
        scales = np.empty(capacity, np.float32)
        scope_codes = np.empty(capacity, np.int32)
        matrix[:n], scales[:n], scope_codes[:n] = self._matrix[:n], self._scales[:n], self._scope_codes[:n]
        self._matrix, self._scales, self._scope_codes = matrix, scales, scope_codes


class StagedWrite:
    """The write target a batch curates against (the same methods the Curator's write path calls on the
    store); ``commit`` stores what it holds."""

    def __init__(self, store: LanceStore, vectors: StagedVectors) -> None:
        self._store = store
        self._vectors = vectors
        self._pending: dict[str, Bullet] = {}  # in the order of each bullet's last write
        self._as_read: dict[str, Bullet] = {}  # pending bullets as the table would give them back
        self._read: dict[str, Bullet] = {}  # rows of the table (unchanged while the lock is held)
        self._created: set[str] = set()  # bullets the batch adds
        self._replaced = False  # the batch changes a stored bullet
        self._conflicts: list[Conflict] = []

    def read_ahead(self, bullets: Sequence[Bullet]) -> None:
        """Read in one query the stored rows that ``bullets`` are likely to meet as neighbours."""
        with_vectors = [b for b in bullets if b.vector is not None]
        ids = self._vectors.likely_neighbours(
            [b.vector for b in with_vectors if b.vector is not None], [b.scope for b in with_vectors], _PREFETCH
        )
        self._fetch(sorted(ids))

    def _fetch(self, ids: Sequence[str]) -> None:
        missing = [i for i in ids if i not in self._read and i not in self._pending]
        for b in self._store.get(missing):
            self._read[b.id] = b

    def _row(self, i: str) -> Bullet | None:
        if i in self._pending:
            if i not in self._as_read:
                self._as_read[i] = as_stored(self._pending[i])
            return self._as_read[i]
        return self._read.get(i)

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        found = self._vectors.search(vector, [scope], limit)
        self._fetch([i for i, _ in found])
        rows = [(self._row(i), s) for i, s in found]
        return [(b, s) for b, s in rows if b is not None and b.status is Status.ACTIVE]

    def find_content(self, content: str, scope: str) -> Bullet | None:
        """An active bullet with exactly ``content`` in ``scope``: one the batch wrote, else a stored one
        the batch has not changed since."""
        for i in reversed(self._pending):
            b = self._pending[i]
            if b.content == content and b.scope == scope and b.status is Status.ACTIVE:
                return self._row(i)
        stored = self._store.find_content(content, scope)
        return stored if stored is not None and stored.id not in self._pending else None

    def add(self, bullets: Sequence[Bullet]) -> None:
        self._created.update(b.id for b in bullets)
        self._stage(bullets)

    def upsert(self, bullets: Sequence[Bullet]) -> None:
        self._replaced = self._replaced or any(b.id not in self._created for b in bullets)
        self._stage(bullets)

    def _stage(self, bullets: Sequence[Bullet]) -> None:
        for b in bullets:
            self._pending.pop(b.id, None)
            self._pending[b.id] = b
            self._as_read.pop(b.id, None)
            self._vectors.put(b)

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        self._conflicts.extend(conflicts)

    def commit(self) -> str:
        """Store the batch: its bullets in one commit (appended when all are new, else merged by id, in the
        order of their last write so that the in-memory copy ends as single writes would have left it),
        then its conflict records. Returns "" or why the conflict records could not be written (the
        bullets are stored)."""
        bullets = list(self._pending.values())
        if self._replaced:
            self._store.upsert(bullets)
        else:
            self._store.add(bullets)
        try:
            self._store.add_conflicts(self._conflicts)
        except Exception as exc:  # the bullets are stored: the caller says precisely what was not
            return str(exc)
        return ""

    @property
    def conflicts(self) -> list[Conflict]:
        return self._conflicts
