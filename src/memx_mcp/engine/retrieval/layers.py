"""The keyword layers of SPEC §7, each on its documented scale.

- L1 exact, in [0, 15]: the share of the query's terms found verbatim among the bullet's terms, each term
  weighted by its rarity among the candidates (local IDF: a name that every candidate contains counts
  little, the one rare word that only the right bullet has counts much); Chinese and Japanese bigrams
  count with BM25's term frequency and length normalisation.
- L2 fuzzy, in [0, 10]: the mean over query terms of the best rapidfuzz ratio against the bullet's terms
  (exact terms count 1.0; ratios under 0.8 count 0), so spelling variants and inflections still score.
- L3 metadata, in [0, 10]: Jaccard of the query terms and the bullet's tools / entities / tags."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from rapidfuzz import fuzz, process

from ...text.tokenize import is_cjk, tokens

L1_MAX = 15.0
L2_MAX = 10.0
L3_MAX = 10.0
FUZZY_CUTOFF = 80.0
MIN_FUZZY_LENGTH = 4


BM25_K1 = 1.2
BM25_B = 0.75


def exact_score(
    query: Sequence[str],
    bullet_terms: frozenset[str],
    weights: Mapping[str, float] | None = None,
    counts: Mapping[str, int] | None = None,
    relative_length: float = 1.0,
) -> float:
    """Found terms weighted by their rarity, as a share of the query's. With ``counts`` (the bullet's term
    frequencies) and its length relative to the candidates' mean, a found Chinese or Japanese term counts
    as in BM25: more when repeated, less in a long text, 1.0 once in a text of average length. Unsegmented
    CJK is matched by character bigrams, sub-word units for which frequency and length carry the signal
    (as in bigram BM25); a Latin word counts by presence, which suits short bullets. The share is capped
    at 1, so L1 stays in [0, 15]."""
    if not query:
        return 0.0
    if weights is None:
        return L1_MAX * sum(1 for term in query if term in bullet_terms) / len(query)
    total = sum(weights[t] for t in query)
    if counts is None or not counts:  # (no Chinese or Japanese term counted: each found term by its weight)
        found = sum(weights[t] for t in query if t in bullet_terms)
    else:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * relative_length)
        found = 0.0
        for t in query:
            if is_cjk(t) and counts.get(t):
                found += weights[t] * counts[t] * (BM25_K1 + 1) / (counts[t] + norm)
            elif t in bullet_terms:
                found += weights[t]
    return L1_MAX * min(1.0, found / total) if total else 0.0


def local_idf(query: Sequence[str], candidates: Sequence[frozenset[str]]) -> dict[str, float]:
    """``log(1 + N / df)`` of each query term over the candidate set (a term no candidate has counts as
    rarest)."""
    n = max(1, len(candidates))
    return {
        t: math.log(1 + n / max(1, sum(1 for c in candidates if t in c)))
        if any(t in c for c in candidates)
        else math.log(1 + n)
        for t in query
    }


def fuzzy_terms(bullet_terms: Iterable[str]) -> tuple[str, ...]:
    """The terms fuzzy matching compares: Latin-script terms of at least four characters."""
    return tuple(t for t in bullet_terms if len(t) >= MIN_FUZZY_LENGTH and not is_cjk(t))


def fuzzy_score(query: Sequence[str], bullet_terms: frozenset[str], latin: Sequence[str] | None = None) -> float:
    """``latin`` is ``fuzzy_terms(bullet_terms)`` when the caller has it already."""
    if not query:
        return 0.0
    latin = fuzzy_terms(bullet_terms) if latin is None else latin
    total = 0.0
    for term in query:
        if term in bullet_terms:
            total += 1.0
        elif len(term) >= MIN_FUZZY_LENGTH and not is_cjk(term) and latin:
            best = process.extractOne(term, latin, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
            if best is not None:
                total += best[1] / 100.0
    return L2_MAX * total / len(query)


def metadata_terms(values: Iterable[str]) -> frozenset[str]:
    """A bullet's tools/entities/tags, whole and split the way the tokenizer splits text."""
    terms: set[str] = set()
    for value in values:
        terms.update(tokens(value))  # the same normalisation as query terms (whole token, parts, stems)
    return frozenset(terms)


def metadata_score(query: Sequence[str], metadata: frozenset[str]) -> float:
    if not query or not metadata:
        return 0.0
    q = set(query)
    union = q | metadata
    return L3_MAX * len(q & metadata) / len(union)
