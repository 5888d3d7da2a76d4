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
    with Replay(record=Path("prompts.jsonl")).running() as api: ...      # api.url for the Anthropic SDK
    with Replay(answers=[Path("answers.jsonl")]).running() as api: ...

Keyed by the whole prompt, an answer stops replaying as soon as any instruction's wording changes. So an
answers file may have a companion ``<name>.content.jsonl`` (written by ``replay_content_keys.py`` from the
prompts of the commit the answers were written at): each recorded key with the key of its *content*, the
values memx put into the prompt's template (the window, the open lessons, the drafted lessons, …; see
``prompt_content.py``). A prompt whose whole text is unknown is then answered by the recorded answer whose
content is the same, and counted apart (``by_content``): the answer was written against the earlier wording.
A prompt whose content changed has no answer and is counted in ``unknown``, as before.

The server is the tests' loopback Messages API (``tests/messages_api.py``) with its answers from files.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.messages_api import MessagesAPI, api_error, reply

sys.path.insert(0, str(Path(__file__).parent))
from prompt_content import content_key, templates


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


class Replay(MessagesAPI):
    def __init__(self, record: Path | None = None, answers: Sequence[Path] = ()) -> None:
        if record is None and not answers:
            raise ValueError("give record (a file to write the prompts to), answers (files to answer from), or both")
        super().__init__()
        self.record = record
        self.answers: dict[str, str] = {}
        for path in answers:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.answers[str(row["key"])] = str(row["text"])
        # content key -> recorded answer, from each answers file's companion written at the recording commit
        self.by_content_answers: dict[str, str] = {}
        for path in answers:
            companion = path.with_name(path.name.removesuffix(".jsonl") + ".content.jsonl")
            if companion.exists():
                for line in companion.read_text(encoding="utf-8").splitlines():
                    row = json.loads(line) if line.strip() else {}
                    if row.get("content") and str(row["key"]) in self.answers:
                        self.by_content_answers[str(row["content"])] = self.answers[str(row["key"])]
        self._templates = templates() if self.by_content_answers else {}
        self.exact = 0
        self.by_content = 0
        self.missing: dict[str, int] = {}  # template name (or "?") -> prompts with no recorded answer
        self.seen: dict[str, int] = {}
        self.unknown = 0
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        system, prompt = _text_of(body)
        key = prompt_key(system, prompt)
        with self._lock:
            first = key not in self.seen
            self.seen[key] = self.seen.get(key, 0) + 1
            if key in self.answers:
                self.exact += 1
                return reply(body, self.answers[key])
            content = content_key(prompt, self._templates) if self._templates else None
            if content is not None and content in self.by_content_answers:
                self.by_content += 1
                return reply(body, self.by_content_answers[content])
            if self.record is None:
                self.unknown += 1
                kind = self._kind(prompt)
                self.missing[kind] = self.missing.get(kind, 0) + 1
                return api_error(f"no answer for {key}")
            if first:
                with self.record.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "system": system, "prompt": prompt}, ensure_ascii=False) + "\n")
            if self.answers:  # answering what is known, recording what follows from those answers
                return api_error(f"recorded {key}")
            return reply(body, '{"items": []}')

    def _kind(self, prompt: str) -> str:
        from prompt_content import content_of

        found = content_of(prompt, self._templates) if self._templates else None
        return found[0] if found else "?"

    def summary(self) -> str:
        """How the calls were answered: by the exact prompt, by content only (earlier wording), or not at all."""
        missing = ", ".join(f"{n} {k}" for k, n in sorted(self.missing.items()))
        return (
            f"answered: {self.exact} by the exact prompt, {self.by_content} by content only (answers written "
            f"against an earlier wording of the instructions), {self.unknown} without an answer"
            + (f" ({missing}; memx falls back for these)" if missing else "")
        )
