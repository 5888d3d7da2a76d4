"""A gate on loopback in front of a real S3-compatible server, for the team store's outage tests: ``open`` passes
every byte both ways, ``down`` resets every connection (what a client meets when the server is gone), ``hang``
accepts and never answers (a hung endpoint). Switching closes the connections it holds, so a client's pooled
connections meet the new state too. The server behind keeps its data: an outage ends with the store as it was."""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Literal

from .s3_server import free_port

Mode = Literal["open", "down", "hang"]


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
