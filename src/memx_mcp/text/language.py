"""Which language a text is in, the one way memx tells: Chinese or Japanese by their characters (kana
marks Japanese), else English, which stands for every language in Latin script here."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .tokenize import cjk_char_count

_KANA = re.compile(r"[\u3040-\u30ff]")


def mostly_cjk(text: str) -> bool:
    """More than half of the letters are Chinese or Japanese characters (the Curator's and recall's test)."""
    letters = sum(1 for c in text if c.isalnum())
    return letters > 0 and cjk_char_count(text) / letters > 0.5


def text_language(text: str) -> str:
    """en, zh or ja: the language of one text (more than 30 % Chinese or Japanese characters among its
    letters; kana marks Japanese)."""
    letters = sum(c.isalnum() for c in text) or 1
    if cjk_char_count(text) / letters > 0.3:
        return "ja" if _KANA.search(text) else "zh"
    return "en"


def script(text: str) -> str:
    """cjk or latin: the script family of one text (``text_language`` zh or ja, else latin). memx's keyword
    layers match across Chinese and Japanese (shared Han characters) but never between the two families."""
    return "latin" if text_language(text) == "en" else "cjk"


def language(texts: Sequence[str]) -> str:
    """en, zh or ja: what most of ``texts`` are written in (kana marks Japanese)."""
    votes = {"en": 0, "zh": 0, "ja": 0}
    for text in texts:
        votes[text_language(text)] += 1
    return max(votes, key=lambda k: (votes[k], k == "en"))
