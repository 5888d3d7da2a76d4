"""Reflecting one session's transcript at its end: what every client's end-of-session hook shares.

The turns not reflected before go into the scope of the session's working directory, under a session
key, so a second call for the same session adds nothing; the outcome goes to the hook log."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ..config import Settings


def reflect_session(
    settings: Settings, event: str, path: Path, session_key: str | None, cwd: str, log: logging.Logger
) -> None:
    """Reflect ``path`` (a transcript file that exists) and log what was kept. Errors propagate: the
    caller fails open."""
    from ..compose import open_memory
    from ..usecases.reflect import read_transcript, reflect

    started = time.monotonic()
    memory = open_memory(settings, cwd=Path(cwd) if cwd and Path(cwd).is_dir() else None)
    text = read_transcript(path)
    result = reflect(memory, text, path=path, mode=settings.hook_reflector_mode, session_key=session_key)
    added = sum(1 for s in result.stored if s.action != "merged")
    session = (session_key or "").split(":")[-1]
    log.info(
        "%s session=%s steps %d→%d candidates=%d added=%d merged=%d dropped=%d scope=%s in %.2fs",
        event,
        session[:12],
        result.start_step,
        result.report.steps,
        result.report.candidates,
        added,
        len(result.stored) - added,
        len(result.report.dropped),
        result.scope,
        time.monotonic() - started,
    )
