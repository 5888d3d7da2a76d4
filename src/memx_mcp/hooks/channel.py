"""The hook's side of the channel to the warm helper (``helper.py`` is the helper's side and says why it
cannot be impersonated), with nothing but light standard-library modules: every hook process runs it, on
every tool call, before anything else of memx is imported (``quick.py``). No ``socket`` (its enum wrapping),
``secrets``, ``pathlib``, ``json`` or ``hmac`` here: ``_socket``, ``os.urandom`` and ``wire.py`` do the same
for what a hook needs."""

from __future__ import annotations

import os
import struct
import time

from . import wire

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on every hook call
if TYPE_CHECKING:
    from typing import Any

try:  # the C module under ``socket``: the same sockets, without ``socket.py``'s import cost
    import _socket as sockets
except ImportError:  # pragma: no cover - an interpreter without it
    import socket as sockets  # type: ignore[no-redef]

PROTOCOL = 3  # 2: no ``hook`` request and no routes in the state file; 1: the token in clear over loopback TCP
MAX_REQUEST = 1_000_000
HANDSHAKE_SECONDS = 3.0  # the hook's side of the challenge; the answer to a command may take longer


class AnswerLost(Exception):
    """The request reached a verified helper, but its answer did not come back: the command may have run."""


def state_path(home: str) -> str:
    """The helper's state file of the data folder ``home`` (``helper.state_file``)."""
    return os.path.join(home, "run", "hook-helper.json")


def read_state(home: str) -> dict[str, Any] | None:
    """The state file's content, or None when there is none (or it is no JSON object)."""
    try:
        with open(state_path(home), encoding="utf-8") as f:
            state = wire.loads(f.read())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def read_line(conn: Any, deadline: float) -> bytes:
    """One line, which must be complete before ``deadline`` (a monotonic time) however it trickles in."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the other side took too long")
        conn.settimeout(left)
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("request too large")
    return data


def send(conn: Any, message: dict[str, Any]) -> None:
    conn.sendall(wire.dumps(message).encode() + b"\n")


def proof(token: str, role: str, first: str, second: str) -> str:
    """HMAC-SHA256 of what ``role`` proves, keyed with the state file's secret (as ``hmac.new`` computes it)."""
    return wire.hmac_sha256(token.encode(), f"memx-{role}|{first}|{second}".encode())


def connect(state: dict[str, Any], timeout: float) -> Any:
    """A connection to where the state file says the helper listens; its folder must be this user's only."""
    if state.get("transport") != "unix":
        import socket

        return socket.create_connection(("127.0.0.1", int(state["port"])), timeout=timeout)
    path = str(state["path"])
    folder = os.stat(os.path.dirname(path))
    if folder.st_uid != os.getuid() or folder.st_mode & 0o077:
        raise PermissionError(f"{os.path.dirname(path)} is not this user's private folder")
    conn = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path)
    except BaseException:
        conn.close()
        raise
    return conn


def peer_is_the_helper(conn: Any, state: dict[str, Any]) -> bool:
    """On Linux, a Unix socket names the process that listens on it: it must be the one the state file
    names, of this user. Elsewhere (and over TCP) the proof of the secret decides alone."""
    if state.get("transport") != "unix" or not hasattr(sockets, "SO_PEERCRED"):
        return True
    raw = conn.getsockopt(sockets.SOL_SOCKET, sockets.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", raw)
    return bool(uid == os.getuid() and pid == int(state["pid"]))


def exchange(state: dict[str, Any], payload: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The answer of the helper ``state`` names to ``payload``, or None when no verified helper took it. A
    peer that cannot prove it holds the state file's secret gets nothing but a random challenge. Once the
    payload is sent, a missing answer raises ``AnswerLost``: the caller must not run a write a second time.
    The state's version and protocol are the caller's to check; a payload too large for the helper to take
    is not sent at all (None)."""
    try:
        body = wire.dumps(payload).encode()
    except (TypeError, ValueError):
        return None
    if len(body) + 128 > MAX_REQUEST:  # the helper would drop it unread
        return None
    try:
        token = str(state["token"])
        deadline = time.monotonic() + min(timeout, HANDSHAKE_SECONDS)
        conn = connect(state, timeout)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    try:
        try:
            if not peer_is_the_helper(conn, state):
                return None
            challenge = os.urandom(16).hex()  # what secrets.token_hex(16) is
            send(conn, {"hello": challenge})
            greeting = wire.loads(read_line(conn, deadline) or b"{}")
            nonce = str(greeting["nonce"])
            if not wire.same(str(greeting["proof"]), proof(token, "helper", challenge, nonce)):
                return None  # not the helper that wrote the state file
            mine = proof(token, "hook", nonce, challenge)  # hex: the line below is JSON as send would write it
            conn.sendall(b'{"proof": "' + mine.encode() + b'", "payload": ' + body + b"}\n")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        try:
            answer = wire.loads(read_line(conn, time.monotonic() + timeout) or b"{}")
        except (OSError, ValueError) as exc:
            raise AnswerLost(f"{type(exc).__name__}: {exc}") from exc
    finally:
        conn.close()
    if not isinstance(answer, dict):
        raise AnswerLost("the warm helper answered something else")
    return answer if "refused" not in answer else None
