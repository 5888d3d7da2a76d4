"""Spawning the real console scripts in tests."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
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
    # no model backend unless a test names one: the user's own CLI or key on this machine never answers a test;
    # every rule's bullet kept (the strict floor, the default, has tests of its own)
    env.update({"MEMX_HOME": str(home), "MEMX_LLM_BACKEND": "none", "MEMX_RULES_FLOOR": "all", **extra})
    # a hook that starts the warm helper waits for its model as long as a loaded CI machine needs (a user's
    # hook gives up after 8 s and the next one is answered: that fail-open path has tests of its own)
    env.setdefault("MEMX_HOOK_HELPER_WAIT", "40")
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


def run_hook(home: Path, payload: dict[str, str], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`memx hook claude-code` as Claude Code runs it: the hook JSON on stdin, a helper that idles out soon."""
    return subprocess.run(
        [*script("memx"), "hook", "claude-code", *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=env_for(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="1", **env),
        timeout=180,
    )


@contextlib.contextmanager
def warm_helper(home: Path, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """The warm helper of the data folder ``home``, as the first context hook starts it, with the settings
    `run_memx` gives its commands (with the same extra ``MEMX_…`` settings): the commands it answers
    (`cli.WARM_COMMANDS`) then open no store and load no model of their own, as for a user whose client runs
    the hooks; the others run themselves."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memx_mcp.hooks.helper", "--home", str(home)], env=env_for(home, **env), cwd=home.parent
    )
    state = home / "run" / "hook-helper.json"
    try:
        deadline = time.monotonic() + 120
        while True:  # the helper writes its state file once it listens
            with contextlib.suppress(OSError, ValueError):
                if json.loads(state.read_text(encoding="utf-8")).get("pid") == proc.pid:
                    break
            assert proc.poll() is None, f"the helper exited with {proc.returncode}"
            assert time.monotonic() < deadline, "the helper did not start"
            time.sleep(0.02)
        yield proc
    finally:
        proc.terminate()  # SIGTERM: it removes its socket and state file
        proc.wait(30)
