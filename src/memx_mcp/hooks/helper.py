"""The warm helper behind the context hooks.

A hook is a new process each time, and loading the store and the model takes about a second: too slow
for every prompt. The first context hook starts this helper in the background; it keeps Memory open and
answers later hooks over a loopback socket in milliseconds. One helper per data folder (a file lock),
bound to 127.0.0.1 only, each request carrying a random token from a file only its owner can read. It
exits after ``hook_daemon_idle_minutes`` without a request; the next hook starts it again.

    python -m memx_mcp.hooks.helper --home DIR
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..config import Settings, load_settings
from ..files import atomic_write
from ..native import small_heap

if TYPE_CHECKING:
    from ..memory import Memory

MAX_REQUEST = 1_000_000


def state_file(settings: Settings) -> Path:
    return settings.home / "run" / "hook-helper.json"


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def ask(settings: Settings, payload: dict[str, Any], timeout: float = 3.0) -> str | None:
    """The helper's answer to one hook call, or None when no helper is ready (never raises). A helper of
    another memx version (memx was upgraded while it ran) is stopped, so that a current one starts."""
    try:
        state = json.loads(state_file(settings).read_text(encoding="utf-8"))
        if "port" not in state:
            return None
        if state.get("version") != __version__:
            _retire(settings, state)
            return None
        with socket.create_connection(("127.0.0.1", int(state["port"])), timeout=timeout) as conn:
            conn.sendall(json.dumps({"token": state["token"], "payload": payload}).encode() + b"\n")
            answer = json.loads(_read_line(conn) or b"{}")
        return str(answer["text"]) if "text" in answer else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _retire(settings: Settings, state: dict[str, Any]) -> None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        os.kill(int(state["pid"]), signal.SIGTERM)
    state_file(settings).unlink(missing_ok=True)


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


def serve(settings: Settings) -> int:
    from ..compose import open_memory, private_files
    from ..errors import StoreError
    from ..store.lock import file_lock
    from .claude_code import logger
    from .injection import inject

    private_files()
    log = logger(settings)
    run = settings.home / "run"
    run.mkdir(parents=True, exist_ok=True, mode=0o700)
    state = state_file(settings)
    try:
        with file_lock(run / "hook-helper.lock", timeout=0.05):
            try:
                memory = open_memory(settings, warm=True)
                memory.embedder.get(60.0)
            except Exception as exc:
                atomic_write(state, json.dumps({"error": f"{type(exc).__name__}: {exc}", "pid": os.getpid()}))
                log.warning("hook helper could not open the memory: %s", exc)
                return 1
            token = secrets.token_hex(16)
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
                server.bind(("127.0.0.1", 0))
                server.listen(8)
                server.settimeout(settings.hook_daemon_idle_minutes * 60)
                port = server.getsockname()[1]
                atomic_write(
                    state, json.dumps({"port": port, "token": token, "pid": os.getpid(), "version": __version__})
                )
                log.info("hook helper %d listening", os.getpid())
                try:
                    while True:
                        try:
                            conn, _ = server.accept()
                        except TimeoutError:
                            log.info("hook helper %d idle: exiting", os.getpid())
                            return 0
                        with conn:
                            conn.settimeout(5.0)
                            _answer(conn, token, memory, inject, log)
                finally:
                    state.unlink(missing_ok=True)
    except StoreError:
        return 0  # another helper holds the lock: it answers


def _answer(
    conn: socket.socket,
    token: str,
    memory: Memory,
    inject: Callable[[Memory, dict[str, Any]], str],
    log: logging.Logger,
) -> None:
    try:
        request = json.loads(_read_line(conn) or b"{}")
        if not hmac.compare_digest(str(request.get("token", "")), token):
            log.warning("hook helper refused a request without the right token")
            return
        payload = request.get("payload") or {}
        cwd = Path(str(payload.get("cwd", "")))
        memory.set_cwd(cwd if str(cwd) and cwd.is_dir() else Path.home())
        text = inject(memory, payload)
    except Exception as exc:  # fail open: the hook prints nothing
        log.warning("hook helper failed open: %s: %s", type(exc).__name__, exc)
        text = ""
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"text": text}, ensure_ascii=False).encode() + b"\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memx-hook-helper")
    parser.add_argument("--home")
    args = parser.parse_args(argv)
    small_heap()  # a long-running process too
    return serve(load_settings(home=args.home))


if __name__ == "__main__":
    sys.exit(main())
