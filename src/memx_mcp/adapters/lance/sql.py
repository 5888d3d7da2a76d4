"""Small helpers for LanceDB filters and commits, shared by the store's parts."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from ...domain.errors import DiskFullError
from .damage import disk_full_message, is_disk_full

log = logging.getLogger(__name__)
T = TypeVar("T")


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_list(values: Sequence[str]) -> str:
    return "(" + ", ".join(sql_str(v) for v in values) + ")"


def _retry(action: Callable[[], T], what: str, attempts: int = 6) -> T:
    """Retry LanceDB commit conflicts (another process committed first) with a short backoff. A full disk
    becomes DiskFullError: LanceDB commits a version whole or not at all, so nothing of it was stored."""
    delay = 0.02
    for attempt in range(attempts):
        try:
            return action()
        except Exception as exc:
            if is_disk_full(exc):
                raise DiskFullError(disk_full_message(what)) from exc
            text = str(exc).lower()
            if attempt == attempts - 1 or not ("conflict" in text or "retry" in text):
                raise
            log.info("%s: commit conflict, retrying (%s)", what, type(exc).__name__)
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")
