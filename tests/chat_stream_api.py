"""A real HTTP server on loopback that speaks the OpenAI chat-completions API the way agent CLIs call it
with a custom provider (Copilot CLI's BYOK): streamed answers (server-sent ``chat.completion.chunk`` events
and ``[DONE]``) or whole ones, and a model list. Every request body is recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StreamingChatAPI:
    def __init__(self, answer: str = "done", model: str = "gpt-4.1") -> None:
        self.answer, self.model = answer, model
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reply(self, body: dict[str, Any]) -> tuple[str, bytes]:
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not body.get("stream"):
            message = {"role": "assistant", "content": self.answer}
            whole = {"id": "c1", "object": "chat.completion", "model": self.model, "usage": usage}
            whole["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
            return "application/json", json.dumps(whole).encode()
        first = {"index": 0, "delta": {"role": "assistant", "content": self.answer}, "finish_reason": None}
        last = {"index": 0, "delta": {}, "finish_reason": "stop"}
        chunks = [
            {"id": "c1", "object": "chat.completion.chunk", "model": self.model, "choices": [first]},
            {"id": "c1", "object": "chat.completion.chunk", "model": self.model, "choices": [last], "usage": usage},
        ]
        return "text/event-stream", (
            "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        ).encode()

    @contextmanager
    def running(self) -> Iterator[StreamingChatAPI]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, kind: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                api.requests.append({"path": self.path, **body})
                self._send(*api.reply(body))

            def do_GET(self) -> None:
                listed = {"object": "list", "data": [{"id": api.model, "object": "model"}]}
                self._send("application/json", json.dumps(listed).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
