"""The model port: every capability a reading asks of the model that reads sessions, declared once. Every
backend (``adapters/``: the Anthropic API, an OpenAI-compatible server, the user's coding CLI) satisfies it
whole; a reading calls these methods and never probes for one.

Each call answers None when the call or its answer failed (the reading falls back to the rules' view and
says so); ``lessons`` raises ``RateLimited`` (domain/errors.py) so the session waits for later."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .session_reading import Decision, Lesson
    from .verdicts import Verdict


@runtime_checkable
class Refiner(Protocol):
    backend: str  # its name in ``llm_backend`` ("anthropic", "claude-cli" …)
    calls: int
    failures: int
    input_tokens: int
    output_tokens: int
    call_errors: list[str]  # why each call that could not be made failed (the reflect result says so)

    def review(self, excerpt: str, candidates: Sequence[str]) -> list[Verdict] | None:
        """hybrid: keep or drop the rules' drafts of one event, given its excerpt."""
        ...

    def write(self, episode: str, drafts: Sequence[str]) -> list[Verdict] | None:
        """hybrid: the bullets the model writes from a whole episode (the rules' drafts as hints)."""
        ...

    def extract(self, excerpt: str) -> list[Verdict] | None:
        """llm: the bullets worth keeping from one event's excerpt."""
        ...

    def check(self, later: str, bullets: Sequence[tuple[int, str]]) -> dict[int, tuple[bool, str]] | None:
        """llm: which of a session's bullets still hold at its end (index → keep, why)."""
        ...

    def lessons(self, window: str, part: int, parts: int, open_lessons: Sequence[Lesson] = ()) -> list[Lesson] | None:
        """session: the lessons one window of the condensed session shows."""
        ...

    def consolidate(self, lessons: Sequence[Lesson], known: Sequence[str], later: str = "") -> list[Decision] | None:
        """session: each lesson weighed against the others, the store and the session's later changes."""
        ...

    def merge(self, kept: str, other: str) -> str | None:
        """the Curator's merge of two near-duplicates (``merge_content``)."""
        ...
