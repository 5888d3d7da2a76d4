"""AnthropicRefiner: the Reflector's LLM through the ``anthropic`` SDK (an adapter: imported lazily)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from ..engine.reflector.episode_writer import write_prompt
from ..engine.reflector.llm import (
    MERGE_PROMPT,
    SYSTEM,
    Refiner,
    Verdict,
    check_prompt,
    extract_prompt,
    parse_answer,
    parse_checks,
    parse_merge,
    review_prompt,
)

log = logging.getLogger(__name__)


class AnthropicRefiner:
    """One Messages API call per event, through the ``anthropic`` SDK (model, base URL, timeout set by the
    caller; no retries: a failure falls back to rules at once)."""

    def __init__(self, api_key: str, model: str, base_url: str = "", timeout: float = 20.0) -> None:
        import anthropic

        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url or None, timeout=timeout, max_retries=0)
        self.model = model
        self.calls = 0
        self.failures = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def _text(self, prompt: str) -> str:
        self.calls += 1
        response: Any = self._client.messages.create(
            model=self.model,
            max_tokens=1500,
            system=SYSTEM,
            messages=[{"role": "user", "content": prompt}],
        )
        usage = getattr(response, "usage", None)
        self.input_tokens += int(getattr(usage, "input_tokens", 0) or 0)
        self.output_tokens += int(getattr(usage, "output_tokens", 0) or 0)
        return "".join(getattr(b, "text", "") for b in response.content)

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
        """The bullets the LLM writes from a whole episode (the rules' drafts as hints); the Reflector
        checks them against the episode."""
        return self._ask(write_prompt(episode, drafts))

    def check(self, later: str, bullets: Sequence[tuple[int, str]]) -> dict[int, tuple[bool, str]] | None:
        """Which of a session's bullets still hold at its end, from what happened after them; None when the
        call or its answer failed (the bullets are kept)."""
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


def make_refiner(model: str, base_url: str, timeout: float) -> tuple[Refiner | None, str]:
    """An Anthropic refiner when ``ANTHROPIC_API_KEY`` is set; otherwise None and the reason."""
    key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if not key:
        return None, "no ANTHROPIC_API_KEY: the Reflector ran in rules mode"
    try:
        return AnthropicRefiner(key, model, base_url, timeout), ""
    except Exception as exc:  # the SDK missing or misconfigured: rules still work
        return None, f"LLM unavailable ({type(exc).__name__}): the Reflector ran in rules mode"
