"""One sentence splitter for the whole engine.

A dot ends a sentence only when whitespace (or the end) follows it, so ``tsconfig.json``, ``.env``,
``build.py``, ``v1.2.3``, ``https://x.y/z`` and ``3.14`` stay whole; abbreviations (``e.g.``, ``i.e.``,
``etc.`` before a small letter) and list numbers (``1.``) do not end one either; text inside backticks or
double quotes (commands, quoted error output) is never cut. ``。！？`` end a sentence with or without a
space after them. A line break always ends one: messages put list items and headings on lines of their
own."""

from __future__ import annotations

import re

# Never the end of a sentence, whatever follows.
_ABBREVIATIONS = frozenset(
    "e.g i.e cf vs viz approx incl resp esp fig no nr vol ch sec eq ref refs dept mr mrs ms dr prof st jr sr".split()
)
# The end of a sentence only when a capital letter (or nothing) follows.
_SOFT_ABBREVIATIONS = frozenset("etc al".split())

_PROTECTED = re.compile(r"`[^`\n]*`|\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”")
# A candidate end: ., ! or ? (any run, with closing quotes or brackets) then whitespace or the end;
# or a CJK end mark, with or without a space after it.
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)|[。！？]+[」』”’）)\]]*\s*|!(?=[\u3040-\u30ff\u4e00-\u9fff])")
_WORD_BEFORE = re.compile(r"(\S*?)[.!?]*[\"'”’)\]]*$")
_LIST_NUMBER = re.compile(r"\d{1,3}\.")
_NEXT = re.compile(r"\s*(\S)")


def _is_end(line: str, start: int, end: int, indent: int) -> bool:
    mark = line[start:end]
    if not mark.startswith("."):
        return True
    word = _WORD_BEFORE.search(line[max(0, start - 60) : start + 1])  # the last word is enough
    token = word.group(1).lstrip("([{\"'“‘").lower().rstrip(".") if word else ""
    if token in _ABBREVIATIONS:
        return False
    follower = _NEXT.match(line, end)
    if token in _SOFT_ABBREVIATIONS:
        return follower is None or follower.group(1).isupper()
    # "1. Install …" at the start of a line is a list number, not the end of a sentence
    return not (token.isdigit() and start - len(token) <= indent)


def _split_line(line: str) -> list[str]:
    spans = [m.span() for m in _PROTECTED.finditer(line)]  # in order and disjoint
    indent = len(line) - len(line.lstrip())
    out: list[str] = []
    begin, span = 0, 0
    for m in _END.finditer(line):
        while span < len(spans) and spans[span][1] <= m.start():
            span += 1
        inside = span < len(spans) and spans[span][0] <= m.start()
        if inside or not _is_end(line, m.start(), m.end(), indent):
            continue
        out.append(line[begin : m.end()])
        begin = m.end()
    out.append(line[begin:])
    merged: list[str] = []
    for piece in out:  # "… it. 2. Run it.": the list number belongs to the sentence it opens
        if merged and _LIST_NUMBER.fullmatch(merged[-1].strip()):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones dropped, in order."""
    return [s.strip() for line in text.splitlines() for s in _split_line(line) if s.strip()]
