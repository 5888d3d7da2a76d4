"""Sessions waiting for a model to read them: a client's session-end hook only queues the session and
starts a detached worker, so the hook returns within its client's deadline (Claude Code kills a SessionEnd
hook after 1.5 s) however long the reading takes.

One worker runs at a time (a lock file); it reads every due session once and exits. A session the model's
service rate-limited stays queued with a later due time (the service's ``retry-after``, else doubling from
two minutes up to six hours) and the worker stops asking for this run: nothing loops. A later session end
starts the worker again. A session that failed three times is dropped from the queue, with a log line."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..files import atomic_write

MAX_ATTEMPTS = 3
PASSES = 3
FIRST_BACKOFF = 120.0
MAX_BACKOFF = 6 * 3600.0


def queue_folder(settings: Settings) -> Path:
    return settings.home / "queue"


def enqueue(settings: Settings, event: str, path: Path, key: str | None, cwd: str) -> Path:
    """Queue ``path`` (one file per session: a second end of the same session replaces the first)."""
    folder = queue_folder(settings)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = hashlib.sha256((key or str(path.resolve())).encode("utf-8", "replace")).hexdigest()[:24]
    job = {"event": event, "path": str(path), "key": key, "cwd": cwd, "attempts": 0, "due": 0.0, "queued": time.time()}
    target = folder / f"{name}.json"
    atomic_write(target, json.dumps(job))
    return target


def start_worker(settings: Settings) -> None:
    """``memx hook worker`` in a session of its own, detached from the hook: the client's deadline killing
    the hook does not reach it."""
    env = {**os.environ, "MEMX_HOME": str(settings.home)}
    subprocess.Popen(
        [sys.executable, "-m", "memx_mcp.cli", "hook", "worker"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        close_fds=True,
    )


def _jobs(settings: Settings) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for file in sorted(queue_folder(settings).glob("*.json")):
        try:
            job = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            file.unlink(missing_ok=True)
            continue
        if isinstance(job, dict) and isinstance(job.get("path"), str):
            found.append((file, job))
    return sorted(found, key=lambda j: float(j[1].get("queued", 0)))


# (settings, event, transcript, session key, cwd, log) -> (why it was deferred or "", seconds to wait)
Reflect = Callable[[Settings, str, Path, str | None, str, logging.Logger], tuple[str, float]]


def work(settings: Settings, log: logging.Logger, reflect: Reflect, now: float | None = None) -> int:
    """Read every due queued session once with ``reflect``; returns how many were reflected. Another worker
    running: 0."""
    from ..compose import file_lock

    folder = queue_folder(settings)
    if not folder.is_dir():
        return 0
    try:
        lock = file_lock(folder / ".worker.lock", timeout=0.0)
        lock.__enter__()
    except Exception:  # another worker holds it: that one reads what was queued
        return 0
    try:
        done, seen = 0, set[str]()
        for _ in range(PASSES):  # sessions queued while this worker read others: read them too, a few passes
            reflected, seen, limited = _work(settings, log, reflect, time.time() if now is None else now, seen)
            done += reflected
            if limited or not reflected:
                break
        return done
    finally:
        lock.__exit__(None, None, None)


def _work(
    settings: Settings, log: logging.Logger, reflect: Reflect, now: float, seen: set[str]
) -> tuple[int, set[str], bool]:
    """One pass over the due sessions not seen in this run: (how many were reflected, the names seen, whether
    a rate limit stopped it)."""
    done = 0
    for file, job in _jobs(settings):
        if float(job.get("due", 0)) > now or file.name in seen:
            continue
        seen = seen | {file.name}
        path = Path(job["path"])
        if not path.is_file():
            log.info("queued session %s: its transcript is gone", file.stem[:12])
            file.unlink(missing_ok=True)
            continue
        try:
            deferred, retry_after = reflect(
                settings, str(job.get("event", "")), path, job.get("key"), str(job.get("cwd", "")), log
            )
        except Exception as exc:
            job["attempts"] = int(job.get("attempts", 0)) + 1
            if job["attempts"] >= MAX_ATTEMPTS:
                log.warning("queued session %s dropped after %d failures: %s", file.stem[:12], job["attempts"], exc)
                file.unlink(missing_ok=True)
            else:
                atomic_write(file, json.dumps(job))
            continue
        if deferred:
            job["attempts"] = int(job.get("attempts", 0)) + 1
            wait = retry_after or min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (job["attempts"] - 1))
            job["due"] = now + wait
            atomic_write(file, json.dumps(job))
            log.info(
                "rate limited (%s): session left queued for %.0f s; no more asked this run",
                deferred,
                wait,
            )
            return done, seen, True
        file.unlink(missing_ok=True)
        done += 1
    return done, seen, False
