"""Cutting text to a size, the three ways memx needs: on one line for a table, at a word boundary for a
bullet (never inside a path or a flag), and keeping head and tail of a long output (where errors and
summaries are)."""

from __future__ import annotations


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def shorten(text: str, limit: int) -> str:
    """``text`` whole when it fits, else cut at a word boundary (never inside a path, a flag or an
    argument) and marked with a separate " …"; '' when not even the first word fits."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    out = ""
    for word in text.split(" "):
        if len(out) + len(word) + 1 > limit - 2:
            break
        out = f"{out} {word}" if out else word
    return f"{out} …" if out else ""


def head_and_tail(text: str, head: int, tail: int) -> str:
    """The start and the end of a long output (where errors and summaries are), the middle marked cut."""
    text = text.strip()
    if len(text) <= head + tail + 20:
        return text
    return f"{text[:head]}\n[… {len(text) - head - tail} characters left out …]\n{text[-tail:]}"
