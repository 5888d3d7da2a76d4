"""A real HTTP server on loopback that speaks the Gemini API as Gemini CLI calls it (``:generateContent``,
``:streamGenerateContent?alt=sse``, ``:countTokens``), every answer the same short text. Every request body is
recorded with its path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class GeminiAPI:
    def __init__(self, answer: str = "done") -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, path: str) -> tuple[str, bytes]:
        if ":countTokens" in path:
            return "application/json", json.dumps({"totalTokens": 1}).encode()
        candidate = {"content": {"parts": [{"text": self.answer}], "role": "model"}, "finishReason": "STOP", "index": 0}
        usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        whole = json.dumps({"candidates": [candidate], "usageMetadata": usage})
        if "alt=sse" in path:
            return "text/event-stream", f"data: {whole}\n\n".encode()
        return "application/json", whole.encode()

    @contextmanager
    def running(self) -> Iterator[GeminiAPI]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                api.requests.append({"path": self.path, **body})
                kind, data = api.reply(self.path)
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
