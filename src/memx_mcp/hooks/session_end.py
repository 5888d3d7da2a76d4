"""``memx hook cursor|codex|gemini``: reflect a session of another client when it (or its turn) ends, as
``memx hook claude-code`` does at Claude Code's SessionEnd, and ``memx hook worker``. What each client
sends and where its transcript is found is the client's module's (``clients/``); the hook itself is
``client_hook.py``."""

from __future__ import annotations

from typing import IO

from ..config import Settings
from .logs import logger


def run(client: str, settings: Settings, stdin: IO[str] | None = None, argument: str | None = None) -> int:
    """Handle one call of ``client``'s hook (Codex's notify: ``argument`` is the notification). Returns 0."""
    from .client_hook import run as run_hook

    return run_hook(client, settings, stdin, argument)


def work(settings: Settings) -> int:
    """``memx hook worker``: read the queued sessions (``queue.py``), detached from any hook. Returns 0."""
    from . import queue
    from .sessions import is_child, reflect_now

    if is_child():
        return 0
    log = logger(settings)
    try:
        queue.work(settings, log, reflect_now)
    except Exception as exc:  # said in the log, never silent
        log.warning("the worker stopped: %s: %s", type(exc).__name__, exc)
    return 0
