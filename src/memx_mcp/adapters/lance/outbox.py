"""The team store's outbox: writes to team scopes made while the object store does not answer, kept on this
machine's disk and sent, in the order they were made, once it answers again.

- One file per write (``<nanoseconds>-<pid>-<n>.arrow`` in ``MEMX_HOME/team/outbox``): an Arrow IPC file
  whose rows are the bullets (or conflict records) of the write, masked by the team store's guard before they
  get here, and whose schema metadata says which write it is. Written to a temporary name, flushed to disk,
  then renamed: a reader sees a whole entry or none, and an entry survives the process that made it.
- Every process of the machine shares the folder (the server, the CLI, hooks): whichever reaches the store
  sends them, under the team store's write lock, deleting each entry once its write is stored. Sending is
  idempotent (bullets merged by id, conflicts inserted when absent, a status set twice is set) except
  recall counts, which a crash between storing and deleting could count twice.
- An entry the store refuses for good (the bucket gone, read-only credentials) is set aside in ``failed/``,
  with a log line, never deleted."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...domain.models import Bullet, Conflict
from .rows import bullet_schema, bullets_table, conflict_schema, conflict_to_row, row_to_conflict, table_to_bullets

OP = b"memx_op"
ARGS = b"memx_args"
_count = itertools.count()


@dataclass(frozen=True)
class Entry:
    """One kept write: what to do (``op``), its arguments, and its rows."""

    path: Path
    op: str
    args: dict[str, Any]
    rows: pa.Table

    def bullets(self) -> list[Bullet]:
        return table_to_bullets(self.rows)

    def conflicts(self) -> list[Conflict]:
        return [row_to_conflict(r) for r in self.rows.to_pylist()]


class Outbox:
    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)

    # -- keeping ----------------------------------------------------------------------------------------

    def upsert(self, bullets: list[Bullet]) -> None:
        self._put("upsert", {}, bullets_table(bullets, self.dim))

    def set_status(self, ids: list[str], status: str, now: datetime) -> None:
        self._put("set_status", {"ids": ids, "status": status, "now": now.isoformat()})

    def delete(self, ids: list[str]) -> None:
        self._put("delete", {"ids": ids})

    def add_conflicts(self, conflicts: list[Conflict]) -> None:
        table = pa.Table.from_pylist([conflict_to_row(c) for c in conflicts], schema=conflict_schema())
        self._put("conflicts", {}, table)

    def recalls(self, counts: Mapping[str, int], now: datetime) -> None:
        self._put("recalls", {"counts": dict(counts), "now": now.isoformat()})

    def _put(self, op: str, args: dict[str, Any], rows: pa.Table | None = None) -> None:
        table = rows if rows is not None else bullet_schema(self.dim).empty_table()
        table = table.replace_schema_metadata({OP: op.encode(), ARGS: json.dumps(args).encode()})
        name = f"{datetime.now().timestamp() * 1e9:020.0f}-{os.getpid()}-{next(_count):06d}.arrow"
        target = self.folder / name
        tmp = self.folder / f".{name}.tmp"
        try:
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            os.chmod(tmp, 0o600)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            tmp.replace(target)
            fd = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise

    # -- sending ----------------------------------------------------------------------------------------

    def entries(self) -> list[Path]:
        """The kept writes, oldest first."""
        return sorted(self.folder.glob("*.arrow"))

    def __len__(self) -> int:
        return len(self.entries())

    def read(self, path: Path) -> Entry:
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        meta = table.schema.metadata or {}
        return Entry(path, meta[OP].decode(), json.loads(meta[ARGS]), table.replace_schema_metadata(None))

    def done(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def set_aside(self, path: Path) -> Path:
        failed = self.folder / "failed"
        failed.mkdir(exist_ok=True, mode=0o700)
        target = failed / path.name
        path.replace(target)
        return target

    def set_aside_count(self) -> int:
        failed = self.folder / "failed"
        return len(list(failed.glob("*.arrow"))) if failed.exists() else 0
