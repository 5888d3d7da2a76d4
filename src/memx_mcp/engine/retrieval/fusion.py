"""The fusion of SPEC §7. Pure functions of the layer scores and the multipliers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ...domain.models import ScoreBreakdown
from .layers import L1_MAX, L2_MAX, L3_MAX
from .when import Span

KEYWORD_SCALE = L1_MAX + L2_MAX + L3_MAX  # 35.0


@dataclass(frozen=True)
class FusionParams:
    keyword_weight: float = 0.6
    semantic_weight: float = 0.4
    # SPEC §7 says 1.2; a new bullet then outranks one a fifth more relevant (docs/spec-changes.md)
    recency_boost: float = 1.05
    recency_days: float = 7.0
    scope_boost: float = 1.3
    # a workspace's project is nearly as much "here" as the workspace: new bullets go to the project scope
    project_scope_boost: float = 1.15
    # the query names a time ("in May 2023", "last week"): bullets created in it, or within the tail after
    # it (what was done is often told a few days later), get this boost instead of the recency one
    named_time_boost: float = 1.3
    named_time_tail_days: float = 7.0
    # How much of the Decay weight's fall the ranking feels (docs/spec-changes.md): the ranking multiplies by
    # ``1 - decay_share * (1 - weight)``. SPEC §7 multiplies by the weight itself (share 1.0), and then a
    # relevant bullet unused for 90 days (weight 1/8) loses to any loosely related new one; with a small
    # share, age only reorders candidates whose relevance is within that share of each other.
    decay_share: float = 0.05
    # Issue 33: with a model trained to match across languages (catalog ``ModelSpec.cross_language``), a
    # candidate written in another script family than the query (Latin vs Chinese/Japanese) is judged by its
    # similarity alone: the keyword layers cannot see across them, and blending their zero in sank the right
    # bullet under same-language look-alikes that share a word with the question (and under the relevance floor).
    cross_language: bool = False


SPEC_FUSION = FusionParams(recency_boost=1.2, decay_share=1.0)  # the fusion exactly as SPEC §7 writes it


def decay_effect(weight: float, params: FusionParams) -> float:
    """The multiplier a Decay weight puts on the ranking: ``weight`` itself under SPEC (share 1.0), at
    least ``1 - decay_share`` as shipped. Gc, archive candidates and the page use the weight unchanged."""
    return 1.0 - params.decay_share * (1.0 - weight)


def in_named_time(created_at: datetime, named: Sequence[Span], params: FusionParams) -> bool:
    tail = timedelta(days=params.named_time_tail_days)
    return any(s.start <= created_at < s.end + tail for s in named)


def recency_multiplier(created_at: datetime, now: datetime, params: FusionParams, named: Sequence[Span] = ()) -> float:
    """RecencyBoost for the last ``recency_days``; when the query names times (``named``), the boost for
    being created in one of them instead."""
    if named:
        return params.named_time_boost if in_named_time(created_at, named, params) else 1.0
    age = (now - created_at).total_seconds() / 86_400.0
    return params.recency_boost if age <= params.recency_days else 1.0


def blend(
    l1: float, l2: float, l3: float, semantic: float | None, params: FusionParams, across_languages: bool = False
) -> tuple[float, float, float]:
    """``fuse``'s ``NormKeyword``, its semantic score (clamped to [0, 1]) and ``Blended``."""
    keyword = (l1 + l2 + l3) / KEYWORD_SCALE
    if semantic is None:
        return keyword, 0.0, keyword
    semantic_value = min(1.0, max(0.0, semantic))
    if across_languages and params.cross_language:
        return keyword, semantic_value, semantic_value
    return keyword, semantic_value, keyword * params.keyword_weight + semantic_value * params.semantic_weight


def final_score(blended: float, decay: float, recency: float, scope: float, params: FusionParams) -> float:
    """``Final`` of ``fuse`` and ``fuse_learned`` (``blended``: the learned relevance there)."""
    return blended * decay_effect(decay, params) * recency * scope


def fuse(
    l1: float,
    l2: float,
    l3: float,
    semantic: float | None,
    decay: float,
    recency: float,
    scope: float,
    params: FusionParams,
    across_languages: bool = False,
) -> ScoreBreakdown:
    """``NormKeyword = (L1+L2+L3)/35``; ``Blended = NormKeyword*0.6 + Semantic*0.4``;
    ``Final = Blended * DecayEffect * Recency * Scope``, where ``DecayEffect`` is the Decay weight's share
    in the ranking (``decay_effect``; the weight itself with ``SPEC_FUSION``). Without a semantic score
    (keyword-only mode) the weights become 1.0 / 0.0; for a candidate ``across_languages`` from the query
    (``params.cross_language`` on) they become 0.0 / 1.0."""
    keyword, semantic_value, blended = blend(l1, l2, l3, semantic, params, across_languages)
    effect = decay_effect(decay, params)
    final = blended * effect * recency * scope
    return ScoreBreakdown(
        l1=l1,
        l2=l2,
        l3=l3,
        semantic=semantic_value,
        keyword=keyword,
        blended=blended,
        decay=decay,
        decay_effect=effect,
        recency=recency,
        scope=scope,
        final=final,
    )


def fuse_learned(
    l1: float,
    l2: float,
    l3: float,
    semantic: float | None,
    relevance: float,
    decay: float,
    recency: float,
    scope: float,
    params: FusionParams,
) -> ScoreBreakdown:
    """The learned ranking's fusion: ``relevance`` (``ranking.relevance``) in place of ``Blended``, then the
    same multipliers as ``fuse``. The layer scores are kept for the breakdown."""
    effect = decay_effect(decay, params)
    return ScoreBreakdown(
        l1=l1,
        l2=l2,
        l3=l3,
        semantic=0.0 if semantic is None else min(1.0, max(0.0, semantic)),
        keyword=(l1 + l2 + l3) / KEYWORD_SCALE,
        blended=relevance,
        decay=decay,
        decay_effect=effect,
        recency=recency,
        scope=scope,
        final=relevance * effect * recency * scope,
    )
