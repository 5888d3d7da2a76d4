"""The hook's side of the warm helper (``helper.py``): ask it (over ``channel.py``), start it in the
background, stop one of another memx version or protocol, and read why one could not start. The whole way of
``memx hook CLIENT`` and the ``memx`` commands the helper answers use these; the light way (``quick.py``)
reads the state file and uses ``channel.py`` itself."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import Settings
from . import channel
from .channel import PROTOCOL
from .channel import AnswerLost as AnswerLost  # raised by `command`, caught by the CLI


def state_file(settings: Settings) -> Path:
    return settings.home / "run" / "hook-helper.json"


def ask(settings: Settings, payload: dict[str, Any], timeout: float = 3.0) -> str | None:
    """The helper's answer to one hook call, or None when no verified helper is ready (never raises)."""
    try:
        answer = _exchange(settings, payload, timeout)
    except AnswerLost:
        return None
    return str(answer["text"]) if answer is not None and "text" in answer else None


@dataclass(frozen=True)
class CommandAnswer:
    code: int
    stdout: str
    stderr: str


def fingerprint(settings: Settings) -> str:
    """What must be equal for the helper to answer a command as the command itself would: every setting."""
    return hashlib.sha256(repr(dataclasses.replace(settings, home=settings.home.resolve())).encode()).hexdigest()


def command(
    settings: Settings, argv: list[str], cwd: Path, color: bool, timeout: float = 120.0
) -> CommandAnswer | None:
    """A ``memx`` command answered by the warm helper of this data folder, with no store to open and no model
    to load; None when no verified helper with the same settings runs (then the command runs itself).
    Raises ``AnswerLost`` when the helper took the command but its answer never came."""
    payload = {"command": argv, "cwd": str(cwd), "color": color, "settings": fingerprint(settings)}
    answer = _exchange(settings, payload, timeout)
    if answer is None or "code" not in answer:
        return None
    try:
        return CommandAnswer(int(answer["code"]), str(answer["stdout"]), str(answer["stderr"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnswerLost(f"the warm helper answered something else: {type(exc).__name__}") from exc


def _exchange(settings: Settings, payload: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The helper's answer, or None when no verified helper is ready. A peer that cannot prove it holds
    the state file's secret gets nothing but a random challenge. A helper of another memx version or
    protocol (memx was upgraded while it ran) is stopped, so that a current one starts. Once the payload
    is sent, a missing answer raises ``AnswerLost``: the caller must not run a write a second time."""
    state = channel.read_state(str(settings.home))
    if state is None or "token" not in state:
        return None
    if state.get("version") != __version__ or state.get("protocol") != PROTOCOL:
        _retire(settings, state)
        return None
    return channel.exchange(state, payload, timeout)


def _retire(settings: Settings, state: dict[str, Any]) -> None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        pid = int(state["pid"])
        if _is_a_helper(pid):
            os.kill(pid, signal.SIGTERM)
    state_file(settings).unlink(missing_ok=True)


def _is_a_helper(pid: int) -> bool:
    """Whether ``pid`` still runs a hook helper: a stale state file's pid may have been reused."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.parent.is_dir():
        return sys.platform != "linux"  # no /proc to ask (macOS): trust the state file as before
    try:
        return b"memx_mcp.hooks.helper" in cmdline.read_bytes()
    except OSError:
        return False


def helper_error(settings: Settings, within: float = 60.0) -> str | None:
    """What made the helper fail to start, if it failed less than ``within`` seconds ago."""
    try:
        path = state_file(settings)
        state = json.loads(path.read_text(encoding="utf-8"))
        recent = time.time() - path.stat().st_mtime < within
        return str(state["error"]) if "error" in state and recent else None
    except (OSError, ValueError):
        return None


def start(settings: Settings) -> None:
    """Start a helper in the background, detached from the hook (which exits at once)."""
    detached = {"creationflags": 0x00000008 | 0x00000200} if sys.platform == "win32" else {"start_new_session": True}
    subprocess.Popen(  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP on Windows, a new session elsewhere
        [sys.executable, "-m", "memx_mcp.hooks.helper", "--home", str(settings.home)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        **detached,
    )
