"""A real HTTP server on loopback that speaks the Anthropic Messages API, for the Reflector's LLM paths.

``behaviour`` picks the answer: "keep" (valid JSON keeping every candidate), "drop" (valid JSON dropping
all), "extract" (one bullet per event: the first of ``written``, or a default), "write" (the bullets given in
``written``, as if the LLM wrote them from the episode), "malformed" (not JSON), "error" (HTTP 500), "slow"
(answers after the client's timeout). ``checks`` answers the end-of-session check of llm mode (keep or not,
per bullet; ``check_fails``: HTTP 500). Every request body is recorded so tests can check what was sent."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def api_error(message: str) -> tuple[int, dict[str, Any]]:
    return 500, {"type": "error", "error": {"type": "api_error", "message": message}}


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of blocks (as Claude Code sends it)."""
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def reply(body: dict[str, Any], text: str) -> tuple[int, dict[str, Any]]:
    """A Messages API answer whose one text block is ``text``."""
    prompt = _text(body["messages"][0]["content"])
    return 200, {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4},
    }


class MessagesAPI:
    def __init__(
        self,
        behaviour: str = "keep",
        delay: float = 3.0,
        written: list[str] | None = None,
        checks: list[bool] | None = None,
        check_fails: bool = False,
        lessons: list[dict[str, Any]] | None = None,
    ) -> None:
        self.behaviour = behaviour
        self.delay = delay
        self.written = written or []  # "write": the bullets the LLM writes from an episode, as given
        self.checks = checks or []  # the end-of-session check: keep or not, per bullet (default: keep)
        self.check_fails = check_fails
        self.lessons = lessons or []  # "session": the lessons every window of a whole session yields
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # of every request, in order (a client's session ids)
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = _text(body["messages"][0]["content"])
        if self.behaviour == "error":
            return api_error("boom")
        if self.behaviour == "limited":
            return 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "rate limited"}}
        if self.behaviour == "session":
            return reply(body, self._session_answer(prompt))
        if self.behaviour == "slow":
            time.sleep(self.delay)
        if prompt.startswith("Bullets drafted from one coding session"):
            if self.check_fails:
                return api_error("boom")
            count = len(re.findall(r"^\d+\. \(step \d+\) ", prompt, re.M))
            keeps = [self.checks[i] if i < len(self.checks) else True for i in range(count)]
            items = [{"index": i, "keep": k, "why": "" if k else "a later step moved it"} for i, k in enumerate(keeps)]
            text = json.dumps({"items": items})
        elif prompt.startswith("Two memory bullets") and self.behaviour not in ("malformed",):
            text = json.dumps(
                {
                    "bullet": "LLM merge: run the suite in parallel with `pytest -n auto`, which needs "
                    "pytest-xdist; `-n 4` pins the worker count."
                }
            )
        elif self.behaviour == "write" and prompt.startswith("One whole episode"):
            items = [
                {
                    "index": 0,
                    "keep": True,
                    "score": 80,
                    "bullet": b,
                    "section": "DEBUGGING",
                    "knowledge_type": "PITFALL",
                }
                for b in self.written
            ]
            text = json.dumps({"items": items})
        elif self.behaviour == "malformed":
            text = "Sure! Here are my thoughts, no JSON today."
        elif self.behaviour == "extract":
            text = json.dumps(
                {
                    "items": [
                        {
                            "index": 0,
                            "keep": True,
                            "score": 72,
                            "bullet": (self.written or ["Loopback rule: run `mix format` before committing."])[0],
                            "section": "WORKFLOW",
                            "knowledge_type": "METHOD",
                        }
                    ]
                }
            )
        else:
            count = len(re.findall(r"^\d+\. ", prompt, re.M))
            keep = self.behaviour == "keep"
            text = (
                "```json\n"
                + json.dumps(
                    {
                        "items": [
                            {
                                "index": i,
                                "keep": keep,
                                "score": 90,
                                "bullet": f"LLM-refined bullet {i}",
                                "section": "DEBUGGING",
                                "knowledge_type": "PITFALL",
                            }
                            for i in range(count)
                        ]
                    }
                )
                + "\n```"
            )
        return reply(body, text)

    def _session_answer(self, prompt: str) -> str:
        """Session mode's two prompts, and plain text for anything else (a client's own conversation)."""
        if re.search(r"Part \d+ of \d+ of one coding session", prompt):
            return json.dumps({"lessons": self.lessons})
        if "Lessons drafted from one coding session" in prompt:
            count = len(re.findall(r"^\d+\. \(steps ", prompt, re.M))
            return json.dumps({"keep": [{"index": i} for i in range(count)], "drop": []})
        return "Done: the loopback model has nothing more to say."

    @contextmanager
    def running(self) -> Iterator[MessagesAPI]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                api.requests.append(body)
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, payload = api.answer(body)
                if status == 200 and body.get("stream"):
                    self._stream(payload)
                    return
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                data = json.dumps({"type": "error", "error": {"type": "not_found_error", "message": "no"}}).encode()
                self.send_response(404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any]) -> None:
                """The answer as the Messages API streams it (server-sent events), as Claude Code asks."""
                text = "".join(b.get("text", "") for b in message["content"])
                head = {**message, "content": [], "stop_reason": None}
                events = [
                    ("message_start", {"type": "message_start", "message": head}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": text}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                       "stop_sequence": None}, "usage": message["usage"]}),
                    ("message_stop", {"type": "message_stop"}),
                ]  # fmt: skip
                data = "".join(f"event: {name}\ndata: {json.dumps(e)}\n\n" for name, e in events).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
