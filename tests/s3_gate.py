"""A gate on loopback in front of a real S3-compatible server, for the team store's outage tests: ``open`` passes
every byte both ways, ``down`` resets every connection (what a client meets when the server is gone), ``hang``
accepts and never answers (a hung endpoint), ``read-only`` answers every write (PUT, POST, DELETE) with S3's
``403 AccessDenied`` and passes reads, one request per connection (what read-only credentials meet). Switching closes the connections it holds, so a client's pooled
connections meet the new state too. The server behind keeps its data: an outage ends with the store as it was."""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Literal

from .s3_server import free_port

Mode = Literal["open", "down", "hang", "read-only"]
WRITES = (b"PUT", b"POST", b"DELETE")
DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'
)


@dataclass
class Gate:
    upstream: int
    port: int = field(default_factory=free_port)
    mode: Mode = "open"

    def __post_init__(self) -> None:
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set(self, mode: Mode) -> None:
        with self._lock:
            self.mode = mode
            held, self._held = self._held, []
        for s in held:
            _reset(s)

    def stop(self) -> None:
        self._stopped = True
        self._listener.close()
        self.set("down")

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                mode = self.mode
                if mode != "down":
                    self._held.append(conn)
            if mode == "down":
                _reset(conn)
            elif mode == "read-only":
                threading.Thread(target=self._read_only, args=(conn,), daemon=True).start()
            elif mode == "open":
                try:
                    up = socket.create_connection(("127.0.0.1", self.upstream))
                except OSError:
                    _reset(conn)
                    continue
                with self._lock:
                    self._held.append(up)
                threading.Thread(target=_pipe, args=(conn, up), daemon=True).start()
                threading.Thread(target=_pipe, args=(up, conn), daemon=True).start()
            # "hang": held open, never read, never answered

    def _read_only(self, conn: socket.socket) -> None:
        """One request: a write refused as S3 refuses it, a read passed on with ``Connection: close`` (so that
        the client's next request comes on a new connection, seen here again)."""
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return _reset(conn)
                data += chunk
            head, rest = data.split(b"\r\n\r\n", 1)
            lines = head.split(b"\r\n")
            if lines[0].split(b" ", 1)[0] in WRITES:
                length = next((int(x.split(b":", 1)[1]) for x in lines if x.lower().startswith(b"content-length:")), 0)
                while len(rest) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                conn.sendall(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\n"
                    + f"Content-Length: {len(DENIED)}\r\nConnection: close\r\n\r\n".encode()
                    + DENIED
                )
                conn.close()
                return None
            kept = [x for x in lines if not x.lower().startswith(b"connection:")]
            up = socket.create_connection(("127.0.0.1", self.upstream))
            with self._lock:
                self._held.append(up)
            up.sendall(b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n" + rest)
            threading.Thread(target=_pipe, args=(conn, up), daemon=True).start()
            while data := up.recv(65536):  # the answer, then an orderly end (a reset could cut it short)
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            _reset(conn)
        return None


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _reset(dst)
        _reset(src)


def _reset(s: socket.socket) -> None:
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass
