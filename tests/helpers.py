"""Spawning the real console scripts in tests."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def script(name: str) -> list[str]:
    """The installed console script beside this interpreter, else ``python -m``."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return [str(beside)]
    found = shutil.which(name)
    if found:
        return [found]
    module = "memx_mcp.server" if name == "memx-mcp" else "memx_mcp.cli"
    return [sys.executable, "-m", module]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMX_")}
    env.update({"MEMX_HOME": str(home), **extra})
    return env
