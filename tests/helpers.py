"""Spawning the real console scripts in tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
    module = "memx_mcp.server.app" if name == "memx-mcp" else "memx_mcp.cli.app"
    return [sys.executable, "-m", module]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMX_")}
    env.update({"MEMX_HOME": str(home), **extra})
    return env


def run_memx(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The `memx` script on the data folder ``home``, run from beside it, with extra ``MEMX_…`` settings."""
    return subprocess.run(
        [*script("memx"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=env_for(home, **env),
        timeout=300,
    )


def run_hook(home: Path, payload: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`memx hook claude-code` as Claude Code runs it: the hook JSON on stdin, a helper that idles out soon."""
    return subprocess.run(
        [*script("memx"), "hook", "claude-code", *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=env_for(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="1"),
        timeout=60,
    )
