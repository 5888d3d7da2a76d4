"""The learned ranking: a logistic regression over features every candidate already has (issue 33).

``relevance`` is one pure function: the weighted sum of a candidate's features squashed to [0, 1]. It takes
the place of SPEC §7's ``Blended`` (0.6 × keyword + 0.4 × semantic); Decay, recency and scope multiply it as
they multiply ``Blended``. The weights are fitted by ``benchmarks/fit_ranking.py`` on training data only
and shipped as ``ranking_weights.json`` beside this module (read by the use cases, not here: the engine does
no I/O). ``scale`` and ``shift`` put the fitted logit on the scale of SPEC's ``Blended`` (fitted on the
same training candidates), so that ``min_relevance`` and the prompt floor keep about their meaning."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    return model.intercept + sum(w * x for w, x in zip(model.weights, features, strict=True))


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
    total = sum(stats.idf.values()) * (K1 + 1.0)
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
