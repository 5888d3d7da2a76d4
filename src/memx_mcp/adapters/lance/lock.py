"""A cross-process write lock on a file: every memx process (servers, CLI, hooks) serialises its writes
through it, so dedup decisions, compaction and index upkeep never race each other."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...domain.errors import StoreBusyError

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (process {pid})" if pid.isdigit() else ""


@contextmanager
def file_lock(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path``; the OS releases it if the process dies. ``timeout`` 0 tries
    once. The holder writes its pid into the file, so that a busy message can say who holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                held = f"for over {timeout:.0f} s" if timeout >= 1 else "now"
                raise StoreBusyError(
                    f"the store is busy: another memx process{_holder(fd)} is writing to it ({held}; a large "
                    "import or reindex?): try again when it is done"
                )
            time.sleep(delay)
            delay = min(0.05, delay * 2)
        try:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
            except (OSError, AttributeError):  # only for the message (and no pwrite on Windows)
                pass
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
