"""A Messages API server on loopback that records the prompts memx sends, or answers them from a file of
answers written by a real model: how hybrid mode is measured where no LLM can be reached at run time.

Two passes over the same sessions. ``record``: every request's system text and prompt are appended to a
JSONL file under a key (sha256 of both), and the server answers an empty list, so the run goes on (the
prompts memx sends do not depend on the answers: one per episode). A model then answers each prompt of
that file, seeing nothing else (not the sessions, not the labels, not memx's code); its answers go into a
JSONL file of ``{"key", "text"}``. ``replay``: the server answers each prompt with the recorded text, and
an unknown prompt with HTTP 500 (memx falls back to rules for it, and the benchmark counts it). Both files:
the known prompts are answered and the new ones recorded (a prompt built from earlier answers, such as the
end-of-session check of the bullets they gave).

    from llm_replay import Replay
    with Replay(record=Path("prompts.jsonl")) as api: ...      # api.url for the Anthropic SDK
    with Replay(answers=Path("answers.jsonl")) as api: ...
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any


def prompt_key(system: str, prompt: str) -> str:
    return hashlib.sha256(f"{system}\n\x00\n{prompt}".encode()).hexdigest()[:24]


def _text_of(body: dict[str, Any]) -> tuple[str, str]:
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "".join(str(b.get("text", "")) for b in system)
    content = body["messages"][0]["content"]
    if isinstance(content, list):
        content = "".join(str(b.get("text", "")) for b in content)
    return str(system), str(content)


class Replay:
    def __init__(self, record: Path | None = None, answers: Path | Sequence[Path] | None = None) -> None:
        if record is None and answers is None:
            raise ValueError("give record (a file to write the prompts to), answers (a file to answer from), or both")
        self.record = record
        self.answers: dict[str, str] = {}
        for path in [answers] if isinstance(answers, Path) else answers or []:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.answers[str(row["key"])] = str(row["text"])
        self.seen: dict[str, int] = {}
        self.unknown = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        system, prompt = _text_of(body)
        key = prompt_key(system, prompt)
        with self._lock:
            first = key not in self.seen
            self.seen[key] = self.seen.get(key, 0) + 1
            if key in self.answers:
                text = self.answers[key]
            elif self.record is not None:
                if first:
                    with self.record.open("a", encoding="utf-8") as f:
                        f.write(json.dumps({"key": key, "system": system, "prompt": prompt}, ensure_ascii=False) + "\n")
                if self.answers:  # answering what is known, recording what follows from those answers
                    return 500, {"type": "error", "error": {"type": "api_error", "message": f"recorded {key}"}}
                text = '{"items": []}'
            else:
                self.unknown += 1
                return 500, {"type": "error", "error": {"type": "api_error", "message": f"no answer for {key}"}}
        return 200, {
            "id": f"msg_{key}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "replay"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4},
        }

    def __enter__(self) -> Replay:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                status, payload = replay._answer(json.loads(self.rfile.read(length) or b"{}"))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
