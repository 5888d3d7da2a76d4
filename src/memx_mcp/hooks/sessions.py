"""Reflecting one session's transcript at its end: what every client's end-of-session hook shares.

The turns not reflected before go into the scope of the session's working directory, under a session
key, so a second call for the same session adds nothing; the outcome goes to the hook log. Where a model
may read the session (``hook_reflector_mode`` not rules, ``llm_backend`` not none), the hook only queues it
and starts the detached worker (``queue.py``): a model's reading never runs inside a hook's deadline. The
rules read a session inline only when it is small enough to be read well within the client's deadline;
a larger one, or one the rules could not store (a full disk), goes to the worker too."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

from ..config import CHILD_MARKER, Settings, reading_mode
from ..domain.errors import DiskFullError
from .queue import QueuedSession

# the largest transcript the rules read inside the hook: about a second of their work (they read 0.25-0.4 MB
# a second; 49 MB took 134 s); a larger one goes to the detached worker
INLINE_RULES_BYTES = 256 * 1024


# Where the clients keep their session files, as of their current versions. Codex: ``sessions/YYYY/MM/DD/
# rollout-<time>-<thread id>.jsonl``, compressed to ``.jsonl.zst`` after 7 days (0.142+), or under
# ``archived_sessions/``. Gemini CLI 0.44: ``tmp/<project slug>/chats/session-<time>-<id>.jsonl`` (older: the
# project's hash for the slug, ``.json``), a sub-agent's chats under ``chats/<parent session id>/``.
CODEX_ROLLOUT_SUFFIXES = (".jsonl", ".jsonl.zst")
GEMINI_CHAT_SUFFIXES = (".jsonl", ".json")


def codex_rollouts(codex_home: Path, thread: str = "") -> list[Path]:
    """Codex's rollout files (of ``thread`` when given), plain or zstd-compressed, newest first."""
    if thread and not re.fullmatch(r"[A-Za-z0-9-]+", thread):  # it becomes part of a file pattern
        return []
    found = [
        p
        for sub in ("sessions", "archived_sessions")
        for suffix in CODEX_ROLLOUT_SUFFIXES
        for p in (codex_home / sub).glob(f"**/rollout-*{thread}{suffix}")
        if p.is_file()
    ]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def gemini_chats(gemini_home: Path) -> list[Path]:
    """Gemini CLI's saved chats: ``tmp/<slug>/chats/*`` and the sub-agents' ``tmp/<slug>/chats/<parent>/*``."""
    found = [
        p
        for pattern in ("tmp/*/chats/*", "tmp/*/chats/*/*")
        for p in gemini_home.glob(pattern)
        if p.is_file() and p.name.endswith(GEMINI_CHAT_SUFFIXES)
    ]
    return sorted(found)


def gemini_parent(chat: Path) -> str:
    """The parent session id of a sub-agent's chat (it sits in ``chats/<parent id>/``), else ''."""
    return chat.parent.name if chat.parent.parent.name == "chats" else ""


def is_child() -> bool:
    """Inside a model call memx started (a coding CLI in headless mode): every hook returns at once."""
    import os

    return bool(os.environ.get(CHILD_MARKER))


def reflect_session(settings: Settings, session: QueuedSession, log: logging.Logger) -> None:
    """Reflect ``session`` (its transcript exists) now with the rules, or queue it for the detached worker
    where a model may read it or it is too large to read within the hook's deadline. Errors propagate: the
    caller fails open."""
    from . import queue

    model = reading_mode(settings.hook_reflector_mode).needs_model and settings.llm_backend != "none"
    size = session.transcript.stat().st_size
    why = "a model reads it" if model else f"{size // 1024} KB is too long to read inside the hook"
    if not model and size <= INLINE_RULES_BYTES:
        try:
            reflect_now(settings, session, log)
        except (OSError, DiskFullError) as exc:  # a full disk: the worker reads it once it can be stored
            why = f"not stored: {exc}"
        else:
            if queue.missed(settings):  # sessions earlier hooks could not queue: the worker picks them up
                queue.start_worker(settings)
            return
    if queue.enqueue(settings, session):
        log.info("%s session=%s queued for the detached worker (%s)", session.event, session.short, why)
    else:
        log.warning("%s session=%s could not be queued: marked for the next run", session.event, session.short)
    queue.start_worker(settings)


def reflect_now(settings: Settings, session: QueuedSession, log: logging.Logger) -> tuple[str, float]:
    """Reflect ``session`` in ``hook_reflector_mode`` and log what was kept. Returns why the session was
    left for later ('' when it was not: a rate limit) and the seconds the service asked to wait."""
    from ..compose import open_memory

    started = time.monotonic()
    cwd = session.cwd
    memory = open_memory(settings, cwd=Path(cwd) if cwd and Path(cwd).is_dir() else None)
    text = memory.read_transcript(session.transcript)
    result = memory.reflect(text, path=session.transcript, mode=settings.hook_reflector_mode, session_key=session.key)
    added = sum(1 for s in result.stored if s.action != "merged")
    report = result.report
    log.info(
        "%s session=%s steps %d→%d mode=%s calls=%d candidates=%d added=%d merged=%d dropped=%d scope=%s in %.2fs%s%s",
        session.event,
        session.short,
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
        "".join(f"; note: {n}" for n in report.notes if "could not be made" in n),
    )
    return report.deferred, report.retry_after
