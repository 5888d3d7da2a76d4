"""The queue of sessions a model is to read loses nothing: each due session read once per queueing (a session
queued again while it is read is read again, for its new turns), a rate limit stopping the run with the
session left for later, a corrupt job set aside with a log line while the others run, a session that could
not be queued on a full disk picked up by the next hook or worker run, a worker that died mid-reading."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memx_mcp.config import Settings
from memx_mcp.hooks import queue
from memx_mcp.hooks.logs import logger
from memx_mcp.hooks.queue import QueuedSession
from memx_mcp.hooks.sessions import reflect_now, reflect_session

from . import sessions

LOG = logging.getLogger("test")


def transcripts(tmp_path: Path, *names: str) -> list[Path]:
    paths = []
    for name in names:
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
        paths.append(tmp_path / f"{name}.jsonl")
    return paths


def ended(path: Path, event: str = "SessionEnd") -> QueuedSession:
    return QueuedSession(event, path, f"session:{path.stem}", str(path.parent))


def jobs(settings: Settings) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(queue.queue_folder(settings).glob("*.json"))]


def test_every_due_session_is_read_once_and_one_queued_meanwhile_too(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b, c = transcripts(tmp_path, "a", "b", "c")
    for path in (a, b):
        assert queue.enqueue(settings, ended(path))
    read: list[str] = []

    def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        read.append(session.transcript.stem)
        if session.transcript == a:  # another session ends while the worker reads this one
            queue.enqueue(s, ended(c))
        return "", 0.0

    assert queue.work(settings, LOG, reflect) == 3
    assert sorted(read) == ["a", "b", "c"] and len(read) == 3
    assert jobs(settings) == [] and list(queue.queue_folder(settings).glob("*.reading")) == []


def test_a_session_queued_again_while_it_is_read_is_read_again_for_its_new_turns(tmp_path: Path) -> None:
    """PreCompact then SessionEnd (Codex and Cursor: every turn): the worker used to delete the newer job."""
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    (a,) = transcripts(tmp_path, "a")
    queue.enqueue(settings, ended(a, "PreCompact"))
    seen_lines: list[int] = []

    def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        seen_lines.append(len(session.transcript.read_text().splitlines()))
        if len(seen_lines) == 1:  # the session goes on and ends while its first part is read
            with session.transcript.open("a") as f:
                f.write('{"turn": 2}\n{"turn": 3}\n')
            assert queue.enqueue(s, ended(a, "SessionEnd"))
            assert queue.work(s, LOG, reflect) == 0  # the hook's own worker finds this one reading
        return "", 0.0

    assert queue.work(settings, LOG, reflect) == 2
    assert seen_lines == [1, 3]  # the second reading saw the turns written after the first began
    assert jobs(settings) == []


def test_a_failure_puts_the_job_back_without_overwriting_a_newer_one(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    (a,) = transcripts(tmp_path, "a")
    queue.enqueue(settings, ended(a, "PreCompact"))
    calls: list[str] = []

    def failing(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        calls.append(session.event)
        if len(calls) == 1:
            queue.enqueue(s, ended(a, "SessionEnd"))
        raise RuntimeError("the store is busy")

    queue.work(settings, LOG, failing)
    assert calls == ["PreCompact", "SessionEnd"]  # the newer job was read too, and failed as well
    (job,) = jobs(settings)
    assert job["event"] == "SessionEnd" and job["attempts"] == 2  # kept, with both failures counted
    assert queue.work(settings, LOG, failing) == 0 and jobs(settings) == []  # the third failure drops it


def test_a_rate_limit_stops_the_run_and_leaves_the_session_due_later(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b = transcripts(tmp_path, "a", "b")
    for path in (a, b):
        queue.enqueue(settings, ended(path))
    asked: list[str] = []

    def limited(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        asked.append(session.transcript.stem)
        return "429 from the model's service", 0.0

    assert queue.work(settings, LOG, limited, now=1000.0) == 0
    assert len(asked) == 1  # nothing more was asked in this run
    found = jobs(settings)
    assert sorted(int(str(j["attempts"])) for j in found) == [0, 1]
    assert max(float(str(j["due"])) for j in found) == 1000.0 + queue.FIRST_BACKOFF
    assert queue.work(settings, LOG, limited, now=1001.0) == 0 and len(asked) == 2  # the other, not the due-later one


def test_a_corrupt_job_is_set_aside_with_a_log_line_and_the_others_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b = transcripts(tmp_path, "a", "b")
    edited = queue.queue_folder(settings) / f"{ended(a).name}.json"
    queue.enqueue(settings, ended(a))
    queue.enqueue(settings, ended(b))
    job = json.loads(edited.read_text())
    edited.write_text(json.dumps({**job, "due": "soon"}))  # hand-edited: a time that is no number
    (queue.queue_folder(settings) / "half.json").write_text('{"path": "/x", "que')
    read: list[str] = []

    def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        read.append(session.transcript.stem)
        return "", 0.0

    with caplog.at_level(logging.WARNING, logger="test"):
        assert queue.work(settings, LOG, reflect) == 1
    assert read == ["b"]
    aside = sorted(p.name.split(".")[0] for p in (queue.queue_folder(settings) / "corrupt").iterdir())
    assert aside == sorted([edited.stem, "half"])  # kept for a person to look at, never deleted
    said = caplog.text
    assert "due is not a number: 'soon'" in said and "set aside" in said and "half.json" in said
    assert jobs(settings) == []


def test_a_job_a_worker_died_reading_is_put_back_and_read(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    (a,) = transcripts(tmp_path, "a")
    target = queue.queue_folder(settings) / f"{ended(a).name}.json"
    queue.enqueue(settings, ended(a))
    target.rename(target.with_suffix(".reading"))  # as a worker claims it, before it was killed
    read: list[str] = []

    def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        read.append(session.transcript.stem)
        return "", 0.0

    assert queue.work(settings, LOG, reflect) == 1 and read == ["a"]


@contextlib.contextmanager
def full_disk(folder: Path, size: str = "256k", before: Callable[[], object] = lambda: None) -> Iterator[Path]:
    """``folder`` on a real file system with no space left: a small tmpfs, filled up (after ``before`` ran on
    it). Mounting one needs root (CI runs as root; elsewhere the test is skipped). Yields the filler, whose
    removal frees the space."""
    folder.mkdir(parents=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True, check=False).returncode != 0:
        pytest.skip("no tmpfs can be mounted here")
    try:
        (folder / "home" / "queue").mkdir(parents=True)
        before()
        filler = folder / "filler"
        with filler.open("wb", buffering=0) as f, contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 4096)
        yield filler
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_session_that_cannot_be_queued_on_a_full_disk_is_picked_up_by_the_next_hook(tmp_path: Path) -> None:
    a, b = transcripts(tmp_path, "a", "b")
    with full_disk(tmp_path / "disk") as filler:
        settings = Settings(home=tmp_path / "disk" / "home", llm_backend="none")
        with pytest.raises(OSError) as full:
            (settings.home / "probe").write_text("{}")
        assert full.value.errno == errno.ENOSPC  # the disk is full indeed
        (settings.home / "probe").unlink()
        assert queue.enqueue(settings, ended(a)) is False  # not queued, but marked
        assert jobs(settings) == [] and len(queue.missed(settings)) == 1
        filler.unlink()  # space again
        assert queue.enqueue(settings, ended(b)) is True  # the next hook, of another session
        assert sorted(j["path"] for j in jobs(settings)) == [str(a), str(b)] and queue.missed(settings) == []
        read: list[str] = []

        def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
            read.append(session.transcript.stem)
            assert session.key == f"session:{session.transcript.stem}" and session.cwd == str(tmp_path)  # all kept
            return "", 0.0

        assert queue.work(settings, LOG, reflect) == 2 and sorted(read) == ["a", "b"]


def test_a_marked_session_is_picked_up_by_the_next_worker_run(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    long_folder = tmp_path / os.urandom(100).hex() / os.urandom(100).hex()  # 400 characters zlib cannot shorten
    long_folder.mkdir(parents=True)
    (a,) = transcripts(long_folder, "a")
    folder = queue.queue_folder(settings)
    folder.mkdir(parents=True)
    queue._mark_missed(folder, ended(a))  # too long for a file name: a symlink to the transcript
    (marker,) = queue.missed(settings)
    assert marker.is_symlink()
    read: list[Path] = []

    def reflect(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        read.append(session.transcript)
        assert session.key == "session:a"
        return "", 0.0

    assert queue.work(settings, LOG, reflect) == 1 and read == [a] and queue.missed(settings) == []


def test_a_rules_reading_that_cannot_be_stored_on_a_full_disk_is_read_by_the_next_worker_run(tmp_path: Path) -> None:
    from memx_mcp.compose import open_memory

    settings = Settings(home=tmp_path / "disk" / "home", llm_backend="none", rules_floor="all")
    transcript = sessions.write(tmp_path / "c-9.jsonl", sessions.claude_code("c-9", str(tmp_path)))
    session = QueuedSession("SessionEnd", transcript, "session:c-9", str(tmp_path))

    def store() -> list[str]:
        return [b.content for b in open_memory(settings, cwd=tmp_path, preload=False).store.all_bullets()]

    with full_disk(tmp_path / "disk", "64m", before=store) as filler:  # the store exists, then the disk fills
        reflect_session(settings, session, logger(settings))  # the rules cannot store: no exception, a marker
        assert len(queue.missed(settings)) == 1 and jobs(settings) == []
        filler.unlink()
        deadline = time.monotonic() + 120
        while not store() and time.monotonic() < deadline:  # this worker run, or the one the hook started
            queue.work(settings, logger(settings), reflect_now)
            time.sleep(0.2)
        assert [b for b in store() if sessions.BULLET in b], (settings.home / "logs" / "hook.log").read_text()
        assert queue.missed(settings) == [] and jobs(settings) == []


def test_a_full_disk_while_the_worker_reads_is_no_failure_and_the_session_waits(tmp_path: Path) -> None:
    from memx_mcp.domain.errors import DiskFullError

    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b = transcripts(tmp_path, "a", "b")
    for path in (a, b):
        queue.enqueue(settings, ended(path))
    asked: list[str] = []

    def full(s: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
        asked.append(session.transcript.stem)
        raise DiskFullError("the disk is full (no space left on device)")

    for run in range(4):  # more runs than MAX_ATTEMPTS: a full disk never drops a session
        assert queue.work(settings, LOG, full, now=1000.0 + run * queue.FIRST_BACKOFF) == 0
    assert len(asked) == 4  # one asked a run: the run stops on a full disk
    assert sorted((j["path"], j["attempts"]) for j in jobs(settings)) == [(str(a), 0), (str(b), 0)]
