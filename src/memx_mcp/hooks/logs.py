"""What every hook shares: its log (``MEMX_HOME/logs/hook.log``, rotated) and how much of stdin it reads."""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings

MAX_STDIN = 1_000_000


def logger(settings: Settings) -> logging.Logger:
    return logger_at(settings.home)


def logger_at(home: Path) -> logging.Logger:
    """The hook log of the data folder ``home``."""
    log = logging.getLogger("memx_mcp.hook")
    folder = home / "logs"
    target = str((folder / "hook.log").absolute())
    files = [h for h in log.handlers if isinstance(h, RotatingFileHandler)]
    for old in (h for h in files if h.baseFilename != target):
        log.removeHandler(old)  # another data folder in the same process (the helper, tests): log to this one
        old.close()
    if not any(h.baseFilename == target for h in files):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handler = RotatingFileHandler(folder / "hook.log", maxBytes=1_000_000, backupCount=2, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log
