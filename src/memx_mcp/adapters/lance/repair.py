"""``memx repair``: rebuild a damaged store from what is still on disk.

The folder is copied aside first (``store.damaged-TIMESTAMP`` beside it). A table whose manifests are gone
gets back memx's copy of its newest manifest (``recovery/``, kept at every write). Every row that can still
be read is read, a block at a time: a block that fails is split until the rows of the broken data file are
singled out, so one file cut short loses only its own rows. The rows go into fresh tables; ``meta.json``,
the indexes and the change counter are written anew."""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...files import atomic_write
from . import damage
from .lance import CONFLICTS, SCHEMA_VERSION
from .lock import file_lock
from .rows import bullet_schema, conflict_schema
from .vectors import VectorIndex

log = logging.getLogger(__name__)

_BLOCK = 1024


@dataclass
class TableRepair:
    name: str
    recovered: int = 0
    lost: int = 0  # rows the manifest counts that could not be read
    unreadable: bool = False  # nothing of it could be opened


@dataclass
class RepairResult:
    backup: Path
    problems: list[str]
    bullets: TableRepair
    conflicts: TableRepair
    notes: list[str] = field(default_factory=list)


def _meta(root: Path) -> dict[str, Any]:
    try:
        meta = json.loads((root / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _bullets_name(root: Path, meta: dict[str, Any]) -> str:
    """The table meta names, else the newest bullets table found on disk or in the manifest copies."""
    if isinstance(meta.get("bullets_table"), str):
        return str(meta["bullets_table"])
    folders = [p for p in damage.table_folders(root / "lance") if p.name.startswith("bullets")]
    kept = [p for p in (root / "recovery").glob("bullets*") if p.is_dir()]
    candidates = sorted([*folders, *kept], key=lambda p: p.stat().st_mtime, reverse=True)
    return candidates[0].name.removesuffix(".lance") if candidates else "bullets"


def _backup(root: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = root.with_name(f"{root.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        target, n = root.with_name(f"{root.name}.damaged-{stamp}-{n}"), n + 1
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("write.lock"))
    return target


def _restore_manifest(root: Path, name: str, notes: list[str]) -> None:
    folder = damage.table_dir(root / "lance", name)
    copies = sorted((root / "recovery" / name).glob("*.manifest"))
    if damage.manifests(folder) or not copies:
        return
    versions = folder / "_versions"
    versions.mkdir(parents=True, exist_ok=True)
    for copy in copies:
        shutil.copyfile(copy, versions / copy.name)
    notes.append(f"{name}: its manifests were gone; memx's copy of the newest one was put back")


def _blocks(table: Any, start: int, count: int) -> Iterator[pa.Table | int]:
    """Rows ``start .. start+count`` of ``table`` as tables, and for rows that cannot be read, how many."""
    try:
        yield table.search().offset(start).limit(count).to_arrow()
        return
    except Exception as exc:
        if count == 1:
            log.info("row %d unreadable: %s", start, exc)
            yield 1
            return
    half = count // 2
    yield from _blocks(table, start, half)
    yield from _blocks(table, start + half, count - half)


def _read_table(db: Any, name: str) -> tuple[TableRepair, list[pa.Table]]:
    result = TableRepair(name)
    try:
        table = db.open_table(name)
        total = int(table.count_rows())
    except Exception as exc:
        log.info("%s cannot be opened: %s", name, exc)
        result.unreadable = True
        return result, []
    parts: list[pa.Table] = []
    for start in range(0, total, _BLOCK):
        for part in _blocks(table, start, min(_BLOCK, total - start)):
            if isinstance(part, int):
                result.lost += part
            elif part.num_rows:
                parts.append(part)
                result.recovered += part.num_rows
    return result, parts


def _fit(parts: list[pa.Table], schema: pa.Schema, notes: list[str]) -> pa.Table:
    """The recovered rows in ``schema``; vectors of another size (an unknown model) become null, to be
    embedded again by ``memx reindex``."""
    if not parts:
        return schema.empty_table()
    rows = pa.concat_tables(parts, promote_options="permissive")
    if "vector" in schema.names and rows.schema.field("vector").type != schema.field("vector").type:
        rows = rows.set_column(
            rows.schema.get_field_index("vector"), "vector", pa.nulls(rows.num_rows, schema.field("vector").type)
        )
        notes.append("the recovered vectors were made by another model: run `memx reindex` to embed them again")
    return rows.select(schema.names).cast(schema)


def repair(root: Path, model_name: str, dim: int, lock_wait: float = 30.0) -> RepairResult:
    """Back ``root`` up, then rebuild its tables from every row that can be read. Holds the write lock."""
    from .lancedb_import import load

    lancedb = load()

    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    with file_lock(root / "write.lock", lock_wait):
        meta = _meta(root)
        name = _bullets_name(root, meta)
        found = damage.inspect(root, name if meta else None, (name, CONFLICTS))
        backup = _backup(root)
        notes: list[str] = []
        for table_name in (name, CONFLICTS):
            _restore_manifest(root, table_name, notes)
        db = lancedb.connect(str(root / "lance"))
        bullets, bullet_rows = _read_table(db, name)
        conflicts, conflict_rows = _read_table(db, CONFLICTS)
        fresh_bullets = _fit(bullet_rows, bullet_schema(dim), notes)
        fresh_conflicts = _fit(conflict_rows, conflict_schema(), notes)
        new_name = f"bullets_{int(time.time() * 1000)}"
        for old in (name, CONFLICTS):
            shutil.rmtree(damage.table_dir(root / "lance", old), ignore_errors=True)
        shutil.rmtree(root / "recovery", ignore_errors=True)
        db = lancedb.connect(str(root / "lance"))
        db.create_table(new_name, fresh_bullets, schema=bullet_schema(dim))
        db.create_table(CONFLICTS, fresh_conflicts, schema=conflict_schema())
        meta.update(
            schema_version=SCHEMA_VERSION,
            model=model_name,
            dim=dim,
            bullets_table=new_name,
            repaired_at=datetime.now().astimezone().isoformat(),
        )
        meta.setdefault("created_at", meta["repaired_at"])
        atomic_write(root / "meta.json", json.dumps(meta, indent=2))
        VectorIndex(root / "generation").bump(exact=False)  # every process reloads its copy
    return RepairResult(backup, found.problems, bullets, conflicts, notes)
