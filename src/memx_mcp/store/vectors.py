"""An in-memory copy of the store's vectors: the brute-force index that vector candidates come from.

A numpy matrix product over 10k × 384 vectors takes well under a millisecond (LanceDB's flat search took
~20 ms here). Every write that adds, removes, re-embeds or archives a bullet bumps a generation counter in
a file beside the store; a reader reloads its copy when the counter moved, so other processes' writes are
seen by the next search."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class VectorIndex:
    def __init__(self, generation_file: Path) -> None:
        self._file = generation_file
        self._seen: str | None = None
        self._ids: list[str] = []
        self._scopes = np.array([], dtype=object)
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def bump(
        self,
        added: Sequence[tuple[str, str, Sequence[float] | None]] = (),
        removed: Sequence[str] = (),
        exact: bool = True,
    ) -> None:
        """Called by writers, under the store's write lock. When this copy was current and the change is
        known exactly (``added`` rows of id, scope, vector; ``removed`` ids), it is updated in place
        instead of reloaded; other processes reload on their next search."""
        before = self._read()
        value = str(int(before or 0) + 1)
        tmp = self._file.with_name(f"{self._file.name}.{os.getpid()}.tmp")
        tmp.write_text(value)
        tmp.replace(self._file)
        if exact and self._seen is not None and self._seen == before:
            self._apply(added, removed)
            self._seen = value

    def _apply(self, added: Sequence[tuple[str, str, Sequence[float] | None]], removed: Sequence[str]) -> None:
        gone = set(removed) | {i for i, _, _ in added}
        if gone and self._ids:
            keep = np.fromiter((i not in gone for i in self._ids), dtype=bool, count=len(self._ids))
            self._ids = [i for i, k in zip(self._ids, keep, strict=True) if k]
            self._scopes = self._scopes[keep]
            self._matrix = self._matrix[keep]
        rows = [(i, s, v) for i, s, v in added if v is not None]
        if rows:
            new = np.asarray([v for _, _, v in rows], dtype=np.float32)
            new /= np.where((n := np.linalg.norm(new, axis=1, keepdims=True)) == 0, 1, n)
            self._matrix = new if self._matrix.size == 0 else np.vstack([self._matrix, new])
            self._ids = [*self._ids, *(i for i, _, _ in rows)]
            self._scopes = np.concatenate([self._scopes, np.asarray([s for _, s, _ in rows], dtype=object)])

    def _read(self) -> str:
        try:
            return self._file.read_text().strip()
        except OSError:
            return ""

    def refresh(self, table: Any) -> None:
        current = self._read()
        if current == self._seen and self._seen is not None:
            return
        data = (
            table.search()
            .where("status = 'active' AND vector IS NOT NULL")
            .select(["id", "scope", "vector"])
            .limit(None)
            .to_arrow()
        )
        self._ids = data.column("id").to_pylist()
        self._scopes = np.asarray(data.column("scope").to_pylist(), dtype=object)
        if len(self._ids):
            flat = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
            matrix = flat.astype(np.float32).reshape(len(self._ids), -1)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self._matrix = matrix / np.where(norms == 0, 1, norms)
        else:
            self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._seen = current

    def search(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` most similar active bullets of ``scopes`` with their cosine similarity."""
        if not self._ids:
            return []
        mask = np.isin(self._scopes, list(scopes))
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        sims = self._matrix[rows] @ q
        k = min(limit, rows.size)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(self._ids[rows[i]], float(sims[i])) for i in top]
