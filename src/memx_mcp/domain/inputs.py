"""Checks on what callers send: limits, empty and binary text, control characters, the language of a query."""

from __future__ import annotations

import re

from .errors import InvalidInputError

MAX_CONTENT_CHARS = 4000
MAX_QUERY_CHARS = 2000
MAX_RESULTS_CAP = 50
TOKEN_BUDGET_CAP = 50_000
MAX_IDS = 200
# C0 and C1 controls and DEL. ESC, OSC 52 (the clipboard) and cursor moves would reach a terminal that prints
# the text; \n and \t are kept where text may span lines.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Characters that show nothing: text made only of them (and spaces) is empty to a reader.
_INVISIBLE = re.compile(
    r"[\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]+"
)


def mostly_cjk(text: str) -> bool:
    from ..text.tokenize import cjk_char_count

    letters = sum(1 for c in text if c.isalnum())
    return letters > 0 and cjk_char_count(text) / letters > 0.5


def is_blank(text: str) -> bool:
    """Nothing a reader would see: whitespace and zero-width characters only."""
    return not _INVISIBLE.sub("", text)


def clean_text(text: object, what: str, limit: int) -> str:
    """Text that may span lines: refuse what is not text, empty (or invisible), binary or over-long, with a
    message that says what to do; strip control characters other than newline and tab."""
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be text, not {type(text).__name__}")
    # Invalid UTF-8 from a command line arrives as lone surrogates: turn those bytes into U+FFFD.
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text or len(_CONTROL.findall(text)) > max(8, len(text) // 100):
        raise InvalidInputError(f"{what} looks binary (control characters); send plain text")
    stripped = _CONTROL.sub("", text).strip()
    if is_blank(stripped):
        raise InvalidInputError(f"{what} is empty")
    if len(stripped) > limit:
        raise InvalidInputError(f"{what} is {len(stripped)} characters; the limit is {limit}: shorten it")
    return stripped


def clean_line(text: object, what: str, limit: int) -> str:
    """One-line text (a tag, a tool name, a source): no control character at all, not even a newline."""
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be text, not {type(text).__name__}")
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if "\x00" in text:
        raise InvalidInputError(f"{what} looks binary (a NUL character); send plain text")
    stripped = " ".join(_LINE_CONTROL.sub(" ", text).split())
    if is_blank(stripped):
        raise InvalidInputError(f"{what} is empty")
    if len(stripped) > limit:
        raise InvalidInputError(f"{what} is {len(stripped)} characters; at most {limit}")
    return stripped


def clamp(name: str, value: int | None, default: int, cap: int, notes: list[str]) -> int:
    """``value`` within 1..``cap`` (``default`` when None), with a note when it had to move."""
    if value is None:
        return default
    if value < 1 or value > cap:
        clamped = min(max(1, value), cap)
        notes.append(f"{name} {value} clamped to {clamped}")
        return clamped
    return value
