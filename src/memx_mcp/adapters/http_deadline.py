"""An HTTP client whose every call has one deadline for the whole of it. httpx's timeouts are per operation:
a model server that trickles a byte every two seconds was never cut by a 5 s timeout (90 s observed).

Each request opens a connection of its own (no keep-alive: one model call is seconds long, a handshake is
nothing beside it); httpcore's trace hands over the connection's socket as it opens, and a timer shuts that
socket down at the deadline, which wakes a read blocked on it. The call then fails as a timeout
(``httpx.ReadTimeout``, which the Anthropic SDK turns into its ``APITimeoutError``)."""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx


class _Cut:
    """The deadline of one request: the socket it runs on, shut down when the time is up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    @property
    def message(self) -> str:
        return f"no whole answer within the call's deadline of {self.seconds:g} s"

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            found = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._socket = found if isinstance(found, socket.socket) else self._socket
                late = self.fired
            if late:
                self._shut()

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.fired = True
        self._shut()

    def _shut(self) -> None:
        with self._lock:
            sock = self._socket
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def deadline_client(deadline: float, *, http: ModuleType = httpx, **options: Any) -> Any:
    """An ``http.Client`` whose every request, body included, ends within ``deadline`` seconds. ``http`` is
    httpx, or the fork of it the Anthropic SDK requires (``httpx2``, the same API)."""
    return _client_class(http)(deadline, **options)


@functools.cache
def _client_class(http: ModuleType) -> Any:
    class CutStream(http.SyncByteStream):  # type: ignore[name-defined,misc]
        """A streamed response's body, under its request's deadline until it is closed."""

        def __init__(self, inner: Any, cut: _Cut, request: Any) -> None:
            self._inner, self._cut, self._request = inner, cut, request

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self._inner
            except http.TransportError as exc:
                if self._cut.fired:
                    raise http.ReadTimeout(self._cut.message, request=self._request) from exc
                raise

        def close(self) -> None:
            self._cut.cancel()
            self._inner.close()

    class DeadlineClient(http.Client):  # type: ignore[name-defined,misc]
        def __init__(self, deadline: float, **options: Any) -> None:
            super().__init__(limits=http.Limits(max_keepalive_connections=0), **options)
            self.deadline = deadline

        def send(self, request: Any, *, stream: bool = False, **options: Any) -> Any:
            cut = _Cut(self.deadline)
            request.extensions = {**request.extensions, "trace": cut.trace}
            cut.start()
            try:
                response = super().send(request, stream=stream, **options)
            except http.TransportError as exc:
                cut.cancel()
                if cut.fired:
                    raise http.ReadTimeout(cut.message, request=request) from exc
                raise
            except BaseException:
                cut.cancel()
                raise
            if not stream:  # the body was read within the deadline
                cut.cancel()
                return response
            response.stream = CutStream(response.stream, cut, request)
            return response

    return DeadlineClient
