"""The conflicts table of the store (a mixin of LanceStore)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from ...domain.models import Conflict
from .rows import conflict_to_row, row_to_conflict
from .sql import _retry, sql_list, sql_str


class ConflictTable:
    _conflicts: Any

    def write_lock(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _keep_manifest(self, name: str) -> None:
        raise NotImplementedError

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        if conflicts:
            with self.write_lock():
                rows = [conflict_to_row(c) for c in conflicts]
                _retry(lambda: self._conflicts.add(rows), "add_conflicts")
                self._keep_manifest("conflicts")

    def conflicts(self, scopes: Sequence[str], status: str = "open") -> list[Conflict]:
        where = f"status = {sql_str(status)} AND scope IN {sql_list(scopes)}"
        return [row_to_conflict(r) for r in self._conflicts.search().where(where).limit(100_000).to_list()]

    def get_conflict(self, conflict_id: str) -> Conflict | None:
        rows = self._conflicts.search().where(f"id = {sql_str(conflict_id)}").limit(1).to_list()
        return row_to_conflict(rows[0]) if rows else None

    def conflict_pairs(self) -> set[frozenset[str]]:
        """Every recorded pair of bullet ids, whatever its status (a scan never records one twice)."""
        table = self._conflicts.to_arrow().select(["a_id", "b_id"]).to_pylist()
        return {frozenset((r["a_id"], r["b_id"])) for r in table}

    def resolve_conflicts(self, ids: Sequence[str], resolution: str) -> None:
        if ids:
            with self.write_lock():
                _retry(
                    lambda: self._conflicts.update(
                        where=f"id IN {sql_list(ids)}", values={"status": "resolved", "resolution": resolution}
                    ),
                    "resolve_conflicts",
                )
                self._keep_manifest("conflicts")

    def rescope_conflicts(self, ids: Sequence[str], scope: str) -> None:
        """Move conflict records to ``scope`` (their bullets moved there: ``usecases/legacy_scopes.py``)."""
        if ids:
            with self.write_lock():
                _retry(
                    lambda: self._conflicts.update(where=f"id IN {sql_list(ids)}", values={"scope": scope}),
                    "rescope_conflicts",
                )
                self._keep_manifest("conflicts")

    def count_conflicts(self, status: str = "open") -> int:
        return int(self._conflicts.count_rows(f"status = {sql_str(status)}"))
