"""Writing small state files so that a reader never sees half of one."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def atomic_write(target: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write through a temporary file of this process and thread, then rename over ``target``: writers
    racing each other never trip over each other's half-written file, and readers see old or new whole.
    The file is its owner's only (``mode``)."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.chmod(tmp, mode)
        tmp.replace(target)
    except OSError:
        tmp.unlink(missing_ok=True)  # a full disk would otherwise keep every half-written copy
        raise
