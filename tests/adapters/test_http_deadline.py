"""One deadline for a whole model call, not for each read: a real server on loopback that trickles a byte
every half second (each read well inside any per-read timeout) is cut at the call's deadline, through the
Anthropic SDK and through the OpenAI-compatible backend, whether it trickles its headers or its body; a
server that answers at once is read whole as before."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.adapters.openai_compat import OpenAIRefiner
from memx_mcp.engine.reflector.readings.prompting import PromptRefiner

DEADLINE = 2.0
BYTE_EVERY = 0.5  # 60 bytes: 30 s of trickle, never a read of 2 s
OPENAI_ANSWER = b'{"choices": [{"message": {"role": "assistant", "content": "fine"}}], "usage": {}}'
ANTHROPIC_ANSWER = (
    b'{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",'
    b' "content": [{"type": "text", "text": "fine"}], "usage": {"input_tokens": 1, "output_tokens": 1}}'
)


@contextmanager
def trickling(where: str) -> Iterator[tuple[str, list[float]]]:
    """A server that answers every POST a byte at a time: the status line and headers (``headers``), the
    body after whole headers (``body``), or at once (``none``). Yields its URL and when each answer ended."""
    ended: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = OPENAI_ANSWER if "chat/completions" in self.path else ANTHROPIC_ANSWER
            head = (
                f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
            ).encode()
            slow = {"headers": head, "body": body, "none": b""}[where]
            try:
                if where == "body":
                    self.wfile.write(head)
                for i in range(len(slow)):
                    self.wfile.write(slow[i : i + 1])
                    self.wfile.flush()
                    time.sleep(BYTE_EVERY)
                self.wfile.write(head + body if where == "none" else body if where == "headers" else b"")
                self.wfile.flush()
            except OSError:  # the client went away: the call was cut
                pass
            ended.append(time.monotonic())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", ended
    finally:
        server.shutdown()
        server.server_close()


def refiner(backend: str, url: str) -> PromptRefiner:
    if backend == "anthropic":
        return AnthropicRefiner("sk-ant-loopback", "claude-haiku-4-5", url, DEADLINE)
    return OpenAIRefiner(url + "/v1", "qwen", "", DEADLINE)


@pytest.mark.parametrize("where", ["headers", "body"])
@pytest.mark.parametrize("backend", ["anthropic", "openai"])
def test_a_server_that_trickles_is_cut_at_the_call_s_deadline(backend: str, where: str) -> None:
    with trickling(where) as (url, _):
        model = refiner(backend, url)
        started = time.monotonic()
        assert model.lessons("a window of the session", 1, 1) is None  # the rules read this part instead
        took = time.monotonic() - started
    assert took < 3 * DEADLINE, f"cut after {took:.1f} s"  # uncut, the trickle lasts 30 s
    (error,) = model.call_errors  # what the reflect result says
    assert error.split(":")[0] in ("APITimeoutError", "ReadTimeout"), error


@pytest.mark.parametrize("backend", ["anthropic", "openai"])
def test_a_server_that_answers_at_once_is_read_whole(backend: str) -> None:
    with trickling("none") as (url, _):
        assert refiner(backend, url).complete("system", "prompt", 10) == "fine"
