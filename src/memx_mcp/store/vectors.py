"""An in-memory copy of the store's active bullets and their vectors: the brute-force index that vector
candidates come from, and the rows that scoring reads without another query.

A numpy matrix product over 10k × 384 vectors takes well under a millisecond (LanceDB's flat search took
~20 ms here). Every write that adds, removes, re-embeds or archives a bullet bumps a generation counter in
a file beside the store; this process applies its own changes in place, and any process whose copy is
behind reloads it on its next search. Recall counts written by reinforcement do not bump the counter, so
the copy's counts may lag (they only nudge the decay weight); writes always read fresh rows."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..models import Bullet, Status
from .rows import bullets_table, row_to_bullet

_SKIP = ("terms", "vector")


class VectorIndex:
    def __init__(self, generation_file: Path) -> None:
        self._file = generation_file
        self._seen: str | None = None
        self._ids: list[str] = []
        self._where: dict[str, int] = {}
        self._scopes = np.array([], dtype=object)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._rows: pa.Table | None = None

    def _read(self) -> str:
        try:
            return self._file.read_text().strip()
        except OSError:
            return ""

    def bump(self, added: Sequence[Bullet] = (), removed: Sequence[str] = (), exact: bool = True) -> None:
        """Called by writers, under the store's write lock. When this copy was current and the change is
        known exactly, it is updated in place; other processes reload on their next search."""
        before = self._read()
        value = str(int(before or 0) + 1)
        tmp = self._file.with_name(f"{self._file.name}.{os.getpid()}.tmp")
        tmp.write_text(value)
        tmp.replace(self._file)
        if exact and self._seen is not None and self._seen == before and self._rows is not None:
            self._apply(added, removed)
            self._seen = value

    def _set(self, rows: pa.Table, matrix: np.ndarray, normalized: bool = False) -> None:
        self._rows = rows
        self._ids = rows.column("id").to_pylist()
        self._where = {i: n for n, i in enumerate(self._ids)}
        self._scopes = np.asarray(rows.column("scope").to_pylist(), dtype=object)
        if matrix.size and normalized:
            self._matrix = matrix
        elif matrix.size:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self._matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        else:
            self._matrix = np.zeros((0, 0), dtype=np.float32)

    def _apply(self, added: Sequence[Bullet], removed: Sequence[str]) -> None:
        assert self._rows is not None
        gone = {i for i in (*removed, *(b.id for b in added)) if i in self._where}
        rows, matrix = self._rows, self._matrix
        if gone:
            keep = np.fromiter((i not in gone for i in self._ids), dtype=bool, count=len(self._ids))
            rows, matrix = rows.filter(pa.array(keep)), matrix[keep]
        new = [b for b in added if b.vector is not None and b.status is Status.ACTIVE]
        if not new:
            if gone:
                self._set(rows, matrix, normalized=True)
            return
        fresh = bullets_table(new, len(new[0].vector or ())).drop_columns(list(_SKIP))
        vectors = np.asarray([b.vector for b in new], dtype=np.float32)
        vectors /= np.where((n := np.linalg.norm(vectors, axis=1, keepdims=True)) == 0, 1, n)
        if gone or not rows.num_rows:
            rows = pa.concat_tables([rows, fresh.cast(rows.schema)]) if rows.num_rows else fresh
            self._set(rows, vectors if matrix.size == 0 else np.vstack([matrix, vectors]), normalized=True)
            return
        # Only additions (the common write): extend in place instead of rebuilding the lookups.
        self._rows = pa.concat_tables([rows, fresh.cast(rows.schema)])
        start = len(self._ids)
        self._ids.extend(b.id for b in new)
        self._where.update({b.id: start + k for k, b in enumerate(new)})
        self._scopes = np.concatenate([self._scopes, np.asarray([b.scope for b in new], dtype=object)])
        self._matrix = np.vstack([matrix, vectors])

    def refresh(self, table: Any, columns: Sequence[str]) -> None:
        current = self._read()
        if current == self._seen and self._rows is not None:
            return
        data = (
            table.search()
            .where("status = 'active' AND vector IS NOT NULL")
            .select([c for c in columns if c != "terms"])
            .limit(None)
            .to_arrow()
        )
        if data.num_rows:
            flat = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
            matrix = flat.astype(np.float32).reshape(data.num_rows, -1)
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        self._set(data.drop_columns(["vector"]), matrix)
        self._seen = current

    def search(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` most similar active bullets of ``scopes`` with their cosine similarity."""
        if not self._ids:
            return []
        rows = np.flatnonzero(np.isin(self._scopes, list(scopes)))
        if rows.size == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        sims = self._matrix[rows] @ q
        k = min(limit, rows.size)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(self._ids[rows[i]], float(sims[i])) for i in top]

    def reinforce(self, ids: Sequence[str], now: datetime) -> None:
        """Mirror this process's recall counts in the copy (a cheap column rewrite)."""
        if self._rows is None:
            return
        positions = [self._where[i] for i in ids if i in self._where]
        if not positions:
            return
        counts = self._rows.column("recall_count").to_numpy(zero_copy_only=False).copy()
        counts[positions] += 1
        recalled = self._rows.column("last_recalled_at").to_pylist()
        for pos in positions:
            recalled[pos] = now
        rows = self._rows.set_column(
            self._rows.schema.get_field_index("recall_count"), "recall_count", pa.array(counts, pa.int32())
        )
        field = rows.schema.field("last_recalled_at")
        self._rows = rows.set_column(
            rows.schema.get_field_index("last_recalled_at"), field, pa.array(recalled, field.type)
        )

    def bullets(self, ids: Sequence[str]) -> dict[str, Bullet]:
        """The copy's bullets for ``ids`` it holds (with their vectors)."""
        if self._rows is None:
            return {}
        positions = [self._where[i] for i in ids if i in self._where]
        if not positions:
            return {}
        out = {}
        for pos, row in zip(positions, self._rows.take(positions).to_pylist(), strict=True):
            row["vector"] = self._matrix[pos].tolist()
            b = row_to_bullet(row)
            out[b.id] = b
        return out
