"""The fusion of SPEC §7. Pure functions of the layer scores and the multipliers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ...domain.models import ScoreBreakdown
from .layers import L1_MAX, L2_MAX, L3_MAX

KEYWORD_SCALE = L1_MAX + L2_MAX + L3_MAX  # 35.0


@dataclass(frozen=True)
class FusionParams:
    keyword_weight: float = 0.6
    semantic_weight: float = 0.4
    recency_boost: float = 1.2
    recency_days: float = 7.0
    scope_boost: float = 1.3
    # a workspace's project is nearly as much "here" as the workspace: new bullets go to the project scope
    project_scope_boost: float = 1.15


def recency_multiplier(created_at: datetime, now: datetime, params: FusionParams) -> float:
    age = (now - created_at).total_seconds() / 86_400.0
    return params.recency_boost if age <= params.recency_days else 1.0


def fuse(
    l1: float,
    l2: float,
    l3: float,
    semantic: float | None,
    decay: float,
    recency: float,
    scope: float,
    params: FusionParams,
) -> ScoreBreakdown:
    """``NormKeyword = (L1+L2+L3)/35``; ``Blended = NormKeyword*0.6 + Semantic*0.4``;
    ``Final = Blended * Decay * Recency * Scope``. Without a semantic score (keyword-only mode) the
    weights become 1.0 / 0.0."""
    keyword = (l1 + l2 + l3) / KEYWORD_SCALE
    if semantic is None:
        blended = keyword
        semantic_value = 0.0
    else:
        semantic_value = min(1.0, max(0.0, semantic))
        blended = keyword * params.keyword_weight + semantic_value * params.semantic_weight
    final = blended * decay * recency * scope
    return ScoreBreakdown(
        l1=l1,
        l2=l2,
        l3=l3,
        semantic=semantic_value,
        keyword=keyword,
        blended=blended,
        decay=decay,
        recency=recency,
        scope=scope,
        final=final,
    )
