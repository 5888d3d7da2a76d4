"""Tokenization that understands code and CJK.

Code: ``pytest -v`` gives ``pytest`` and ``-v``; ``--dry-run`` keeps the flag and adds ``dry``, ``run``;
``snake_case``, ``dotted.names``, ``src/paths.py`` and ``CamelCaseErrors`` keep the whole token and add
their parts. CJK has no spaces, so a run of Han/Kana/Hangul gives its characters and its bigrams: any
Chinese or Japanese substring of two or more characters then matches exactly."""

from __future__ import annotations

import re
from functools import lru_cache

_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af"
_CHUNK = re.compile(rf"[{_CJK_CHARS}]+|[^\s{_CJK_CHARS}]+")
_CJK_RUN = re.compile(rf"^[{_CJK_CHARS}]+$")
_PIECE = re.compile(r"\w+", re.UNICODE)
# the words of an identifier: BetaCode20250825Param → Beta Code 20250825 Param
CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_EDGE = "\"'`()[]{}<>,;:!?。、，：；！？「」『』（）"
_CJK_CHAR = re.compile(rf"[{_CJK_CHARS}]")

STOP_WORDS = frozenset(
    """a an and are as at be been but by can could did do does doing for from had has have how i if in into is
    it its it's me my of on or our so than that the their them then there these they this to too us was we
    were what when where which while who why will with would you your""".split()
)
# Words too common to be a query's subject on their own (the usual English stop list, question words and
# a prompt's fillers): a query made only of these matches nothing by keyword ("the", "how should I do it"),
# and `forget --query` never archives what only they matched.
COMMON_WORDS = STOP_WORDS | frozenset(
    """about above after again against all am any aren't because before being below between both couldn't
    didn't doesn't don't down during each few further hadn't hasn't haven't he he'd he'll he's her here hers
    herself him himself his how's i'd i'll i'm i've isn't itself let's more most mustn't myself no nor not off
    once only other ought ours ourselves out over own same shan't she she'd she'll she's should shouldn't some
    such theirs themselves they'd they'll they're they've those through under until up very wasn't we'd we'll
    we're we've weren't what's when's where's who's whom why's won't wouldn't you'd you'll you're you've
    yours yourself yourselves just now also please thanks thank ok okay yes yeah hi hello hey sure right well
    still again anything something thing things way get got make made let go going want need know think see
    look like one ones""".split()
)
# Single kana/han that carry grammar rather than meaning; their bigrams still match.
CJK_STOP_CHARS = frozenset("のはがをにでともへやかなたしてすまれるだい了的是在和与就都而及着过吗呢吧啊")


def _code_parts(token: str) -> list[str]:
    """Pieces between punctuation (``.``, ``/``, ``-``, ``:``), then their snake_case and CamelCase parts."""
    parts: list[str] = []
    for piece in _PIECE.findall(token):
        snake = [s for s in piece.split("_") if s]
        camel = [c for s in snake for c in CAMEL_PARTS.findall(s)]
        parts.append(piece.lower())
        if len(snake) > 1:
            parts.extend(s.lower() for s in snake)
        if len(camel) > len(snake):
            parts.extend(c.lower() for c in camel)
    return parts


_STEM_RULES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light English stemmer for plain words (painting → paint, stories → story, went stays went):
    inflections match without a dictionary. Code tokens (with digits or punctuation) are left whole."""
    if len(word) <= 4 or not word.isalpha() or not word.isascii():
        return word
    for suffix, replacement in _STEM_RULES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            base = word[: -len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running → run, stopped → stop
            return base
    return word


def _latin_terms(chunk: str) -> list[str]:
    token = chunk.strip(_EDGE).rstrip(".")
    if not token:
        return []
    whole = token.lower()
    terms = [whole, *(p for p in _code_parts(token) if p != whole)]
    return [stem(t) for t in terms]


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [*run, *(run[i : i + 2] for i in range(len(run) - 1))]


_CACHED_CHUNK = 48  # longer chunks (a Chinese paragraph is one) are split each time, not kept


@lru_cache(maxsize=32_768)
def _chunk_terms(chunk: str) -> tuple[str, ...]:
    return tuple(_cjk_terms(chunk) if _CJK_RUN.match(chunk) else _latin_terms(chunk))


def tokens(text: str) -> list[str]:
    """Every term of ``text`` in order, with repeats: what the full-text index stores. A chunk's terms are
    a function of the chunk alone, and most chunks (words) recur from bullet to bullet: they are kept."""
    out: list[str] = []
    for chunk in _CHUNK.findall(text):
        if len(chunk) <= _CACHED_CHUNK:
            out.extend(_chunk_terms(chunk))
        else:
            out.extend(_cjk_terms(chunk) if _CJK_RUN.match(chunk) else _latin_terms(chunk))
    return out


def query_terms(text: str) -> list[str]:
    """Distinct meaningful terms of a query, in order: stop words removed, and of CJK only the bigrams
    (single characters match nearly every CJK text; they stay in the index for one-character queries).
    None at all when every word is a common one (``COMMON_WORDS``)."""
    seen: dict[str, None] = {}
    for term in tokens(text):
        seen.setdefault(term, None)
    all_terms = list(seen)
    has_bigrams = any(len(t) == 2 and is_cjk(t) for t in all_terms)
    if all(t in COMMON_WORDS or t in CJK_STOP_CHARS for t in all_terms):
        return []  # nothing but common words: no subject to match
    return [
        t
        for t in all_terms
        if t not in STOP_WORDS and t not in CJK_STOP_CHARS and not (has_bigrams and len(t) == 1 and is_cjk(t))
    ]


def is_cjk(term: str) -> bool:
    return bool(_CJK_CHAR.search(term))


def cjk_char_count(text: str) -> int:
    return len(_CJK_CHAR.findall(text))
