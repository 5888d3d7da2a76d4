"""A real HTTP server on loopback that speaks the OpenAI chat-completions API (as Ollama, llama.cpp and
LM Studio serve it), answering session mode's prompts like ``MessagesAPI("session")``; "limited" answers
HTTP 429 with a retry-after. Every request body is recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .messages_api import MessagesAPI


class ChatCompletionsAPI:
    def __init__(self, lessons: list[dict[str, Any]] | None = None, behaviour: str = "session") -> None:
        self.behaviour = behaviour
        self._answers = MessagesAPI("session", lessons=lessons)
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if self.behaviour == "limited":
            return 429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, {"retry-after": "90"}
        prompt = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        text = self._answers._session_answer(prompt)
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4}
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        return 200, {"id": "chatcmpl-loopback", "object": "chat.completion", "choices": [choice], "usage": usage}, {}

    @contextmanager
    def running(self) -> Iterator[ChatCompletionsAPI]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                api.requests.append({"path": self.path, **body})
                status, payload, headers = api.answer(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in {"content-type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
