"""The warm helper behind the context hooks.

A hook is a new process each time, and loading the store and the model takes about a second: too slow
for every prompt. The first context hook starts this helper in the background; it keeps Memory open and
answers later hooks in milliseconds. One helper per data folder (a file lock). It exits after
``hook_daemon_idle_minutes`` without a request; the next hook starts it again.

The channel cannot be impersonated, even from a state file left behind by a helper that died:

- it is a Unix domain socket in ``MEMX_HOME/run/`` (0700: no other user can reach or replace it); when that
  path is too long for a socket address, in a fresh 0700 folder under ``$XDG_RUNTIME_DIR`` or the temporary
  folder, recorded in the state file. On Linux the hook also checks that the socket's owner is the very
  process the state file names before it writes a byte. Windows uses loopback TCP (``--tcp`` elsewhere).
- on both, the helper proves it holds the state file's secret before the hook sends anything but a random
  challenge: the hook sends a nonce, the helper answers with its own nonce and an HMAC over both, and only
  then does the hook send its own HMAC and the payload. The secret itself never crosses the channel.
- each connection has one deadline for its whole request, and each is served in a thread of its own (the
  calls into Memory one at a time), so a client trickling bytes holds nothing but its own thread.

The hook's side of the channel is ``channel.py`` (and ``asking.py`` for the whole way); a hook process on
the light way (``quick.py``) sends the client's payload as it came (``{"hook": …}``), answered here with
``client_hook.answer``, after the state file names what it may settle alone (``_publish_routes``).

    python -m memx_mcp.hooks.helper --home DIR [--tcp]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hmac
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..config import Settings, load_settings
from ..files import atomic_write
from ..native import small_heap
from . import channel
from .asking import (  # the hook's side, where the CLI and the tests have always found it
    AnswerLost,
    CommandAnswer,
    ask,
    command,
    fingerprint,
    helper_error,
    start,
    state_file,
)
from .channel import PROTOCOL

__all__ = [
    "PROTOCOL",
    "AnswerLost",
    "CommandAnswer",
    "ask",
    "command",
    "fingerprint",
    "helper_error",
    "main",
    "serve",
    "start",
    "state_file",
]

if TYPE_CHECKING:
    from ..memory import Memory

REQUEST_SECONDS = 2.0  # the whole request, from connect to its last byte: a trickling client is cut off
MAX_CLIENTS = 16  # connections served at once; more are closed at once
SOCKET_PATH_MAX = 100  # sun_path holds 104 bytes on macOS and 108 on Linux, its NUL included
USE_TCP = sys.platform == "win32" or not hasattr(socket, "AF_UNIX")
_read_line, _send, _proof = channel.read_line, channel.send, channel.proof


# -- the helper's side ---------------------------------------------------------------------------------


def _socket_path(run: Path) -> tuple[Path, Path | None]:
    """Where to listen, and the private folder made for it when ``run`` is too deep for a socket address."""
    path = run / "hook-helper.sock"
    if len(os.fsencode(path)) <= SOCKET_PATH_MAX:
        return path, None
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    for base in (runtime if runtime and Path(runtime).is_dir() else None, None, "/tmp"):
        folder = Path(tempfile.mkdtemp(prefix="memx-", dir=base))  # 0700, a name nobody could take before
        if len(os.fsencode(folder / "h.sock")) <= SOCKET_PATH_MAX:
            return folder / "h.sock", folder
        folder.rmdir()
    raise OSError(f"no folder short enough for a socket address beside {run}")


def _listen(run: Path, tcp: bool) -> tuple[socket.socket, dict[str, Any]]:
    if tcp:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # lets the next helper take the port while this one's closed connections sit in TIME_WAIT (Linux
        # needs the flag on both sockets); a port another socket listens on can never be taken this way
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        where: dict[str, Any] = {"transport": "tcp", "port": server.getsockname()[1]}
    else:
        path, folder = _socket_path(run)
        path.unlink(missing_ok=True)  # left by a helper that died: this one holds the lock now
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        where = {"transport": "unix", "path": str(path), **({"folder": str(folder)} if folder else {})}
    server.listen(MAX_CLIENTS)
    return server, where


def _clean_up(where: dict[str, Any]) -> None:
    if where.get("transport") == "unix":
        Path(str(where["path"])).unlink(missing_ok=True)
        if "folder" in where:
            shutil.rmtree(str(where["folder"]), ignore_errors=True)


def _left_behind(state: Path) -> None:
    """A helper that died uncleanly may have left a private socket folder outside the data folder."""
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        old = json.loads(state.read_text(encoding="utf-8"))
        folder = Path(str(old["folder"]))
        if folder.name.startswith("memx-") and folder.stat().st_uid == os.getuid():
            shutil.rmtree(folder, ignore_errors=True)


def serve(settings: Settings, tcp: bool = USE_TCP) -> int:
    from ..compose import file_lock, open_memory, private_files
    from ..domain.errors import StoreError
    from .logs import logger

    private_files()
    log = logger(settings)
    run = settings.home / "run"
    run.mkdir(parents=True, exist_ok=True, mode=0o700)
    run.chmod(0o700)  # the hook refuses a socket in a folder others can enter
    state = state_file(settings)
    try:
        with file_lock(run / "hook-helper.lock", timeout=0.05):
            try:  # the model goes on loading in the background: a SessionStart needs none, a prompt waits
                memory = open_memory(settings, warm=True)
            except Exception as exc:
                atomic_write(state, json.dumps({"error": f"{type(exc).__name__}: {exc}", "pid": os.getpid()}))
                log.warning("hook helper could not open the memory: %s", exc)
                return 1
            _left_behind(state)
            serving = _Serving()
            token = secrets.token_hex(32)
            server, where = _listen(run, tcp)
            try:
                with server:
                    server.settimeout(settings.hook_daemon_idle_minutes * 60)
                    record = {**where, "token": token, "pid": os.getpid(), "version": __version__}
                    record |= {"protocol": PROTOCOL}
                    atomic_write(state, json.dumps(record))  # the whole way can ask from now on
                    log.info("hook helper %d listening (%s)", os.getpid(), where["transport"])
                    threading.Thread(target=_publish_routes, args=(state, record, serving), daemon=True).start()
                    _accept(server, token, memory, log)
                    return 0
            finally:
                with serving.lock:
                    serving.done = True
                    state.unlink(missing_ok=True)
                _clean_up(where)
    except StoreError:
        return 0  # another helper holds the lock: it answers


@dataclasses.dataclass
class _Serving:
    """Whether the helper still serves (its state file may be written), under a lock."""

    done: bool = False
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _publish_routes(state: Path, record: dict[str, Any], serving: _Serving) -> None:
    """Add to the state file what a hook process may settle before it asks (``quick.py``), from the
    registry: once the helper listens, so that the first hook, which waits for it, does not also wait for
    the registry's import. Until then hooks take the whole way, which needs none of it."""
    from .client_hook import routes
    from .tool_payloads import tool_kinds

    published = {**record, "routes": routes(), "tool_kinds": tool_kinds()}
    with serving.lock:
        if not serving.done:  # never a state file for a helper that has stopped
            atomic_write(state, json.dumps(published))


def _accept(server: socket.socket, token: str, memory: Memory, log: logging.Logger) -> None:
    one_at_a_time = threading.Lock()  # Memory is not made for concurrent calls; the reading is
    slots = threading.BoundedSemaphore(MAX_CLIENTS)
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            log.info("hook helper %d idle: exiting", os.getpid())
            return
        if not slots.acquire(blocking=False):
            conn.close()
            log.warning("hook helper busy: %d connections open, one refused", MAX_CLIENTS)
            continue

        def answer(conn: socket.socket = conn) -> None:
            try:
                with conn:
                    _answer(conn, token, memory, one_at_a_time, log)
            finally:
                slots.release()

        threading.Thread(target=answer, name="memx-hook-answer", daemon=True).start()


def _verified_payload(conn: socket.socket, token: str, deadline: float) -> dict[str, Any] | None:
    """The request's payload once the client proved it holds the secret, else None."""
    hello = json.loads(_read_line(conn, deadline) or b"{}").get("hello")
    if not isinstance(hello, str) or not 16 <= len(hello) <= 128:
        return None
    nonce = secrets.token_hex(16)
    _send(conn, {"nonce": nonce, "proof": _proof(token, "helper", hello, nonce)})
    request = json.loads(_read_line(conn, deadline) or b"{}")
    if not hmac.compare_digest(str(request.get("proof", "")), _proof(token, "hook", nonce, hello)):
        return None
    payload = request.get("payload")
    return payload if isinstance(payload, dict) else {}


def _answer(
    conn: socket.socket, token: str, memory: Memory, one_at_a_time: threading.Lock, log: logging.Logger
) -> None:

    try:
        payload = _verified_payload(conn, token, time.monotonic() + REQUEST_SECONDS)
    except TimeoutError:
        log.warning("hook helper dropped a client too slow to send its request")
        return
    except (OSError, ValueError, AttributeError) as exc:
        log.warning("hook helper dropped a bad request: %s", type(exc).__name__)
        return
    if payload is None:
        log.warning("hook helper refused a client that could not prove the secret")
        return
    if "command" in payload or "hook" in payload:
        reply = (_command if "command" in payload else _hook)(memory, payload, one_at_a_time, log)
        with contextlib.suppress(OSError):
            conn.settimeout(REQUEST_SECONDS)
            _send(conn, reply)
        return
    try:
        with one_at_a_time:
            cwd = Path(str(payload.get("cwd", "")))
            memory.set_cwd(cwd if str(cwd) and cwd.is_dir() else Path.home())
            if "moment" in payload:  # a tool call: the fix or warning for it (usecases/moment.py)
                from ..domain.tool_events import from_wire

                text = memory.moment(from_wire(payload["moment"]))
            else:
                text = memory.inject(payload)
    except Exception as exc:  # fail open: the hook prints nothing
        log.warning("hook helper failed open: %s: %s", type(exc).__name__, exc)
        text = ""
    with contextlib.suppress(OSError):
        conn.settimeout(REQUEST_SECONDS)
        _send(conn, {"text": text})


def _hook(
    memory: Memory, payload: dict[str, Any], one_at_a_time: threading.Lock, log: logging.Logger
) -> dict[str, Any]:
    """A hook call as the hook process read it (``quick.py``): ``{"print": what the hook prints}``, or
    ``{"whole": why}`` when it is no call the helper answers (the hook then takes the whole way)."""
    from ..clients import Places
    from .client_hook import answer

    call = payload.get("hook")
    if not isinstance(call, dict) or not isinstance(call.get("payload"), dict):
        return {"whole": "not a hook call"}
    places = Places(Path(str(call.get("home") or Path.home())), Path(str(call.get("cwd") or Path.home())))
    try:
        with one_at_a_time:
            out = answer(str(call.get("client", "")), call["payload"], places, bool(call.get("json")), memory, log)
    except Exception as exc:  # the whole way reads it again, fails open there and says so in the log
        log.warning("hook helper could not read a hook call: %s: %s", type(exc).__name__, exc)
        return {"whole": "error"}
    return {"whole": "not answered here"} if out is None else {"print": out}


def _command(
    memory: Memory, payload: dict[str, Any], one_at_a_time: threading.Lock, log: logging.Logger
) -> dict[str, Any]:
    """A ``memx`` command run here, on the open Memory, as the command would run itself."""
    from ..cli.app import WARM_COMMANDS, answer_command

    argv = payload.get("command")
    if payload.get("settings") != fingerprint(memory.settings):
        return {"refused": "other settings"}  # another environment: the command runs itself
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return {"refused": "not a command line"}
    cwd = Path(str(payload.get("cwd", "")))
    with one_at_a_time:
        memory.set_cwd(cwd if str(cwd) and cwd.is_dir() else Path.home())
        done = answer_command(memory, argv, color=bool(payload.get("color")))
    if done is None:
        return {"refused": f"not a command the helper answers (one of {', '.join(sorted(WARM_COMMANDS))})"}
    code, out, err = done
    log.info("hook helper answered a memx command: exit %d", code)
    return {"code": code, "stdout": out, "stderr": err}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memx-hook-helper")
    parser.add_argument("--home")
    parser.add_argument("--tcp", action="store_true", help="loopback TCP instead of a Unix socket (as on Windows)")
    args = parser.parse_args(argv)
    small_heap()  # a long-running process too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a retired helper removes its socket and state
    return serve(load_settings(home=args.home), tcp=args.tcp or USE_TCP)


if __name__ == "__main__":
    sys.exit(main())
