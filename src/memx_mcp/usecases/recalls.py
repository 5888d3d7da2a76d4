"""Recording recalls off the answer's path.

Each returned bullet counts as a recall for Decay. Writing that count with every answer would put a
table write (and, every so often, a compaction) on the path of the next answer. The recorder gathers the
counts in memory and one background thread writes them in a single batch at most once per ``interval``.
``flush`` (and interpreter exit) writes what is pending at once. A process killed outright loses at most
``interval`` seconds of recall counts — bookkeeping, never a bullet. Each write is a table version, and
every 20th version compacts the table (at 100k bullets a rewrite of a few hundred MB in memory), so the
interval is seconds, not milliseconds."""

from __future__ import annotations

import atexit
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

log = logging.getLogger(__name__)

Write = Callable[[Mapping[str, int], datetime], None]


class RecallRecorder:
    def __init__(self, write: Write, interval: float = 5.0) -> None:
        self._write = write
        self._interval = interval
        self._pending: Counter[str] = Counter()
        self._latest: datetime | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()  # something is pending
        self._urgent = threading.Event()  # write it without waiting for the interval
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="memx-recalls", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def record(self, ids: Iterable[str], now: datetime) -> None:
        with self._lock:
            self._pending.update(ids)
            self._latest = now if self._latest is None else max(self._latest, now)
            self._idle.clear()
        self._wake.set()

    def flush(self, timeout: float = 30.0) -> bool:
        """Write what is pending now and wait for it; False if that took longer than ``timeout``."""
        self._urgent.set()
        self._wake.set()
        return self._idle.wait(timeout)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.flush()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._urgent.wait(self._interval)  # let more recalls join this batch
            self._urgent.clear()
            self._wake.clear()
            with self._lock:
                batch, latest = self._pending, self._latest
                self._pending, self._latest = Counter(), None
            if batch and latest is not None:
                try:
                    self._write(batch, latest)
                except Exception as exc:  # bookkeeping: answers never depend on it
                    log.warning("could not record %d recalls: %s", sum(batch.values()), exc)
            with self._lock:
                if not self._pending:
                    self._idle.set()
