"""What is on disk in a store folder, and what is wrong with it.

A LanceDB table is a folder ``NAME.lance`` holding ``_versions/*.manifest`` (which data files make up each
version), ``data/*.lance`` (the rows; every complete file ends with the magic bytes ``LANC``) and
``_indices``. Without its manifests LanceDB reports the table as absent and would create a new empty one
over the old rows; without ``meta.json`` memx would start a new table. These checks tell damage from a
store that was never written, so that memx refuses to go on silently and points to ``memx repair``."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from pathlib import Path

from ...domain.errors import DiskFullError, MemxError, StoreDamagedError

MAGIC = b"LANC"
REPAIR_HINT = "run `memx repair` (it backs the folder up first, then rebuilds what can be read)"


def table_dir(lance_dir: Path, name: str) -> Path:
    return lance_dir / f"{name}.lance"


def manifests(folder: Path) -> list[Path]:
    versions = folder / "_versions"
    return sorted(versions.glob("*.manifest")) if versions.is_dir() else []


def data_files(folder: Path) -> list[Path]:
    data = folder / "data"
    return sorted(data.glob("*.lance")) if data.is_dir() else []


def truncated(folder: Path) -> list[Path]:
    """Data files that do not end with Lance's magic bytes: cut short (a full disk, a copy interrupted)."""
    bad = []
    for path in data_files(folder):
        try:
            with path.open("rb") as f:
                size = f.seek(0, 2)
                f.seek(max(0, size - len(MAGIC)))
                if size < len(MAGIC) or f.read() != MAGIC:
                    bad.append(path)
        except OSError:
            bad.append(path)
    return bad


def table_folders(lance_dir: Path) -> list[Path]:
    return sorted(p for p in lance_dir.glob("*.lance") if p.is_dir()) if lance_dir.is_dir() else []


@dataclass
class Findings:
    """What a look at the folder found wrong; empty ``problems`` means nothing was found."""

    problems: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.problems)

    def message(self, root: Path) -> str:
        return f"the store at {root} is damaged: " + "; ".join(self.problems) + f". To fix it, {REPAIR_HINT}."


def ever_written(root: Path) -> bool:
    """Any sign that bullets were stored here: the generation counter beside the store (bumped by every
    write of a bullet) or memx's copy of a table's manifest (kept at every write)."""
    return (root / "generation").exists() or any((root / "recovery").glob("*/*.manifest"))


def inspect(root: Path, bullets_table: str | None, tables: tuple[str, ...]) -> Findings:
    """Damage that opening would otherwise hide: tables present without ``meta.json``, a table folder
    without manifests, a table that was written but is gone, data files cut short."""
    found = Findings()
    lance_dir = root / "lance"
    if bullets_table is None:
        present = [p.name for p in table_folders(lance_dir) if manifests(p) or data_files(p)]
        if present:
            found.problems.append(f"meta.json is missing, but the folder holds the tables {', '.join(present)}")
        return found
    for name in tables:
        folder = table_dir(lance_dir, name)
        if folder.is_dir() and not manifests(folder):
            found.problems.append(
                f"the table {name} has lost its manifests ({folder / '_versions'}): "
                f"{len(data_files(folder))} data file(s) are unreachable"
            )
        elif not folder.is_dir() and ever_written(root):
            found.problems.append(
                f"the table folder {folder} is gone with its data files, but bullets were stored here (what it "
                "held can only come back from a copy of that folder, or a `memx export` file through `memx import`)"
            )
        cut = truncated(folder) if folder.is_dir() else []
        if cut:
            found.problems.append(
                f"{len(cut)} data file(s) of the table {name} are cut short ({', '.join(p.name for p in cut[:3])})"
            )
    return found


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    text = str(exc)
    return "os error 28" in text or "No space left on device" in text


def is_unreadable(exc: BaseException) -> bool:
    """A Lance read error that means files of the table are missing or broken (not a bad query)."""
    text = str(exc)
    return "LanceError(IO)" in text or ("Not found" in text and ".lance" in text) or "Invalid range" in text


def disk_full_message(what: str) -> str:
    return (
        f"the disk is full (no space left on device): this write ({what}) was not stored; free some space and try again"
    )


def explain(exc: BaseException, root: Path) -> MemxError | None:
    """The error a person can act on for a failure that reached an edge unnamed: a full disk, or a table
    whose files are broken (with what a look at the folder finds); None for anything else."""
    if isinstance(exc, MemxError):
        return None
    if is_disk_full(exc):
        return DiskFullError(disk_full_message(type(exc).__name__))
    if is_unreadable(exc):
        cut = [p for folder in table_folders(root / "lance") for p in truncated(folder)]
        found = f"{len(cut)} data file(s) cut short ({', '.join(p.name for p in cut[:3])})" if cut else str(exc)[:300]
        return StoreDamagedError(f"the store at {root} is damaged: {found}. To fix it, {REPAIR_HINT}.")
    return None
