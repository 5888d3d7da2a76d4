"""An in-memory copy of the store's active bullets and their vectors: the brute-force index that vector
candidates come from, and the rows that scoring reads without another query.

A scan is one matrix-vector product: well under a millisecond at 10k × 384, about 5 ms at 100k (LanceDB's flat
search took ~20 ms at 10k here). The vectors are held as int8 codes with one scale per row, a quarter of the
memory of float32 (38 MB instead of 154 MB at 100k bullets); a scan widens 4096 rows at a time into a float32
buffer, about as fast as a float32 product, and a similarity is off the exact cosine by 0.0003 on average, at
most ~0.0025 (`python benchmarks/vector_codes.py`). Every write that adds, removes, re-embeds or archives a
bullet bumps a generation counter in a file beside the store, and appends which bullets changed to a short log
beside it; this process applies its own changes in place, and a process whose copy is behind fetches just the
bullets the log names since its own generation (it reloads the whole copy only when the log cannot say: an
inexact change, a gap, a large batch). Recall counts written by reinforcement do not bump the counter, so the
copy's counts may lag (they only nudge the decay weight); writes always read fresh rows."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...domain.models import Bullet, Status
from ...files import atomic_write
from ...native import one_blas_thread, trim_heap
from .lexical import LexicalIndex
from .rows import bullets_table, index_text, table_to_bullets

_SKIP = ("terms", "vector")
_LOG_BYTES = 256 * 1024  # the change log's size before it is halved
_CATCH_UP_LIMIT = 2_000  # more changed bullets than this: reloading the whole copy is as quick
_BLOCK = 4096  # rows a scan widens to float32 at a time (6 MB at 384 dimensions)
# Bullets kept made from the copy's rows (~0.85 KB each without their vectors: 14 MB when full): a store of
# 10k bullets whole, so that the learned ranking's pass over the visible scopes (``in_scopes``) leaves every
# candidate of the recalls after it made
_MADE_LIMIT = 16_384


def _empty_rows(schema: pa.Schema) -> pa.Table:
    return schema.empty_table().drop_columns([c for c in _SKIP if c in schema.names])


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectors (one per row) normalised, as int8 codes and one float32 scale per row: the unit vector is
    ``codes * scale``, each component within ``scale / 2`` (a zero vector stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    peaks = np.abs(unit).max(axis=1) if unit.size else np.zeros(len(unit), np.float32)
    scales = np.where(peaks == 0, 1, peaks / 127).astype(np.float32)
    return np.rint(unit / scales[:, None]).astype(np.int8), scales


def scan(codes: np.ndarray, scales: np.ndarray, query: np.ndarray, first: np.ndarray | None = None) -> np.ndarray:
    """``query`` (float32) against every coded row: a block of rows at a time widened into one buffer.
    ``first``: the first block widened already (``widen``): the same numbers, so the same products."""
    sims = np.empty(len(codes), np.float32)
    buffer = None
    for start in range(0, len(codes), _BLOCK):
        size = min(_BLOCK, len(codes) - start)
        if start == 0 and first is not None and len(first) == size:
            block = first
        else:
            if buffer is None:
                buffer = np.empty((min(_BLOCK, len(codes)), codes.shape[1]), np.float32)
            block = buffer[:size]
            block[...] = codes[start : start + size]
        np.matmul(block, query, out=sims[start : start + size])
    sims *= scales[: len(codes)]
    return sims


def widen(codes: np.ndarray) -> np.ndarray:
    """The first block ``scan`` would widen, as float32."""
    return codes[:_BLOCK].astype(np.float32)


def unit(vector: Sequence[float]) -> np.ndarray:
    q = np.asarray(vector, dtype=np.float32)
    return q / (np.linalg.norm(q) or 1.0)


class Gathered:
    """The rows of some scopes, ready to be scanned (``gather``): made before the query's vector is known,
    while it is being made."""

    def __init__(self, rows: np.ndarray | None, matrix: np.ndarray, scales: np.ndarray) -> None:
        self.rows, self.matrix, self.scales = rows, matrix, scales  # rows None: every row
        self.first = widen(matrix)


def gather(matrix: np.ndarray, scales: np.ndarray, scope_codes: np.ndarray, codes: Sequence[int]) -> Gathered | None:
    """The rows whose scope code is one of ``codes``, in their order (None: there are none)."""
    n = len(matrix)
    if not n or not codes:
        return None
    visible = scope_codes == codes[0] if len(codes) == 1 else np.isin(scope_codes, codes)  # one scope: a compare
    count = int(visible.sum())
    if count == 0:
        return None
    # Only the rows of the scopes are scanned (a project's share of the store, not all of it). They keep
    # their order, so a staged view holding the copy's rows and more after them scans each of the copy's
    # rows at the same place in the same block: the same similarity to the last bit.
    if count == n:
        return Gathered(None, matrix, scales)
    rows = np.flatnonzero(visible)
    return Gathered(rows, matrix[rows], scales[rows])


def nearest(
    ids: Sequence[str],
    matrix: np.ndarray,
    scales: np.ndarray,
    scope_codes: np.ndarray,
    codes: Sequence[int],
    vector: Sequence[float],
    limit: int,
    gathered: Gathered | None = None,
) -> list[tuple[str, float]]:
    """The ``limit`` rows most similar to ``vector`` among those whose scope code is one of ``codes``.
    The copy and a batch's staged view both search through here: the same rows in the same order give the
    same similarities to the last bit, so a batch curates exactly as one write at a time would.
    ``gathered``: ``gather`` of the same arrays and codes, made already."""
    g = gathered or gather(matrix, scales, scope_codes, codes)
    if g is None:
        return []
    rows = g.rows
    sims = scan(g.matrix, g.scales, unit(vector), g.first)
    count = len(sims)
    k = min(limit, count)
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.argsort(-sims[top])]
    found = top if rows is None else rows[top]
    return [(ids[i], float(sims[t])) for i, t in zip(found.tolist(), top.tolist(), strict=True)]


@dataclass(frozen=True)
class _State:
    """Which copy a search reads: its scopes, its rows and the arrays themselves (a change to the copy puts
    new arrays in place; none is written into)."""

    scopes: tuple[str, ...]
    rows: int
    arrays: tuple[np.ndarray, ...]

    def same(self, other: _State) -> bool:
        return (
            self.scopes == other.scopes
            and self.rows == other.rows
            and all(a is b for a, b in zip(self.arrays, other.arrays, strict=True))
        )


class VectorIndex:
    keeps_terms = True  # also hold the lexical index (``lexical.py``) of every active bullet

    def __init__(self, generation_file: Path) -> None:
        one_blas_thread()  # the scan is one matrix-vector product: its spinning worker threads cost more than they give
        self._file = generation_file
        self._seen: str | None = None
        self._ids: list[str] = []
        self._where: dict[str, int] = {}
        self._scope_codes = np.zeros(0, dtype=np.int32)  # one small int per row: filtering without strings
        self._scope_index: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.int8)  # int8 codes: row ≈ codes * scale
        self._scales = np.zeros(0, dtype=np.float32)
        self._rows: pa.Table | None = None
        self._changes = generation_file.with_name(generation_file.name + ".log")
        self._mutating = threading.RLock()  # one change to the copy at a time, and one reload
        self._missed = False  # a bump failed to be written: the next one cannot be told exactly
        self._order_key: object = None  # the state of the copy that the time order below was made for
        self._order = self._rank = self._times = np.zeros(0, np.int64)
        self._order_codes = np.zeros(0, np.int32)
        self._lexical = LexicalIndex()
        self._made: dict[str, Bullet] = {}  # rows already turned into Bullets, until they change
        self._prepared = threading.local()  # ``prepare``'s gathered rows, for this thread's next search

    def _read(self) -> str:
        try:
            return self._file.read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            return ""

    def generation(self) -> str:
        """The store's change counter as the file says now ("" when there is none or it cannot be read, and
        while a change failed to be written: nothing can be known to be current then)."""
        return "" if self._missed else self._read()

    def bump(self, added: Sequence[Bullet] = (), removed: Sequence[str] = (), exact: bool = True) -> None:
        """Called by writers, under the store's write lock. When this copy was current and the change is
        known exactly, it is updated in place; other processes catch up on their next search. A counter
        that is not a number (a damaged file) counts as unknown: the next number after the log's newest,
        logged as a change that makes every reader reload."""
        before = self._read()
        known = before.isdigit() and not self._missed
        exact = exact and known
        value = str((int(before) if before.isdigit() else self._newest_logged()) + 1)
        change = {"g": int(value), "ids": [b.id for b in added], "removed": list(removed)} if exact else None
        try:
            self._log_change(change or {"g": int(value), "full": True})
            atomic_write(self._file, value)  # after the log: a reader that sees the generation finds its entry
        except OSError:
            self._missed = True  # this change is not logged: the next bump tells everyone to reload
            with self._mutating:
                self._seen = None
            raise
        self._missed = False
        with self._mutating:
            if exact and self._seen is not None and self._seen == before and self._rows is not None:
                self._apply(added, removed)
                self._seen = value

    def _newest_logged(self) -> int:
        try:
            lines = self._changes.read_text(encoding="utf-8").splitlines()
        except OSError:
            return 0
        newest = 0
        for line in lines:
            try:
                newest = max(newest, int(json.loads(line)["g"]))
            except (ValueError, KeyError, TypeError):
                continue
        return newest

    def _log_change(self, change: dict[str, Any]) -> None:
        line = json.dumps(change) + "\n"
        try:
            size = self._changes.stat().st_size
        except OSError:
            size = 0
        if size > _LOG_BYTES:  # keep the newest half: readers further behind reload the whole copy
            kept = self._changes.read_text(encoding="utf-8").splitlines(keepends=True)
            atomic_write(self._changes, "".join(kept[len(kept) // 2 :]) + line)
            return
        fd = os.open(self._changes, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # its owner's only, as the rest
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(line)

    def _changed_since(self, seen: str, current: str) -> tuple[set[str], set[str]] | None:
        """Ids upserted and removed in the generations after ``seen`` up to ``current``; None when the log
        does not name them all (an inexact change, a gap, a batch too large to fetch)."""
        try:
            first, last = int(seen) + 1, int(current)
            lines = self._changes.read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            return None
        entries: dict[int, dict[str, Any]] = {}
        for line in lines:
            try:
                entry = json.loads(line)
                entries[int(entry["g"])] = entry
            except (ValueError, KeyError, TypeError):
                continue  # a line being written right now
        upserted: set[str] = set()
        removed: set[str] = set()
        for g in range(first, last + 1):  # in order: a bullet erased, then stored again under its id, is there
            entry = entries.get(g)
            if entry is None or entry.get("full"):
                return None
            gone, back = set(entry.get("removed", ())), set(entry.get("ids", ()))
            upserted = (upserted - gone) | back
            removed = (removed - back) | gone
        if len(upserted) + len(removed) > _CATCH_UP_LIMIT:
            return None
        return upserted, removed

    def _set(self, rows: pa.Table, matrix: np.ndarray, scales: np.ndarray) -> None:
        self._made = {}
        self._rows = rows
        self._ids = rows.column("id").to_pylist()
        self._where = {i: n for n, i in enumerate(self._ids)}
        self._scope_index = {}
        self._scope_codes = self._codes(rows.column("scope").to_pylist())
        self._matrix, self._scales = matrix, scales

    def _codes(self, scopes: Sequence[str]) -> np.ndarray:
        return np.fromiter(
            (self._scope_index.setdefault(sc, len(self._scope_index)) for sc in scopes), np.int32, len(scopes)
        )

    def _apply(self, added: Sequence[Bullet], removed: Sequence[str]) -> None:
        assert self._rows is not None
        if self.keeps_terms:  # every active bullet, with a vector or without (stored while the model was away)
            self._lexical.update(
                [(b.id, b.scope, index_text(b)) for b in added if b.status is Status.ACTIVE],
                [*removed, *(b.id for b in added if b.status is not Status.ACTIVE)],
            )
        gone = {i for i in (*removed, *(b.id for b in added)) if i in self._where}
        rows, matrix, scales = self._rows, self._matrix, self._scales
        for i in (*removed, *(b.id for b in added)):
            self._made.pop(i, None)
        if gone:
            keep = np.fromiter((i not in gone for i in self._ids), dtype=bool, count=len(self._ids))
            rows, matrix, scales = rows.filter(pa.array(keep)), matrix[keep], scales[keep]
        new = [b for b in added if b.vector is not None and b.status is Status.ACTIVE]
        if not new:
            if gone:
                self._set(rows, matrix, scales)
            return
        fresh = bullets_table(new, len(new[0].vector or ()), terms=False).drop_columns(list(_SKIP))
        codes, new_scales = quantize(np.asarray([b.vector for b in new], dtype=np.float32))
        if gone or not rows.num_rows:
            rows = pa.concat_tables([rows, fresh.cast(rows.schema)]) if rows.num_rows else fresh
            if matrix.size:
                codes, new_scales = np.vstack([matrix, codes]), np.concatenate([scales, new_scales])
            self._set(rows, codes, new_scales)
            return
        # Only additions (the common write): extend in place instead of rebuilding the lookups.
        self._rows = pa.concat_tables([rows, fresh.cast(rows.schema)])
        start = len(self._ids)
        self._ids.extend(b.id for b in new)
        self._where.update({b.id: start + k for k, b in enumerate(new)})
        self._scope_codes = np.concatenate([self._scope_codes, self._codes([b.scope for b in new])])
        self._scales = np.concatenate([scales, new_scales])
        self._matrix = np.vstack([matrix, codes])

    def refresh(
        self,
        table: Any,
        columns: Sequence[str],
        get: Callable[[Sequence[str]], list[Bullet]],
        current: str | None = None,
    ) -> None:
        """Bring the copy up to ``table``'s current generation; ``get`` reads bullets by id, vectors included.
        ``current``: the generation the caller has just read (one read of the file instead of two)."""
        if (self._read() if current is None else current) == self._seen and self._rows is not None:
            return
        with self._mutating:  # concurrent calls that find the copy stale bring it up to date once
            current = self._read()
            if current == self._seen and self._rows is not None:
                return
            changed = None if self._seen is None or self._rows is None else self._changed_since(self._seen, current)
            if changed is not None:
                upserted, removed = changed
                fetched = get(sorted(upserted))
                gone = upserted - {b.id for b in fetched}  # deleted again since
                self._apply(fetched, [*removed, *gone])
                self._seen = current
                return
            self._reload(table, columns)
            self._seen = current
        pa.default_memory_pool().release_unused()  # give the scan's buffers back to the system
        trim_heap()

    def _reload(self, table: Any, columns: Sequence[str]) -> None:
        where = "status = 'active'"  # not "vector IS NOT NULL": that filter costs ~100 MB more at 100k
        total = int(table.count_rows(where))
        terms = self.keeps_terms
        reader = (
            table.search()
            .where(where)
            .select([c for c in columns if terms or c != "terms"])
            .limit(None)
            .to_batches(2048)
        )
        # Batch by batch, into one preallocated matrix of codes and compact copies of the other columns: the
        # scan's own buffers are let go at once, so the table with its vector column is never held whole (at
        # 100k bullets that doubled the peak memory).
        matrix = np.empty((total, self._dim_of(table)), dtype=np.int8)
        scales = np.empty(total, dtype=np.float32)
        filled, parts, lexical = 0, [], []
        for batch in reader:
            if terms:  # the lexical index holds the bullets without a vector too
                lexical.append(batch.select(["id", "scope", "terms"]))
                batch = batch.drop_columns(["terms"])
            if batch.column("vector").null_count:  # stored while the model was away: not in the copy
                batch = batch.filter(batch.column("vector").is_valid())
            if not batch.num_rows:
                continue
            if filled + batch.num_rows > len(matrix):  # rows added since the count
                matrix = np.concatenate([matrix, np.empty((batch.num_rows, matrix.shape[1]), np.int8)])
                scales = np.concatenate([scales, np.empty(batch.num_rows, np.float32)])
            block = batch.column("vector").flatten().to_numpy(zero_copy_only=False).reshape(batch.num_rows, -1)
            end = filled + batch.num_rows
            matrix[filled:end], scales[filled:end] = quantize(block)
            filled = end
            parts.append(pa.concat_batches([batch.drop_columns(["vector"])]))
        rows = pa.Table.from_batches(parts).combine_chunks() if parts else _empty_rows(reader.schema)
        parts.clear()
        if terms:
            if lexical:
                words = pa.Table.from_batches(lexical)
                ids, scopes = words.column("id").to_pylist(), words.column("scope").to_pylist()
                self._lexical.build(ids, scopes, words.column("terms"))
            else:
                self._lexical.build([], [], pa.array([], pa.string()))
        self._set(rows, matrix[:filled], scales[:filled])

    @staticmethod
    def _dim_of(table: Any) -> int:
        field = table.schema.field("vector")
        return int(field.type.list_size)

    def _arrays(self, scopes: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, list[int], _State]:
        ids, matrix, scales, scope_codes = self._ids, self._matrix, self._scales, self._scope_codes
        # A writer in another thread may be appending: use the rows that every array already holds.
        n = min(len(ids), len(matrix), len(scales), len(scope_codes))
        codes = [self._scope_index[sc] for sc in scopes if sc in self._scope_index]
        state = _State(tuple(scopes), n, (matrix, scales, scope_codes))
        return ids, matrix[:n], scales[:n], scope_codes[:n], codes, state

    def prepare(self, scopes: Sequence[str]) -> None:
        """Gather and widen the rows of ``scopes`` now, for this thread's next ``search`` of the same scopes
        while the copy is unchanged (a recall calls this while its query is being embedded)."""
        _, matrix, scales, scope_codes, codes, state = self._arrays(scopes)
        self._prepared.made = (state, gather(matrix, scales, scope_codes, codes))

    def unprepare(self) -> None:
        """Let go of what ``prepare`` made in this thread and no search used."""
        self._prepared.made = None

    def search(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` most similar active bullets of ``scopes`` with their cosine similarity."""
        ids, matrix, scales, scope_codes, codes, state = self._arrays(scopes)
        made = getattr(self._prepared, "made", None)
        self._prepared.made = None
        gathered = None
        if made is not None and made[0].same(state):  # prepared for these scopes in this very copy
            gathered = made[1]
            if gathered is None:
                return []
        return nearest(ids, matrix, scales, scope_codes, codes, vector, limit, gathered)

    def lexical_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best active bullets of ``scopes`` by BM25 of ``terms`` with store-level statistics
        (``lexical.py``), with their scores, best first."""
        with self._mutating:  # not while a write or a catch-up changes the postings
            return self._lexical.search(terms, scopes, limit)

    def snapshot(self) -> tuple[list[str], dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """The copy's ids, scope codes, int8 codes and scales as they are now (lists copied, arrays shared:
        a change replaces them rather than writing into them)."""
        with self._mutating:
            n = min(len(self._ids), len(self._matrix), len(self._scales), len(self._scope_codes))
            ids, scopes = list(self._ids[:n]), dict(self._scope_index)
            return ids, scopes, self._scope_codes[:n], self._matrix[:n], self._scales[:n]

    def similarities(self, ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Cosine similarity of ``vector`` to each of ``ids`` held in the copy."""
        where, matrix, scales = self._where, self._matrix, self._scales
        n = min(len(matrix), len(scales))
        held = [i for i in ids if where.get(i, n) < n]  # (rows a writer is appending: not yet)
        if not held:
            return {}
        positions = [where[i] for i in held]
        sims = (matrix[positions].astype(np.float32) @ self._unit(vector)) * scales[positions]
        return dict(zip(held, sims.tolist(), strict=True))

    @staticmethod
    def _unit(vector: Sequence[float]) -> np.ndarray:
        return unit(vector)

    def reinforce(self, counts: Mapping[str, int], now: datetime) -> None:
        """Mirror this process's recall counts in the copy (two column rewrites, no per-row Python)."""
        with self._mutating:  # not while a write or a catch-up replaces the rows
            if self._rows is None:
                return
            hits = [(self._where[i], n) for i, n in counts.items() if i in self._where]
            if not hits:
                return
            for i in counts:
                self._made.pop(i, None)
            positions = np.asarray([p for p, _ in hits])
            recalls = self._rows.column("recall_count").to_numpy(zero_copy_only=False).copy()
            recalls[positions] += np.asarray([n for _, n in hits], dtype=recalls.dtype)
            mask = np.zeros(self._rows.num_rows, dtype=bool)
            mask[positions] = True
            field = self._rows.schema.field("last_recalled_at")
            recalled = pc.if_else(pa.array(mask), pa.scalar(now, field.type), self._rows.column("last_recalled_at"))
            rows = self._rows.set_column(
                self._rows.schema.get_field_index("recall_count"), "recall_count", pa.array(recalls, pa.int32())
            )
            self._rows = rows.set_column(rows.schema.get_field_index("last_recalled_at"), field, recalled)

    def in_scopes(self, scopes: Sequence[str]) -> list[Bullet]:
        """Every bullet of the copy in ``scopes`` (without vectors)."""
        with self._mutating:  # the rows, their scopes and ids of one state
            codes = [self._scope_index[sc] for sc in scopes if sc in self._scope_index]
            if self._rows is None or not codes:
                return []
            positions = np.flatnonzero(np.isin(self._scope_codes, codes))
            if len(positions) > _MADE_LIMIT // 2:  # too many to keep: made and let go
                return table_to_bullets(self._rows.take(pa.array(positions)))
            ids = [self._ids[p] for p in positions.tolist()]
            made = self.bullets(ids)  # the ones already made, the others made and kept
            return [made[i] for i in ids]

    def adjacent(self, ids: Sequence[str], window: float) -> dict[str, list[str]]:
        """For each of ``ids`` held in the copy, the bullets written just before and just after it in its
        scope, when no more than ``window`` seconds apart. Bullets of one creation time were written as one
        batch (an import, a reflection's lessons): no order between them says which came next, so they are
        not each other's neighbours."""
        order, rank, times, codes = self._time_order()
        where = self._where
        n = len(order)
        found: dict[str, list[str]] = {}
        limit = int(window * 1_000_000)
        for i in ids:
            p = where.get(i, n)
            if p >= n:
                continue
            r = int(rank[p])
            near = []
            for q in (r - 1, r + 1):
                if 0 <= q < n:
                    o = int(order[q])
                    if codes[o] == codes[p] and 0 < abs(int(times[o]) - int(times[p])) <= limit:
                        near.append(self._ids[o])
            found[i] = near
        return found

    def _time_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows sorted by scope, then creation time, then position; each row's rank in that order, its
        creation time (µs) and scope code: computed once per state of the copy, read together."""
        with self._mutating:
            n = min(len(self._ids), len(self._scope_codes))
            key = (self._seen, n)
            if self._order_key != key or self._rows is None:
                if self._rows is None or n == 0:
                    self._times = np.zeros(0, np.int64)
                    order = np.zeros(0, np.int64)
                else:
                    self._times = self._rows.column("created_at").cast(pa.int64()).to_numpy()[:n]
                    order = np.lexsort((np.arange(n), self._times, self._scope_codes[:n]))
                rank = np.empty(len(order), np.int64)
                rank[order] = np.arange(len(order))
                self._order, self._rank, self._order_key = order, rank, key
                self._order_codes = self._scope_codes[:n]
            return self._order, self._rank, self._times, self._order_codes

    def bullets(self, ids: Sequence[str]) -> dict[str, Bullet]:
        """The copy's bullets for ``ids`` it holds, without their vectors (similarities come from
        ``similarities``; exact vectors from the table)."""
        with self._mutating:  # the rows and the Bullets made of them change together
            if self._rows is None:
                return {}
            made = self._made
            found = {i: made[i] for i in ids if i in made}
            positions = [self._where[i] for i in ids if i not in found and i in self._where]
            if positions:
                fresh = table_to_bullets(self._rows.take(positions))
                if len(made) + len(fresh) > _MADE_LIMIT:  # the older half goes (a dict keeps insertion order)
                    for old in list(made)[: len(made) // 2]:
                        del made[old]
                for b in fresh:
                    made[b.id] = found[b.id] = b
            return found
