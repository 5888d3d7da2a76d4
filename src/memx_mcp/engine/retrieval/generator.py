"""The Generator: gather candidates from the indexes, rescore them with the four layers, fuse, pack."""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Protocol

from ...domain.models import Bullet, Hit, RecallResult
from ...domain.scopes import Scope
from ...text.tokenize import is_cjk, query_terms, tokens
from ..decay import DecayParams, decay_weight
from .budget import estimate_tokens, pack
from .fusion import FusionParams, fuse, recency_multiplier
from .layers import exact_score, fuzzy_score, fuzzy_terms, local_idf, metadata_score, metadata_terms

log = logging.getLogger(__name__)


class CandidateSource(Protocol):
    """What the Generator needs from a store: candidates from its indexes, filtered by scope first."""

    def vector_candidates(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[Bullet]: ...

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[Bullet, float]]:
        """Full-text matches with their BM25 scores."""
        ...

    def similarities(self, ids: Sequence[str], vector: Sequence[float]) -> Mapping[str, float]:
        """Cosine similarity of ``vector`` to each of ``ids`` that has a vector (the others: absent)."""
        ...


@dataclass(frozen=True)
class RecallRequest:
    query: str
    scope: Scope
    max_results: int
    token_budget: int
    now: datetime


@dataclass(frozen=True)
class RetrievalParams:
    fusion: FusionParams
    decay: DecayParams
    candidate_limit: int = 50
    min_relevance: float = 0.1  # on the blended score, before decay/recency/scope multipliers


QueryVector = Sequence[float] | Callable[[], Sequence[float] | None] | None


def _gather(
    source: CandidateSource,
    terms: Sequence[str],
    pending_vector: QueryVector,
    scopes: Sequence[str],
    limit: int,
) -> tuple[dict[str, Bullet], Sequence[float] | None, bool, list[str]]:
    """Candidates from both indexes. The full-text query runs first, so that a query vector still being
    computed elsewhere (``pending_vector`` a callable) is made at the same time."""
    found: dict[str, Bullet] = {}
    notes: list[str] = []
    try:
        keyword = source.keyword_search(terms, scopes, limit)
    except Exception as exc:
        log.warning("full-text layer failed: %s", exc)
        notes.append(f"full-text layer skipped: {type(exc).__name__}")
        keyword = []
    query_vector = pending_vector() if callable(pending_vector) else pending_vector
    vector_ok = False
    if query_vector is not None:
        try:
            for b in source.vector_candidates(query_vector, scopes, limit):
                found[b.id] = b
            vector_ok = True
        except Exception as exc:  # a failing layer is skipped, never fatal
            log.warning("vector layer failed: %s", exc)
            notes.append(f"vector layer skipped: {type(exc).__name__}")
    for b, _ in keyword:
        found.setdefault(b.id, b)
    return found, query_vector, vector_ok, notes


@dataclass(frozen=True)
class TermProfile:
    """What the keyword layers need of one bullet: its terms (text and tools), how often each Chinese or
    Japanese term occurs, its length in terms, the terms fuzzy matching compares, and its metadata terms
    (tools, entities, tags)."""

    terms: frozenset[str]
    cjk_counts: Mapping[str, int]
    length: int
    fuzzy: tuple[str, ...]
    metadata: frozenset[str]


def bullet_terms(bullet: Bullet) -> frozenset[str]:
    return profile_of(bullet).terms


_NO_COUNTS: Mapping[str, int] = {}


def profile_of(bullet: Bullet) -> TermProfile:
    found = [sys.intern(t) for t in tokens(bullet.content)]  # one copy of each word across the cached profiles
    counts = Counter(t for t in found if is_cjk(t)) if is_cjk(bullet.content) else _NO_COUNTS
    terms = frozenset(found) | metadata_terms(bullet.tools)
    metadata = metadata_terms((*bullet.tools, *bullet.entities, *bullet.tags))
    return TermProfile(terms, counts, len(found), fuzzy_terms(terms), metadata)


def score_bullet(
    bullet: Bullet,
    terms: Sequence[str],
    semantic: float | None,
    request: RecallRequest,
    params: RetrievalParams,
    weights: Mapping[str, float] | None = None,
    profile: TermProfile | None = None,
    relative_length: float = 1.0,
) -> Hit:
    """All four layers and the fusion for one candidate; ``semantic`` is its cosine similarity to the
    query (None in keyword-only mode); ``weights`` are the query terms' local IDF; ``relative_length`` the
    bullet's length over the candidates' mean."""
    p = profile or profile_of(bullet)
    score = fuse(
        l1=exact_score(terms, p.terms, weights, p.cjk_counts, relative_length),
        l2=fuzzy_score(terms, p.terms, p.fuzzy),
        l3=metadata_score(terms, p.metadata),
        semantic=semantic,
        decay=decay_weight(bullet.created_at, bullet.recall_count, request.now, params.decay),
        recency=recency_multiplier(bullet.created_at, request.now, params.fusion),
        scope=request.scope.boost(bullet.scope, params.fusion.scope_boost, params.fusion.project_scope_boost),
        params=params.fusion,
    )
    return Hit(bullet=bullet, score=score, tokens=estimate_tokens(bullet.content))


TermsCache = MutableMapping[str, tuple[int, TermProfile]]
TERMS_CACHE_LIMIT = 20_000  # profiles (about 2 KB each) kept between recalls


def _profile(bullet: Bullet, cache: TermsCache | None) -> TermProfile:
    """A bullet's term profile, from ``cache`` while its text and metadata are unchanged (tokenizing is the
    costly part)."""
    if cache is None:
        return profile_of(bullet)
    key = hash((bullet.content, bullet.tools, bullet.entities, bullet.tags))
    hit = cache.get(bullet.id)
    if hit is not None and hit[0] == key:
        return hit[1]
    made = profile_of(bullet)
    if len(cache) >= TERMS_CACHE_LIMIT:  # the older half goes (a dict keeps insertion order)
        for stale in list(islice(cache, len(cache) // 2)):
            cache.pop(stale, None)  # (another recall may have dropped it already)
    cache[bullet.id] = (key, made)
    return made


def recall(
    source: CandidateSource,
    request: RecallRequest,
    query_vector: QueryVector,
    params: RetrievalParams,
    notes: Sequence[str] = (),
    terms_cache: TermsCache | None = None,
) -> RecallResult:
    """Rank the visible bullets for ``request.query`` and pack the best into the budget. ``query_vector``
    may be a callable that waits for it (``notes`` is read after it returns)."""
    terms = query_terms(request.query)
    scopes = request.scope.visible()
    found, vector, vector_ok, gather_notes = _gather(source, terms, query_vector, scopes, params.candidate_limit)
    hybrid = vector_ok and vector is not None
    sims: Mapping[str, float] = {}
    if hybrid and vector is not None and found:
        try:
            sims = source.similarities(list(found), vector)
        except Exception as exc:  # like any failing layer: skipped and reported
            log.warning("vector similarities failed: %s", exc)
            gather_notes.append(f"vector layer skipped: {type(exc).__name__}")
            hybrid = False
    profiles = {b.id: _profile(b, terms_cache) for b in found.values()}
    weights = local_idf(terms, [p.terms for p in profiles.values()])
    mean = sum(p.length for p in profiles.values()) / len(profiles) if profiles else 0.0
    hits = [
        # a bullet stored while the model was away has no vector yet: similarity 0
        score_bullet(
            b,
            terms,
            sims.get(b.id, 0.0) if hybrid else None,
            request,
            params,
            weights,
            profiles[b.id],
            profiles[b.id].length / mean if mean else 1.0,
        )
        for b in found.values()
    ]
    hits = [h for h in hits if h.score.final > 0.0 and h.score.blended >= params.min_relevance]
    hits.sort(key=lambda h: (-h.score.final, h.bullet.id))
    packed, omitted = pack(hits, [h.tokens for h in hits], request.max_results, request.token_budget)
    return RecallResult(
        query=request.query,
        scope=str(request.scope),
        mode="hybrid" if hybrid else "keyword-only",
        hits=tuple(packed),
        candidates=len(found),
        omitted_by_budget=omitted,
        tokens_used=sum(h.tokens for h in packed),
        notes=(*notes, *gather_notes),
    )
