"""The queue of sessions a model is to read: each due session read once per run, the ones queued meanwhile
too, and a rate limit stopping the run with the session left for later."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from memx_mcp.config import Settings
from memx_mcp.hooks import queue

LOG = logging.getLogger("test")


def transcripts(tmp_path: Path, *names: str) -> list[Path]:
    paths = []
    for name in names:
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
        paths.append(tmp_path / f"{name}.jsonl")
    return paths


def test_every_due_session_is_read_once_and_one_queued_meanwhile_too(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b, c = transcripts(tmp_path, "a", "b", "c")
    for path in (a, b):
        queue.enqueue(settings, "SessionEnd", path, f"session:{path.stem}", str(tmp_path))
    read: list[str] = []

    def reflect(
        s: Settings, event: str, path: Path, key: str | None, cwd: str, log: logging.Logger
    ) -> tuple[str, float]:
        read.append(path.stem)
        if path == a:  # another session ends while the worker reads this one
            queue.enqueue(s, "SessionEnd", c, "session:c", cwd)
        return "", 0.0

    assert queue.work(settings, LOG, reflect) == 3
    assert sorted(read) == ["a", "b", "c"] and len(read) == 3
    assert list(queue.queue_folder(settings).glob("*.json")) == []


def test_a_rate_limit_stops_the_run_and_leaves_the_session_due_later(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    a, b = transcripts(tmp_path, "a", "b")
    for path in (a, b):
        queue.enqueue(settings, "SessionEnd", path, f"session:{path.stem}", str(tmp_path))
    asked: list[str] = []

    def limited(
        s: Settings, event: str, path: Path, key: str | None, cwd: str, log: logging.Logger
    ) -> tuple[str, float]:
        asked.append(path.stem)
        return "429 from the model's service", 0.0

    assert queue.work(settings, LOG, limited, now=1000.0) == 0
    assert len(asked) == 1  # nothing more was asked in this run
    jobs = [json.loads(p.read_text()) for p in queue.queue_folder(settings).glob("*.json")]
    assert sorted(j["attempts"] for j in jobs) == [0, 1]
    assert max(j["due"] for j in jobs) == 1000.0 + queue.FIRST_BACKOFF
    assert queue.work(settings, LOG, limited, now=1001.0) == 0 and len(asked) == 2  # the other, not the due-later one
