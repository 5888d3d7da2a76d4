"""Reflecting one session's transcript at its end: what every client's end-of-session hook shares.

The turns not reflected before go into the scope of the session's working directory, under a session
key, so a second call for the same session adds nothing; the outcome goes to the hook log. Where a model
may read the session (``hook_reflector_mode`` not rules, ``llm_backend`` not none), the hook only queues it
and starts the detached worker (``queue.py``): a model's reading never runs inside a hook's deadline."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ..config import CHILD_MARKER, Settings, reading_mode


def is_child() -> bool:
    """Inside a model call memx started (a coding CLI in headless mode): every hook returns at once."""
    import os

    return bool(os.environ.get(CHILD_MARKER))


def reflect_session(
    settings: Settings, event: str, path: Path, session_key: str | None, cwd: str, log: logging.Logger
) -> None:
    """Reflect ``path`` (a transcript file that exists) now with the rules, or queue it for the detached
    worker where a model may read it. Errors propagate: the caller fails open."""
    if reading_mode(settings.hook_reflector_mode).needs_model and settings.llm_backend != "none":
        from . import queue

        queue.enqueue(settings, event, path, session_key, cwd)
        queue.start_worker(settings)
        log.info("%s session=%s queued for the detached worker", event, (session_key or "").split(":")[-1][:12])
        return
    reflect_now(settings, event, path, session_key, cwd, log)


def reflect_now(
    settings: Settings, event: str, path: Path, session_key: str | None, cwd: str, log: logging.Logger
) -> tuple[str, float]:
    """Reflect ``path`` in ``hook_reflector_mode`` and log what was kept. Returns why the session was left
    for later ('' when it was not: a rate limit) and the seconds the service asked to wait."""
    from ..compose import open_memory

    started = time.monotonic()
    memory = open_memory(settings, cwd=Path(cwd) if cwd and Path(cwd).is_dir() else None)
    text = memory.read_transcript(path)
    result = memory.reflect(text, path=path, mode=settings.hook_reflector_mode, session_key=session_key)
    added = sum(1 for s in result.stored if s.action != "merged")
    session = (session_key or "").split(":")[-1]
    report = result.report
    log.info(
        "%s session=%s steps %d→%d mode=%s calls=%d candidates=%d added=%d merged=%d dropped=%d scope=%s in %.2fs%s",
        event,
        session[:12],
        result.start_step,
        result.report.steps,
        report.mode,
        report.llm_calls,
        result.report.candidates,
        added,
        len(result.stored) - added,
        len(result.report.dropped),
        result.scope,
        time.monotonic() - started,
        f" (deferred: {report.deferred})" if report.deferred else "",
    )
    return report.deferred, report.retry_after
