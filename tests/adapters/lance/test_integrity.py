"""The store under pressure: another process holding the write lock, a purge that must erase now, a
garbage change counter, a full disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import SCHEMA_VERSION, LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.errors import DiskFullError, StoreBusyError
from memx_mcp.files import atomic_write
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder
from memx_mcp.text.tokenize import query_terms

from ...conftest import MODEL
from ...helpers import run_memx as memx
from .test_lance import bullet

HOLDER = """import sys
from pathlib import Path
from memx_mcp.adapters.lance.lock import file_lock
with file_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def hold_write_lock(store: Path) -> Iterator[None]:
    """Another process holds the store's write lock (as a long import does) until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store / "write.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(30)


def test_reading_commands_answer_while_another_process_writes_and_a_write_says_busy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    stored = memx(home, "remember", "Use pytest -n auto to run the suite in parallel", "--json")
    assert stored.returncode == 0, stored.stderr
    with hold_write_lock(home / "store"):
        found = memx(home, "recall", "run the tests in parallel", "--json", MEMX_LOCK_WAIT_SECONDS="3")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["content"].startswith("Use pytest -n auto")
        listed = memx(home, "stats", "--json", MEMX_LOCK_WAIT_SECONDS="3")
        assert listed.returncode == 0 and json.loads(listed.stdout)["total"] == 1
        blocked = memx(home, "remember", "Prefer ruff over black", MEMX_LOCK_WAIT_SECONDS="1")
        assert blocked.returncode == 1 and "the store is busy" in blocked.stderr
        assert f"process {os.getpid()}" not in blocked.stderr  # names the holder, not itself
    again = memx(home, "remember", "Prefer ruff over black", "--json")
    assert again.returncode == 0, again.stderr


def test_a_store_opens_and_reads_without_the_lock_and_builds_missing_indexes_once_it_is_free(tmp_path: Path) -> None:
    root = tmp_path / "store"
    first = LanceStore(root, MODEL, 4)
    first.add([bullet(1, "redis pool size advice")])
    first._bullets.drop_index("scope_idx")  # as a store made before that index
    with hold_write_lock(root):
        reader = LanceStore(root, MODEL, 4, lock_wait=0.5)
        assert [b.id for b in reader.keyword_candidates(query_terms("redis"), ["global"], 5)] == ["b_0001"]
        assert ("scope",) not in {tuple(ix.columns) for ix in reader._bullets.list_indices()}
        with pytest.raises(StoreBusyError, match="busy"):
            reader.add([bullet(2)])
    reader.add([bullet(2)])
    assert reader.count() == 2
    reopened = LanceStore(root, MODEL, 4)
    assert ("scope",) in {tuple(ix.columns) for ix in reopened._bullets.list_indices()}


HALF_MADE = """import json, sys
from pathlib import Path
from memx_mcp.adapters.lance.lock import file_lock
root = Path(sys.argv[1])
root.mkdir(parents=True)
with file_lock(root / "write.lock"):
    meta = {"schema_version": int(sys.argv[2]), "model": sys.argv[3], "dim": 4, "bullets_table": "bullets"}
    (root / "meta.json").write_text(json.dumps(meta))
    (root / "lance" / "bullets.lance").mkdir(parents=True)  # a table begun, its manifest not yet written
    print("half", flush=True)
    sys.stdin.readline()
    (root / "lance" / "bullets.lance").rmdir()
"""


def test_a_store_another_process_is_creating_is_waited_for_not_reported_damaged(tmp_path: Path) -> None:
    root = tmp_path / "store"
    creator = subprocess.Popen(
        [sys.executable, "-c", HALF_MADE, str(root), str(SCHEMA_VERSION), MODEL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert creator.stdout is not None and creator.stdout.readline().strip() == "half"
    opened: list[LanceStore | BaseException] = []

    def open_store() -> None:
        try:
            opened.append(LanceStore(root, MODEL, 4, lock_wait=30))
        except BaseException as exc:  # the test reads it
            opened.append(exc)

    opener = threading.Thread(target=open_store)
    opener.start()
    opener.join(1.0)
    assert opened == []  # waiting for the creator's lock, not refusing a store that is half made
    assert creator.stdin is not None
    creator.stdin.write("\n")
    creator.stdin.close()
    creator.wait(30)
    opener.join(60)
    store = opened[0]
    assert isinstance(store, LanceStore), store
    store.add([bullet(1, "redis pool size advice")])
    assert store.count() == 1


def _files_holding(root: Path, needle: bytes) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and needle in path.read_bytes().lower():
            hits.append(str(path.relative_to(root)))
    return hits


def test_forget_purge_erases_the_text_from_every_file_of_the_data_folder(memory: Memory, settings: Settings) -> None:
    secret = "zebraquokka7731"
    victim = memory.remember(f"Deploy the billing service with --flag {secret} on Fridays only", scope="global")
    memory.remember("Deploy the billing service with the blue-green script", scope="global")
    memory.recall("deploy the billing service", scope="global")  # reinforcement rewrites the row: more copies
    memory.store.optimize()  # a compaction keeps it in the new files and the full-text index
    assert _files_holding(settings.home, secret.encode()), "the text is on disk before the purge"

    memory.forget([victim.bullet.id], purge=True)

    assert _files_holding(settings.home, secret.encode()) == []
    assert memory.recall("deploy the billing service", scope="global").hits  # the rest still answers


def test_a_garbage_generation_file_is_treated_as_unknown_and_rewritten(tmp_path: Path) -> None:
    root = tmp_path / "store"
    writer = LanceStore(root, MODEL, 4)
    reader = LanceStore(root, MODEL, 4)
    writer.add([bullet(1)])
    assert [b.id for b, _ in reader.similar(bullet(1).vector or (), ["global"], 5)] == ["b_0001"]
    (root / "generation").write_bytes(b"\x00garbage\xff")

    writer.add([bullet(2)])  # failed with ValueError before
    writer.upsert([bullet(2, "bullet two, edited")])

    assert (root / "generation").read_text().isdigit()
    seen = {b.id for b, _ in reader.similar(bullet(2).vector or (), ["global"], 5)}
    assert {"b_0001", "b_0002"} <= seen  # the other process's copy caught up


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 16 MB filesystem (tmpfs) that fills up; skipped where it cannot be mounted."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _leave_free(filler: Path, leave: int) -> None:
    """Grow or shrink ``filler`` so that about ``leave`` bytes of its disk stay free."""
    stat = os.statvfs(filler.parent)
    free = stat.f_bavail * stat.f_frsize
    size = filler.stat().st_size if filler.exists() else 0
    target = max(0, size + free - leave)
    with filler.open("ab") as f:
        if target > size:
            os.posix_fallocate(f.fileno(), 0, target)
        else:
            f.truncate(target)


def test_a_full_disk_is_reported_as_such_and_a_remember_reported_failed_was_not_stored(
    small_disk: Path, embedder: FastEmbedEmbedder
) -> None:
    settings = Settings(home=small_disk / "home", scope="project:demo")
    memory = Memory(settings, LanceStore(settings.home / "store", MODEL, 384), ReadyEmbedder(embedder))
    memory.remember("Port 8080 is the API port in this project", scope="global")
    filler = small_disk / "filler"
    outcomes = {"stored": 0, "disk full": 0}
    for n, leave in enumerate(range(0, 240_000, 8_000)):
        _leave_free(filler, leave)
        text = f"Port {9000 + n} is not the API port in this project, note {n}"
        try:
            result = memory.remember(text, scope="global")
        except DiskFullError as exc:
            assert "disk is full" in str(exc)
            assert memory.store.find_content(text, "global") is None, "reported failed, yet stored"
            outcomes["disk full"] += 1
        else:
            assert memory.store.get([result.bullet.id]), "reported stored, yet absent"
            outcomes["stored"] += 1
    assert outcomes["disk full"] and outcomes["stored"], outcomes


def test_a_state_file_written_on_a_full_disk_leaves_no_half_written_copy(small_disk: Path) -> None:
    target = small_disk / "generation"
    atomic_write(target, "41")
    _leave_free(small_disk / "filler", 0)
    with pytest.raises(OSError):
        atomic_write(target, "x" * 200_000)
    assert target.read_text() == "41"
    assert not list(small_disk.glob("*.tmp"))
