"""A real HTTP server on loopback that speaks the OpenAI Responses API as Codex CLI streams it (server-sent
events: ``response.created``, one assistant message, ``response.completed``). Every request body is recorded,
so a test can see what the client sent the model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ResponsesAPI:
    def __init__(self, answer: str = "done") -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def events(self) -> list[dict[str, Any]]:
        message = {
            "type": "message",
            "role": "assistant",
            "id": "msg_loopback",
            "content": [{"type": "output_text", "text": self.answer}],
        }
        usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1, "output_tokens_details": None}
        return [
            {"type": "response.created", "response": {"id": "resp_loopback"}},
            {"type": "response.output_item.done", "item": message},
            {"type": "response.completed", "response": {"id": "resp_loopback", "usage": {**usage, "total_tokens": 2}}},
        ]

    @contextmanager
    def running(self) -> Iterator[ResponsesAPI]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                api.requests.append({"path": self.path, **body})
                data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in api.events()).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
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
