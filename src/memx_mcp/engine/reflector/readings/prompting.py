"""What every model backend of the Reflector shares: the prompts it answers and how each answer is
checked, over one ``complete(system, prompt)`` that a backend implements (the Anthropic API, an
OpenAI-compatible server, the user's own coding CLI). Any failure returns None and the Reflector falls
back to rules; a rate limit (``RateLimited``) propagates from ``lessons`` so the session waits."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import ValidationError

from ....domain.errors import RateLimited
from .episode_writer import write_prompt
from .session_reading import (
    SESSION_SYSTEM,
    Decision,
    Lesson,
    consolidate_prompt,
    parse_consolidated,
    parse_lessons,
    window_prompt,
)
from .verdicts import (
    MERGE_PROMPT,
    SYSTEM,
    Verdict,
    check_prompt,
    extract_prompt,
    parse_answer,
    parse_checks,
    parse_merge,
    review_prompt,
)

log = logging.getLogger(__name__)
MAX_OUTPUT_TOKENS = 1500
SESSION_OUTPUT_TOKENS = 4000


class PromptRefiner:
    """A Refiner over ``complete``; counts calls, failures and tokens (as the backend reports them, else
    estimated at four characters a token)."""

    backend = "model"

    def __init__(self) -> None:
        self.calls = 0
        self.failures = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.call_errors: list[str] = []  # why each call that could not be made failed (the result says so)

    def complete(self, system: str, prompt: str, max_tokens: int) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _text(self, prompt: str, system: str = SYSTEM, max_tokens: int = MAX_OUTPUT_TOKENS) -> str:
        self.calls += 1
        try:
            return self.complete(system, prompt, max_tokens)
        except RateLimited:
            raise
        except Exception as exc:  # the caller falls back; the reflect result says the call could not be made
            self.call_errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            raise

    def _count(self, prompt_chars: int, answer_chars: int, input_tokens: int = 0, output_tokens: int = 0) -> None:
        self.input_tokens += input_tokens or prompt_chars // 4
        self.output_tokens += output_tokens or answer_chars // 4

    def _ask(self, prompt: str) -> list[Verdict] | None:
        try:
            return parse_answer(self._text(prompt))
        except (ValidationError, ValueError) as exc:
            self.failures += 1
            log.warning("LLM answer rejected (%s): falling back to rules", type(exc).__name__)
        except Exception as exc:  # network, timeout, rate limit, 5xx: all fall back
            self.failures += 1
            log.warning("LLM call failed (%s): falling back to rules", type(exc).__name__)
        return None

    def review(self, excerpt: str, candidates: Sequence[str]) -> list[Verdict] | None:
        return self._ask(review_prompt(excerpt, candidates))

    def extract(self, excerpt: str) -> list[Verdict] | None:
        return self._ask(extract_prompt(excerpt))

    def write(self, episode: str, drafts: Sequence[str]) -> list[Verdict] | None:
        """The bullets the LLM writes from a whole episode (the rules' drafts as hints)."""
        return self._ask(write_prompt(episode, drafts))

    def check(self, later: str, bullets: Sequence[tuple[int, str]]) -> dict[int, tuple[bool, str]] | None:
        """Which of a session's bullets still hold at its end; None when the call or its answer failed."""
        try:
            return parse_checks(self._text(check_prompt(later, bullets)))
        except Exception as exc:  # network, timeout, rate limit, 5xx, a bad answer: keep the bullets
            self.failures += 1
            log.warning("LLM check failed (%s): the bullets are kept unchecked", type(exc).__name__)
            return None

    def merge(self, kept: str, other: str) -> str | None:
        """An LLM-written merge of two near-duplicates, or None (the caller merges deterministically)."""
        try:
            return parse_merge(self._text(MERGE_PROMPT.format(kept=kept, other=other)))
        except Exception as exc:
            self.failures += 1
            log.warning("LLM merge failed (%s): merging deterministically", type(exc).__name__)
            return None

    def lessons(self, window: str, part: int, parts: int, open_lessons: Sequence[Lesson] = ()) -> list[Lesson] | None:
        """The lessons of one window of a condensed session; None when the call or its answer failed.
        A rate limit raises ``RateLimited``: the caller leaves the session for later."""
        try:
            prompt = window_prompt(window, part, parts, open_lessons)
            return parse_lessons(self._text(prompt, SESSION_SYSTEM, SESSION_OUTPUT_TOKENS))
        except RateLimited:
            self.failures += 1
            raise
        except Exception as exc:
            self.failures += 1
            log.warning("session reading failed (%s): the rules read this part", type(exc).__name__)
            return None

    def consolidate(self, lessons: Sequence[Lesson], known: Sequence[str], later: str = "") -> list[Decision] | None:
        """The model's decision on each lesson against the others, the store and the session's later changes
        of the files they name; None when it failed."""
        try:
            text = self._text(consolidate_prompt(lessons, known, later), SESSION_SYSTEM, SESSION_OUTPUT_TOKENS)
            return parse_consolidated(text, len(lessons))
        except Exception as exc:
            self.failures += 1
            log.warning("consolidation failed (%s): the lessons are kept as read", type(exc).__name__)
            return None
