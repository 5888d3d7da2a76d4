"""The learned ranking: a logistic regression over features every candidate already has (issue 33).

``relevance`` is one pure function: the weighted sum of a candidate's features squashed to [0, 1]. It takes
the place of SPEC §7's ``Blended`` (0.6 × keyword + 0.4 × semantic); Decay, recency and scope multiply it as
they multiply ``Blended``. The weights are fitted by ``benchmarks/fit_ranking.py`` on training data only
and shipped as ``ranking_weights.json`` beside this module (read by the use cases, not here: the engine does
no I/O). ``scale`` and ``shift`` put the fitted logit on the scale of SPEC's ``Blended`` (fitted on the
same training candidates), so that ``min_relevance`` and the prompt floor keep about their meaning."""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...domain.models import Bullet
from ...text.stems import stem_counts

# The features, in the order of the weights. Each is in [0, 1] (or near it).
FEATURES = (
    "exact",  # L1 / 15, the bullet's own words
    "fuzzy",  # L2 / 10
    "metadata",  # L3 / 10
    "semantic",  # cosine of bullet and query (0 in keyword-only mode)
    "context_exact",  # what the neighbours' words add to L1, / 15
    "context_only",  # share of the query's terms found only in the neighbours
    "context_semantic",  # how far the neighbours' best cosine is above the bullet's own (0 if not)
    "bm25",  # BM25 of the bullet's Snowball stems (stop words out), IDF over the candidates, / the most possible
    "bm25_context",  # the same with the neighbours' stems as a second field at half weight
    "fulltext",  # the full-text index's BM25 score over the whole scope, / the query's best (0: not found)
    "names",  # share of the names the query carries (capitalised inside a sentence) found in the bullet
    "named_time",  # 1: the query names a time and the bullet was written in it (or the week after)
    "other_time",  # 1: the query names a time and the bullet was not written in it
    "question",  # 1: the bullet is a question (it asks; it rarely answers)
    "keyword_only",  # 1: no semantic score (keyword-only mode, or a bullet without a vector)
    # BM25 with the statistics of the whole scope (``ScopeStats``: document frequency of each stem over the
    # scope's bullets, their mean length), not of the ~70 candidates of one recall; each / the most possible
    "scope_bm25",  # the bullet's own stems
    "scope_bm25_before",  # the stems of the bullet written just before it (its own field)
    "scope_bm25_after",  # the stems of the bullet written just after it (its own field)
    "scope_bm25f",  # the bullet with both neighbours at ``CONTEXT_FIELD`` as one document
    "scope_cover",  # IDF share of the query's stems the bullet has
    "scope_cover_context",  # IDF share of the query's stems the bullet or a neighbour has
    "speaker",  # 1: the query names the bullet's leading label ("Caroline: ..." -> caroline)
    "speaker_other",  # 1: the query names another leading label of the scope, not the bullet's
    "scope_bm25_top",  # scope_bm25 / the best of the query's candidates
    "scope_bm25f_top",  # scope_bm25f / the best of the query's candidates
)


@dataclass(frozen=True)
class RankingWeights:
    """A fitted model: one weight per feature of ``FEATURES``, an intercept, and the map onto SPEC's
    ``Blended`` scale."""

    weights: tuple[float, ...]
    intercept: float
    scale: float = 1.0
    shift: float = 0.0
    version: str = ""
    # the relevance a hit needs under this ranking (``RetrievalParams.min_relevance`` on its scale; None:
    # the setting's, which is on SPEC's Blended scale)
    min_relevance: float | None = None

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ValueError(f"ranking weights: {len(self.weights)} weights for {len(FEATURES)} features")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RankingWeights:
        named: Mapping[str, float] = data["weights"]
        missing = [f for f in FEATURES if f not in named]
        if missing:
            raise ValueError(f"ranking weights: no weight for {', '.join(missing)}")
        return cls(
            weights=tuple(float(named[f]) for f in FEATURES),
            intercept=float(data["intercept"]),
            scale=float(data.get("scale", 1.0)),
            shift=float(data.get("shift", 0.0)),
            version=str(data.get("version", "")),
            min_relevance=None if data.get("min_relevance") is None else float(data["min_relevance"]),
        )


def logit(features: Sequence[float], model: RankingWeights) -> float:
    if len(features) != len(model.weights):
        raise ValueError(f"{len(features)} features for {len(model.weights)} weights")
    weighted: float = sum(map(operator.mul, model.weights, features))
    return model.intercept + weighted


def relevance(features: Sequence[float], model: RankingWeights) -> float:
    """The learned ``Blended``: ``sigmoid(scale × (intercept + Σ wᵢ xᵢ) + shift)``, in (0, 1)."""
    z = model.scale * logit(features, model) + model.shift
    if z < -60.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


@dataclass(frozen=True)
class Bm25Stats:
    """Each query stem's IDF over the candidates and their mean length in stems (BM25's statistics, local
    to one recall)."""

    idf: Mapping[str, float]
    mean_length: float

    @cached_property
    def most(self) -> float:
        """The most a document could score, ``Σ idf × (K1 + 1)``."""
        return sum(self.idf.values()) * (K1 + 1.0)


K1 = 1.2
B = 0.75
CONTEXT_FIELD = 0.5  # a neighbour's occurrence of a stem counts half of the bullet's own


def bm25_stats(query: Sequence[str], documents: Sequence[Mapping[str, int]]) -> Bm25Stats:
    n = len(documents)
    lengths = [sum(d.values()) for d in documents]
    idf = {}
    for s in query:
        df = sum(1 for d in documents if s in d)
        idf[s] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return Bm25Stats(idf, sum(lengths) / n if n else 1.0)


def bm25_share(
    query: Sequence[str],
    own: Mapping[str, int],
    stats: Bm25Stats,
    context: Mapping[str, int] | None = None,
) -> float:
    """BM25 of the bullet (with its neighbours' stems as a second field at ``CONTEXT_FIELD``) as a share of
    the most a document could score, ``Σ idf × (K1 + 1)``: in [0, 1)."""
    total = stats.most
    if not total:
        return 0.0
    length = sum(own.values()) + (CONTEXT_FIELD * sum(context.values()) if context else 0.0)
    norm = K1 * (1.0 - B + B * length / (stats.mean_length or 1.0))
    score = 0.0
    for s in query:
        tf = own.get(s, 0) + (CONTEXT_FIELD * context.get(s, 0) if context else 0.0)
        if tf:
            score += stats.idf[s] * tf * (K1 + 1.0) / (tf + norm)
    return score / total


@dataclass(frozen=True)
class ScopeStats:
    """BM25's statistics over every active bullet of the scopes a recall sees (not only its candidates):
    how many bullets hold each stem, how many bullets there are and their mean length in stems; each
    bullet's stems, the bullets written just before and after it (its neighbours in time, as the store's
    ``adjacent`` finds them) and the leading labels ("Caroline: ...") of the scope. Made by
    ``scope_stats`` from the bullets; the use cases keep it until the store changes."""

    documents: int
    mean_length: float
    df: Mapping[str, int]
    stems: Mapping[str, Mapping[str, int]]
    before: Mapping[str, str]
    after: Mapping[str, str]
    labels: frozenset[str]

    def idf(self, stem: str) -> float:
        df = self.df.get(stem, 0)
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))


_LABEL = re.compile(r"^\s*([^\W\d_][\w' .-]{0,30}?)\s*:\s")


def lead_label(text: str) -> str:
    """The label a bullet starts with, lower-cased: "Caroline: I went..." -> "caroline"; "" when it starts
    with none (at most three words before the colon)."""
    m = _LABEL.match(text)
    if m is None or len(m.group(1).split()) > 3:
        return ""
    return m.group(1).strip().lower()


def scope_stats(
    bullets: Sequence[Bullet], window: float, made: Mapping[str, Mapping[str, int]] | None = None
) -> ScopeStats:
    """The statistics of ``bullets`` (a recall's visible scopes); neighbours are the bullets just before and
    after in the same scope, at most ``window`` seconds apart and not of the same instant (a batch).
    ``made``: the stems (``stem_counts``) of some bullets' texts already, by id."""
    made = made or {}
    stems = {b.id: made[b.id] if b.id in made else stem_counts(b.content) for b in bullets}
    df: Counter[str] = Counter()
    for counts in stems.values():
        df.update(counts.keys())
    total = sum(sum(c.values()) for c in stems.values())
    order = sorted(bullets, key=lambda b: (b.scope, b.created_at, b.id))
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for a, b in itertools.pairwise(order):
        if a.scope == b.scope and 0.0 < (b.created_at - a.created_at).total_seconds() <= window:
            after[a.id], before[b.id] = b.id, a.id
    labels = frozenset(label for b in bullets if (label := lead_label(b.content)))
    return ScopeStats(len(bullets), total / len(bullets) if bullets else 1.0, df, stems, before, after, labels)


def _bm25(query: Sequence[str], idf: Mapping[str, float], counts: Mapping[str, float], mean: float) -> float:
    norm = K1 * (1.0 - B + B * sum(counts.values()) / (mean or 1.0))
    return sum(idf[s] * counts[s] * (K1 + 1.0) / (counts[s] + norm) for s in query if counts.get(s))


_NONE: Mapping[str, int] = {}


@dataclass(frozen=True)
class ScopeQuery:
    """What ``scope_features`` needs of one query, made once per recall (``scope_query``) rather than once
    per candidate: each stem's IDF over the scope, their sum, and the names it carries that lead some
    bullet of the scope."""

    stems: tuple[str, ...]
    said: frozenset[str]
    stats: ScopeStats
    idf: Mapping[str, float]
    idf_total: float
    most: float  # the most a document could score: Σ idf × (K1 + 1)
    labelled: tuple[str, ...]  # names the query carries that are leading labels of the scope


def scope_query(query: Sequence[str], said: frozenset[str], stats: ScopeStats) -> ScopeQuery:
    idf = {s: stats.idf(s) for s in query}
    total = sum(idf.values())
    labelled = tuple(n for n in said if n in stats.labels)
    return ScopeQuery(tuple(query), said, stats, idf, total, total * (K1 + 1.0), labelled)


def scope_features(
    query: Sequence[str], said: frozenset[str], bullet: str, own: Mapping[str, int], label: str, stats: ScopeStats
) -> tuple[float, ...]:
    """The features ``scope_bm25`` .. ``speaker_other`` of ``FEATURES`` for the bullet ``bullet`` with
    stems ``own`` and leading label ``label``; ``query`` the query's stems, ``said`` the names it carries."""
    return query_scope_features(scope_query(query, said, stats), bullet, own, label)


def query_scope_features(q: ScopeQuery, bullet: str, own: Mapping[str, int], label: str) -> tuple[float, ...]:
    """``scope_features`` with the query's part made already (``scope_query``). Each BM25 is the formula of
    ``_bm25`` over the query's stems only: a field with none of them scores 0 without its length being
    summed, and the neighbours' merged field is counted for the query's stems alone (its length is the
    fields' lengths weighted the same way: multiples of one half, summed exactly in any order)."""
    speaker = 1.0 if label and label in q.said else 0.0
    other = 1.0 if not speaker and any(n != label for n in q.labelled) else 0.0
    if not q.most:
        return (0.0,) * 6 + (speaker, other)
    stats, query, idf, most = q.stats, q.stems, q.idf, q.most
    before = stats.stems.get(stats.before.get(bullet, ""), _NONE)
    after = stats.stems.get(stats.after.get(bullet, ""), _NONE)
    mean = stats.mean_length
    in_own = [s for s in query if s in own]
    in_before = [s for s in query if s in before] if before else []
    in_after = [s for s in query if s in after] if after else []
    own_bm25 = _bm25(query, idf, own, mean) / most if in_own else 0.0
    before_bm25 = _bm25(query, idf, before, mean) / most if in_before else 0.0
    after_bm25 = _bm25(query, idf, after, mean) / most if in_after else 0.0
    merged_bm25 = 0.0
    if in_own or in_before or in_after:
        length = sum(own.values()) + CONTEXT_FIELD * sum(before.values()) + CONTEXT_FIELD * sum(after.values())
        norm = K1 * (1.0 - B + B * length / ((mean * (1.0 + 2 * CONTEXT_FIELD)) or 1.0))
        score = 0.0
        for s in query:
            tf = own.get(s, 0) + CONTEXT_FIELD * before.get(s, 0) + CONTEXT_FIELD * after.get(s, 0)
            if tf:
                score += idf[s] * tf * (K1 + 1.0) / (tf + norm)
        merged_bm25 = score / most
    return (
        own_bm25,
        before_bm25,
        after_bm25,
        merged_bm25,
        sum(idf[s] for s in query if s in own) / q.idf_total,
        sum(idf[s] for s in query if s in own or s in before or s in after) / q.idf_total,
        speaker,
        other,
    )
