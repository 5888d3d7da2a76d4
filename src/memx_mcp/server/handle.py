"""The server's Memory, opened off the start-up path and opened again after a failure."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..domain.errors import MemxError
from .roots import ClientRoots

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger(__name__)


class MemoryHandle:
    """Opens Memory on a background thread so that start-up never waits for LanceDB or the model. An open
    that failed (a damaged store being repaired, a full disk) is tried again by the next call, so the
    server recovers without a restart."""

    def __init__(self, settings: Settings, cwd: Path) -> None:
        self.settings = settings
        self._ready = threading.Event()
        self._memory: Memory | None = None
        self._error: BaseException | None = None
        self._started = False
        self.cwd = cwd
        self.roots = ClientRoots()
        self._reopen = threading.Lock()

    def start(self) -> None:
        if not self._started:
            self._started = True
            threading.Thread(target=self._open, name="memx-open", daemon=True).start()

    def _open(self) -> None:
        try:
            self._memory = self._build(warm=True)
        except BaseException as exc:
            self._error = exc
            if not sys.is_finalizing():  # stdin closed during start-up: nothing to report
                log.error("cannot open the memory store: %s", exc)
        finally:
            self._ready.set()

    def flush(self) -> None:
        """Write what an open Memory still holds (deferred recall counts); never raises."""
        if self._memory is not None:
            try:
                self._memory.flush()
            except Exception as exc:
                log.warning("could not write the pending recall counts: %s", exc)

    def _build(self, warm: bool) -> Memory:
        from ..compose import open_memory

        return open_memory(self.settings, cwd=self.cwd, defer_reinforcement=True, warm=warm)

    def get(self) -> Memory:
        self.start()
        self._ready.wait()
        if self._memory is not None:
            return self._memory
        with self._reopen:  # calls arriving together open it once
            if self._memory is None:
                try:
                    self._memory = self._build(warm=False)
                except MemxError as exc:
                    raise MemxError(f"the memory store could not be opened: {exc}") from exc
                except Exception as exc:
                    log.exception("cannot open the memory store")
                    raise MemxError(f"the memory store could not be opened ({type(exc).__name__}: {exc})") from exc
            return self._memory

    def forget_damaged(self, error: BaseException) -> None:
        """After damage was reported, the next call opens the store again (``memx repair`` may have
        rebuilt it meanwhile) instead of keeping the broken tables."""
        from ..domain.errors import StoreDamagedError

        if isinstance(error, StoreDamagedError):
            with self._reopen:
                self._memory = None
