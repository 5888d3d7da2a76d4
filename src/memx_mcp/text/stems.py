"""Words for BM25 as search engines count them: lower-cased Latin words, a 179-word English stop list
(NLTK's), Snowball stemming (``py_rust_stemmers``, which fastembed installs). Chinese and Japanese text gives
no stems here: the tokenizer's bigrams serve it (``tokenize.py``)."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from py_rust_stemmers import SnowballStemmer

STOP_LIST = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him
    his himself she she's her hers herself it it's its itself they them their theirs themselves what which who
    whom this that that'll these those am is are was were be been being have has had having do does did doing a
    an the and but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here there when
    where why how all any both each few more most other some such no nor not only own same so than too very s t
    can will just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't
    doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't
    shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()
)
_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile(r"^[0-9a-zà-ɏ']+$")
_STEMMER = SnowballStemmer("english")


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    return str(_STEMMER.stem_word(word))


@lru_cache(maxsize=65_536)
def _counted(word: str) -> str:
    """The stem a lower-cased word counts as; "" for a stop word, a word of one character or one not in
    Latin script."""
    return _stem(word) if word not in STOP_LIST and _LATIN.match(word) and len(word) > 1 else ""


def stem_counts(text: str) -> Counter[str]:
    """How often each stem of ``text`` occurs, stop words left out (``Counter`` of stems)."""
    return Counter(s for s in map(_counted, _WORD.findall(text.lower())) if s)


def query_stems(text: str) -> tuple[str, ...]:
    """The query's distinct stems, in order."""
    return tuple(stem_counts(text))


_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+\b")


def names(text: str) -> frozenset[str]:
    """Capitalised words inside a sentence (not its first word), lower-cased: the people, places and
    products a query names."""
    return frozenset(w.lower() for w in _NAME.findall(text.strip()) if w.lower() not in STOP_LIST)
