"""Checks on what callers send: limits, empty and binary text, the language of a query."""

from __future__ import annotations

import re

from .errors import InvalidInputError

MAX_CONTENT_CHARS = 4000
MAX_QUERY_CHARS = 2000
MAX_RESULTS_CAP = 50
TOKEN_BUDGET_CAP = 50_000
MAX_IDS = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def mostly_cjk(text: str) -> bool:
    from .retrieval.tokenize import cjk_char_count

    letters = sum(1 for c in text if c.isalnum())
    return letters > 0 and cjk_char_count(text) / letters > 0.5


def clean_text(text: str, what: str, limit: int) -> str:
    """Refuse empty, binary and over-long text with a message that says what to do."""
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be text")
    # Invalid UTF-8 from a command line arrives as lone surrogates: turn those bytes into U+FFFD.
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    stripped = text.strip()
    if not stripped:
        raise InvalidInputError(f"{what} is empty")
    if "\x00" in stripped or len(_CONTROL.findall(stripped)) > max(8, len(stripped) // 100):
        raise InvalidInputError(f"{what} looks binary (control characters); send plain text")
    if len(stripped) > limit:
        raise InvalidInputError(f"{what} is {len(stripped)} characters; the limit is {limit}: shorten it")
    return stripped
