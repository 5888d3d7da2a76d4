"""``memx ui``: a local web page over the same store, while MCP servers keep running.

Bound to 127.0.0.1 only. Every request must carry the random token printed with the URL (in the query for
the page, in the ``X-Memx-Token`` header for API calls; writes accept the header only), and a ``Host`` of
this machine's loopback (DNS rebinding). The browser is not started with that URL: a command line is
readable by every user of the machine (``/proc``). It gets a one-time code instead, which the page trades
once, within ``CODE_SECONDS``, for a redirect to the token URL. The page and its script and styles ship in
the package and are served as one document with a per-response nonce: no CDN, no build step."""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from .api import dispatch

if TYPE_CHECKING:
    from ..memory import Memory

MAX_BODY = 1_000_000
CODE_SECONDS = 300.0  # a cold browser may take a while to start


def page(nonce: str) -> bytes:
    folder = resources.files("memx_mcp.web") / "static"
    html = (folder / "index.html").read_text(encoding="utf-8")
    css = (folder / "app.css").read_text(encoding="utf-8")
    js = (folder / "app.js").read_text(encoding="utf-8")
    html = html.replace("/*CSS*/", css).replace("/*JS*/", js).replace("NONCE", nonce)
    return html.encode("utf-8")


class UiServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, memory: Memory, port: int = 0, token: str | None = None) -> None:
        self.memory = memory
        self.token = token or secrets.token_urlsafe(24)
        self.lock = threading.Lock()  # one API call at a time: a page for one person
        self._codes: dict[str, float] = {}  # one-time code -> until when it is good (0: used)
        self._codes_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?token={self.token}"

    def one_time_url(self) -> str:
        """A URL to start the browser with: it carries no secret, only a code good for one visit."""
        code = secrets.token_urlsafe(18)
        with self._codes_lock:
            self._codes[code] = time.monotonic() + CODE_SECONDS
        return f"http://127.0.0.1:{self.server_address[1]}/?code={code}"

    def redeem(self, code: str) -> bool:
        with self._codes_lock:
            until = self._codes.get(code)
            if until is not None:
                self._codes[code] = 0.0
        if until == 0.0:  # someone else may have been quicker than the browser
            sys.stderr.write("memx ui: a one-time link was opened a second time; if that was not you, stop memx ui\n")
        return until is not None and time.monotonic() < until


class Handler(BaseHTTPRequestHandler):
    server: UiServer
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client sending its request slowly holds its own thread, and for this long at most

    def log_message(self, format: str, *args: Any) -> None:  # no request log: URLs carry the token
        pass

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = {
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            **(extra or {}),
        }
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        if status >= 400:
            self.close_connection = True  # a body left unread must not be read as the next request
        extra = {"Connection": "close"} if self.close_connection else None
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", extra)

    def _host_ok(self) -> bool:
        port = self.server.server_address[1]
        return self.headers.get("Host", "") in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _body_length(self) -> int | None:
        """The declared body size; None (and a 400 or 413 sent) when it is not one this server reads."""
        values = self.headers.get_all("Content-Length") or ["0"]
        if len(set(values)) > 1 or not all(v.strip().isascii() and v.strip().isdigit() for v in values):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "Content-Length must be one number of bytes"})
            return None
        length = int(values[0])
        if length > MAX_BODY:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "request too large"})
            return None
        return length

    def _allowed(self, query: dict[str, str], header_only: bool) -> bool:
        if not self._host_ok():
            return False
        given = self.headers.get("X-Memx-Token", "" if header_only else query.get("token", ""))
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        length = self._body_length() if method == "POST" else 0
        if length is None:
            return
        if method == "GET" and parts.path == "/" and "code" in query and "token" not in query and self._host_ok():
            if self.server.redeem(query["code"]):
                self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": f"/?token={self.server.token}"})
            else:
                self._json(
                    HTTPStatus.FORBIDDEN,
                    {"error": "this link was used already or expired: use the URL `memx ui` printed"},
                )
            return
        if not self._allowed(query, header_only=method == "POST"):
            self._json(HTTPStatus.FORBIDDEN, {"error": "missing or wrong token (use the URL `memx ui` printed)"})
            return
        if method == "GET" and parts.path in ("/", "/index.html"):
            nonce = secrets.token_urlsafe(16)
            csp = f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'"
            self._send(HTTPStatus.OK, page(nonce), "text/html; charset=utf-8", {"Content-Security-Policy": csp})
            return
        body: dict[str, Any] = {}
        if method == "POST":
            try:
                raw = self.rfile.read(length)
            except OSError:  # the client stopped sending (the handler's timeout): nobody to answer
                self.close_connection = True
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "the body is not JSON"})
                return
            if not isinstance(body, dict):
                self._json(HTTPStatus.BAD_REQUEST, {"error": "the body must be a JSON object"})
                return
        with self.server.lock:
            try:
                status, data = dispatch(self.server.memory, method, parts.path, query, body)
            except Exception as exc:  # a bug: say so, keep serving
                status, data = 500, {"error": f"internal error ({type(exc).__name__})"}
        self._json(status, data)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")
