"""The Generator: gather candidates from the indexes, rescore them with the four layers, fuse, pack."""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any, Protocol

from ...domain.models import Bullet, Hit, RecallResult, RetrievalMode
from ...domain.scopes import Scope
from ...text.language import script
from ...text.stems import names, query_stems, stem_counts
from ...text.tokenize import is_cjk, query_terms, tokens
from ..decay import DecayParams, decay_weight
from .budget import estimate_tokens, pack
from .fusion import (
    FusionParams,
    blend,
    decay_effect,
    final_score,
    fuse,
    fuse_learned,
    in_named_time,
    recency_multiplier,
)
from .layers import (
    L1_MAX,
    L2_MAX,
    L3_MAX,
    exact_score,
    fuzzy_score,
    fuzzy_terms,
    local_idf,
    metadata_score,
    metadata_terms,
)
from .ranking import (
    Bm25Stats,
    RankingWeights,
    ScopeQuery,
    ScopeStats,
    bm25_share,
    bm25_stats,
    lead_label,
    query_scope_features,
    relevance,
    scope_query,
    scope_stats,
)
from .when import Span, named_spans

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

    def prepare_vector_search(self, scopes: Sequence[str]) -> None:
        """Gather now, while the query is embedded, the rows the next ``vector_candidates`` of this thread
        will scan (a head start only: the search gathers them itself otherwise)."""
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
    # A bullet's context: the bullets written just before and after it in its scope, at most this many
    # seconds apart (a turn and the question it answers, two lessons of one session). Query terms found only
    # in the context count at ``context_keyword`` of their weight in L1; ``context_semantic`` of the way
    # from the bullet's own similarity up to its context's better one is added to its semantic score. The
    # context is searched, never shown.
    context_window: float = 3600.0
    context_keyword: float = 0.7
    context_semantic: float = 0.5
    context_rescore: int = 30  # the best candidates scored again with their context
    context_expand: int = 10  # the best candidates whose neighbours become candidates too
    # The learned ranking (``ranking.py``) in place of SPEC's blend; None: SPEC §7's formula.
    ranking: RankingWeights | None = None
    # Called with each scored candidate, its features under the learned ranking and the product of the
    # multipliers (Decay's effect, recency, scope) its relevance is multiplied by (the last call for a bullet
    # is its final scoring): how benchmarks/fit_ranking.py reads them. Never set in memx itself.
    trace: Callable[[Bullet, Sequence[float], float], None] | None = field(default=None, compare=False)


QueryVector = Sequence[float] | Callable[[], Sequence[float] | None] | None


def _keyword(
    source: CandidateSource, terms: Sequence[str], scopes: Sequence[str], limit: int
) -> tuple[list[tuple[Bullet, float]], list[str]]:
    """Full-text matches with their BM25 scores, asked first, so that a query vector still being computed
    elsewhere is made at the same time; a failing index is skipped with a note."""
    try:
        return source.keyword_search(terms, scopes, limit), []
    except Exception as exc:
        log.warning("full-text layer failed: %s", exc)
        return [], [f"full-text layer skipped: {type(exc).__name__}"]


def _prepare(source: CandidateSource, scopes: Sequence[str]) -> None:
    """The store gathers the rows its vector search will scan now, while the vector is being made."""
    try:
        source.prepare_vector_search(scopes)
    except Exception as exc:  # only a head start: the search does it again
        log.warning("preparing the vector search failed: %s", exc)


def _vector_gather(
    source: CandidateSource,
    keyword: Sequence[tuple[Bullet, float]],
    pending_vector: QueryVector,
    scopes: Sequence[str],
    limit: int,
    notes: list[str],
) -> tuple[dict[str, Bullet], Sequence[float] | None, bool]:
    """The candidates of both indexes, the vector's first (``pending_vector`` a callable: waited for now);
    whether the vector index answered."""
    found: dict[str, Bullet] = {}
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
    return found, query_vector, vector_ok


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
    stems: Mapping[str, int] = field(default_factory=dict)  # Snowball stems, stop words out (learned ranking)
    question: bool = False
    label: str = ""  # the leading label ("Caroline: ..." -> caroline; ``ranking.lead_label``)
    tokens: int = 0  # ``budget.estimate_tokens`` of the text


def bullet_terms(bullet: Bullet) -> frozenset[str]:
    return profile_of(bullet).terms


_NO_COUNTS: Mapping[str, int] = {}


def profile_of(bullet: Bullet) -> TermProfile:
    found = [sys.intern(t) for t in tokens(bullet.content)]  # one copy of each word across the cached profiles
    counts = Counter(t for t in found if is_cjk(t)) if is_cjk(bullet.content) else _NO_COUNTS
    terms = frozenset(found) | metadata_terms(bullet.tools)
    metadata = metadata_terms((*bullet.tools, *bullet.entities, *bullet.tags))
    return TermProfile(
        terms,
        counts,
        len(found),
        fuzzy_terms(terms),
        metadata,
        stem_counts(bullet.content),
        bullet.content.rstrip().endswith("?"),
        lead_label(bullet.content),
        estimate_tokens(bullet.content),
    )


@dataclass(frozen=True)
class Context:
    """What a bullet's neighbours in time add: their terms, and their best similarity to the query."""

    terms: frozenset[str] = frozenset()
    semantic: float | None = None
    stems: Mapping[str, int] | None = None


NO_CONTEXT = Context()


@dataclass(frozen=True)
class QueryFeatures:
    """What the learned ranking knows of the query beyond its terms: its stems and their BM25 statistics
    over the candidates, the names it carries, the full-text index's score of each candidate (as a
    share of the query's best), and BM25 with the statistics of the whole scope (``ScopeStats``) with the
    best of the candidates' first scoring, which the ``_top`` features divide by."""

    stems: tuple[str, ...]
    stats: Bm25Stats
    names: frozenset[str]
    fulltext: Mapping[str, float]
    scope: ScopeQuery
    scoped: dict[str, tuple[float, ...]] = field(default_factory=dict)  # bullet id -> its scope_features
    best: list[float] = field(default_factory=lambda: [0.0, 0.0])  # the best scope_bm25 and scope_bm25f

    def of(self, bullet: Bullet, profile: TermProfile) -> tuple[float, ...]:
        """``ranking.scope_features`` of ``bullet``, whose term profile is ``profile``."""
        return scoped_features(self.scope, self.scoped, bullet, profile)

    def rank_best(self, bullets: Sequence[Bullet], profiles: Mapping[str, TermProfile]) -> None:
        """The best scope_bm25 and scope_bm25f over ``bullets`` (the first scoring's candidates)."""
        for b in bullets:
            f = self.of(b, profiles[b.id])
            self.best[0], self.best[1] = max(self.best[0], f[0]), max(self.best[1], f[3])


def scoped_features(
    query: ScopeQuery, kept: dict[str, tuple[float, ...]], bullet: Bullet, profile: TermProfile
) -> tuple[float, ...]:
    """``ranking.scope_features`` of ``bullet`` (term profile ``profile``), kept in ``kept`` by id for the
    rest of the recall."""
    found = kept.get(bullet.id)
    if found is None:
        own = profile.stems  # (read from the bullet now: the statistics may predate an edit)
        found = kept[bullet.id] = query_scope_features(query, bullet.id, own, profile.label)
    return found


def learned_features(
    bullet: Bullet,
    p: TermProfile,
    own: tuple[float, float, float],
    context: tuple[float, float, float],
    context_stems: Mapping[str, int] | None,
    semantic: float | None,
    query: QueryFeatures,
    named: Sequence[Span],
    in_named: bool,
    *,
    bm25: float | None = None,
    names_share: float | None = None,
) -> tuple[float, ...]:
    """The features of ``ranking.FEATURES`` for one candidate: ``own`` its L1, L2, L3; ``context`` what its
    neighbours add to L1, the share of query terms only they have, and how far their similarity is above
    the bullet's own. ``bm25`` and ``names_share``: its own ``bm25`` and ``names`` features when the caller
    has them already (``_own_scores``)."""
    scoped = query.of(bullet, p)
    if bm25 is None:
        bm25 = bm25_share(query.stems, p.stems, query.stats)
    if names_share is None:
        names_share = _names_share(query, p)
    return (
        own[0] / L1_MAX,
        own[1] / L2_MAX,
        own[2] / L3_MAX,
        semantic or 0.0,
        *context,
        bm25,
        # (without a context's stems, the same BM25 as the bullet's own)
        bm25_share(query.stems, p.stems, query.stats, context_stems) if context_stems else bm25,
        query.fulltext.get(bullet.id, 0.0),
        names_share,
        1.0 if named and in_named else 0.0,
        1.0 if named and not in_named else 0.0,
        1.0 if p.question else 0.0,
        1.0 if semantic is None else 0.0,
        *scoped,
        scoped[0] / query.best[0] if query.best[0] > 0 else 0.0,
        scoped[3] / query.best[1] if query.best[1] > 0 else 0.0,
    )


def _names_share(query: QueryFeatures, p: TermProfile) -> float:
    return _share_of_names(query.names, p)


def _share_of_names(said: frozenset[str], p: TermProfile) -> float:
    return sum(1 for n in said if n in p.terms) / len(said) if said else 0.0


@dataclass(frozen=True)
class _Alone:
    """What a candidate scores on its own: neither the other candidates nor the query's vector change it
    (so it is made for the keyword candidates while the vector is still being made)."""

    l2: float
    l3: float
    in_named: bool
    decay: float
    recency: float
    scope: float
    tokens: int
    names: float | None  # the learned ranking's ``names`` feature (None under SPEC's blend)


def _alone(
    bullet: Bullet,
    p: TermProfile,
    terms: Sequence[str],
    request: RecallRequest,
    params: RetrievalParams,
    named: Sequence[Span],
    said: frozenset[str] | None,
) -> _Alone:
    in_named = bool(named) and in_named_time(bullet.created_at, named, params.fusion)
    return _Alone(
        fuzzy_score(terms, p.terms, p.fuzzy),
        metadata_score(terms, p.metadata),
        in_named,
        # asked about the time it was written, a bullet is not forgotten: decay is for what nobody asks about
        1.0 if in_named else decay_weight(bullet.created_at, bullet.recall_count, request.now, params.decay),
        recency_multiplier(bullet.created_at, request.now, params.fusion, named),
        request.scope.boost(bullet.scope, params.fusion.scope_boost, params.fusion.project_scope_boost),
        p.tokens or estimate_tokens(bullet.content),
        None if said is None else _share_of_names(said, p),
    )


@dataclass(frozen=True)
class _Own:
    """What a candidate scores without its context: the same in every pass of one recall (the query, its
    terms' weights, the candidates' mean length and the clock do not change between them)."""

    l1: float
    alone: _Alone
    bm25: float | None  # the learned ranking's own ``bm25`` feature


class Scored:
    """A scored candidate: its final and blended scores (what recall sorts and filters by) and what makes
    its ``ScoreBreakdown`` (``fuse`` or ``fuse_learned`` again, on the same arguments: the same numbers),
    made only for the hits returned."""

    __slots__ = ("_args", "_learned", "blended", "bullet", "final", "tokens")

    def __init__(
        self, bullet: Bullet, tokens: int, final: float, blended: float, learned: bool, args: tuple[Any, ...]
    ) -> None:
        self.bullet, self.tokens, self.final, self.blended = bullet, tokens, final, blended
        self._learned, self._args = learned, args

    def hit(self) -> Hit:
        score = fuse_learned(*self._args) if self._learned else fuse(*self._args)
        return Hit(bullet=self.bullet, score=score, tokens=self.tokens)


def score_bullet(
    bullet: Bullet,
    terms: Sequence[str],
    semantic: float | None,
    request: RecallRequest,
    params: RetrievalParams,
    weights: Mapping[str, float] | None = None,
    profile: TermProfile | None = None,
    relative_length: float = 1.0,
    context: Context = NO_CONTEXT,
    named: Sequence[Span] = (),
    query: QueryFeatures | None = None,
) -> Hit:
    """All four layers and the fusion for one candidate; ``semantic`` is its cosine similarity to the
    query (None in keyword-only mode); ``weights`` are the query terms' local IDF; ``relative_length`` the
    bullet's length over the candidates' mean; ``context`` what its neighbours add (at lower weight);
    ``query`` what the learned ranking needs of the query (with ``params.ranking`` set)."""
    p = profile or profile_of(bullet)
    return _score(bullet, terms, semantic, request, params, weights, p, relative_length, context, named, query).hit()


def _score(
    bullet: Bullet,
    terms: Sequence[str],
    semantic: float | None,
    request: RecallRequest,
    params: RetrievalParams,
    weights: Mapping[str, float] | None,
    p: TermProfile,
    relative_length: float,
    context: Context,
    named: Sequence[Span],
    query: QueryFeatures | None,
    kept: dict[str, _Own] | None = None,
    alone: Mapping[str, _Alone] | None = None,
) -> Scored:
    """``score_bullet`` without the breakdown made. ``kept``: what each candidate scores without its
    context, by id, from an earlier pass of the same recall (filled here); ``alone``: what some candidates
    score on their own, made already."""
    own_scores = None if kept is None else kept.get(bullet.id)
    if own_scores is None:
        single = None if alone is None else alone.get(bullet.id)
        if single is None:
            said = None if query is None else query.names
            single = _alone(bullet, p, terms, request, params, named, said)
        own_scores = _Own(
            exact_score(terms, p.terms, weights, p.cjk_counts, relative_length),
            single,
            None if query is None else bm25_share(query.stems, p.stems, query.stats),
        )
        if kept is not None:
            kept[bullet.id] = own_scores
    single = own_scores.alone
    l1 = own_l1 = own_scores.l1
    l2 = own_l2 = single.l2
    l3 = single.l3
    gain = only_share = lift = 0.0
    if context.terms and terms:  # (a query of common words only has no terms)
        own = exact_score(terms, p.terms, weights)
        gain = exact_score(terms, p.terms | context.terms, weights) - own
        l1 = min(L1_MAX, l1 + params.context_keyword * gain)
        only_share = sum(1 for t in terms if t in context.terms and t not in p.terms) / len(terms) if terms else 0.0
        l2 = min(L2_MAX, l2 + params.context_keyword * L2_MAX * only_share)
    own_semantic = semantic
    if semantic is not None and context.semantic is not None and context.semantic > semantic:
        lift = context.semantic - semantic
        semantic += params.context_semantic * lift
    in_named, decay, recency, scope = single.in_named, single.decay, single.recency, single.scope
    fusion = params.fusion
    # keyword-only mode (no model) keeps SPEC's keyword blend: the learned weights were fitted with a model
    if params.ranking is None or query is None or semantic is None:
        # across script families only: Chinese and Japanese share Han characters the keyword layers match (a
        # Chinese paragraph with one kana in it is not "Japanese" to them; judged alone it lost CMRC 0.003)
        across = fusion.cross_language and script(bullet.content) != script(request.query)
        blended = blend(l1, l2, l3, semantic, fusion, across)[2]
        final = final_score(blended, decay, recency, scope, fusion)
        return Scored(
            bullet, single.tokens, final, blended, False, (l1, l2, l3, semantic, decay, recency, scope, fusion, across)
        )
    features = learned_features(
        bullet,
        p,
        (own_l1, own_l2, l3),
        (gain / L1_MAX, only_share, lift),
        context.stems,
        own_semantic,
        query,
        named,
        in_named,
        bm25=own_scores.bm25,
        names_share=single.names,
    )
    blended = relevance(features, params.ranking)
    final = final_score(blended, decay, recency, scope, fusion)
    if params.trace is not None:
        params.trace(bullet, features, decay_effect(decay, fusion) * recency * scope)
    return Scored(
        bullet, single.tokens, final, blended, True, (l1, l2, l3, semantic, blended, decay, recency, scope, fusion)
    )


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


def term_profiles(bullets: Sequence[Bullet], cache: TermsCache | None) -> dict[str, TermProfile]:
    """The term profiles of ``bullets`` by id, each kept in ``cache`` (made where it has none for the
    bullet's present text): the learned ranking's scope statistics read every visible bullet's stems, and
    the candidates of the recalls that follow find their profiles made."""
    return {b.id: _profile(b, cache) for b in bullets}


def _adjacent(
    source: CandidateSource, ids: Sequence[str], params: RetrievalParams, notes: list[str]
) -> dict[str, Sequence[Bullet]]:
    """Each candidate's neighbours in time, from a store that knows them (none from one that does not)."""
    find = getattr(source, "adjacent", None)
    if find is None or not ids or params.context_window <= 0:
        return {}
    try:
        return dict(find(ids, params.context_window))
    except Exception as exc:  # context only refines the ranking: without it, recall goes on
        log.warning("context of the candidates failed: %s", exc)
        notes.append(f"context skipped: {type(exc).__name__}")
        return {}


class _Scoring:
    """Scores candidates with their context; similarities to the query are fetched once per bullet."""

    def __init__(
        self,
        source: CandidateSource,
        request: RecallRequest,
        params: RetrievalParams,
        terms: Sequence[str],
        weights: Mapping[str, float],
        mean: float,
        named: Sequence[Span],
        vector: Sequence[float] | None,
        query: QueryFeatures | None = None,
    ) -> None:
        self.source, self.request, self.params = source, request, params
        self.terms, self.weights, self.mean, self.named, self.vector = terms, weights, mean, named, vector
        self.query = query
        self.sims: dict[str, float] = {}
        self.kept: dict[str, _Own] = {}  # each candidate's scores without its context, for the second pass
        self.alone: dict[str, _Alone] = {}  # what some candidates score on their own, made before the vector

    def _similarities(self, ids: Sequence[str], notes: list[str]) -> None:
        wanted = [i for i in dict.fromkeys(ids) if i not in self.sims]
        if self.vector is None or not wanted:
            return
        try:
            self.sims.update(self.source.similarities(wanted, self.vector))
        except Exception as exc:  # the context's similarity is a refinement: without it, its words still count
            log.warning("vector similarities failed: %s", exc)
            notes.append(f"context similarities skipped: {type(exc).__name__}")

    def score(
        self,
        bullets: Sequence[Bullet],
        near: Mapping[str, Sequence[Bullet]],
        profiles: Mapping[str, TermProfile],
        cache: TermsCache | None,
        notes: list[str],
    ) -> list[Scored]:
        neighbours = {b.id: b for bs in near.values() for b in bs}
        self._similarities([*(b.id for b in bullets), *neighbours], notes)
        near_profiles = {i: profiles[i] if i in profiles else _profile(b, cache) for i, b in neighbours.items()}
        words = {i: p.terms for i, p in near_profiles.items()}
        learned = self.query is not None
        hybrid = self.vector is not None
        hits = []
        for b in bullets:
            ids = [n.id for n in near.get(b.id, ())]
            close = [self.sims[i] for i in ids if i in self.sims]
            context = (
                Context(
                    frozenset().union(*(words[i] for i in ids)),
                    max(close) if hybrid and close else None,
                    sum((Counter(near_profiles[i].stems) for i in ids), Counter()) if learned else None,
                )
                if ids
                else NO_CONTEXT
            )
            p = profiles[b.id]
            hits.append(
                _score(
                    b,
                    self.terms,
                    # a bullet stored while the model was away has no vector yet: similarity 0
                    self.sims.get(b.id, 0.0) if hybrid else None,
                    self.request,
                    self.params,
                    self.weights,
                    p,
                    p.length / self.mean if self.mean else 1.0,
                    context,
                    self.named,
                    self.query,
                    self.kept,
                    self.alone,
                )
            )
        return hits


def recall(
    source: CandidateSource,
    request: RecallRequest,
    query_vector: QueryVector,
    params: RetrievalParams,
    notes: Sequence[str] = (),
    terms_cache: TermsCache | None = None,
    stats: ScopeStats | Callable[[], ScopeStats] | None = None,
) -> RecallResult:
    """Rank the visible bullets for ``request.query`` and pack the best into the budget. ``query_vector``
    may be a callable that waits for it (``notes`` is read after it returns). ``stats``: the visible
    scopes' BM25 statistics for the learned ranking (a value, or a callable asked only under it); None:
    made from the candidates alone."""
    terms = query_terms(request.query)
    if not terms:  # only common words ("the", "how should I do it"): no subject, so no match of any kind
        note = "the query has only common words: nothing to match"
        mode: RetrievalMode = "keyword-only" if query_vector is None else "hybrid"
        return RecallResult(request.query, str(request.scope), mode, (), 0, 0, 0, (*notes, note))
    scopes = request.scope.visible()
    keyword, gather_notes = _keyword(source, terms, scopes, params.candidate_limit)
    if callable(query_vector):
        _prepare(source, scopes)
    # While the query's vector may still be being made on another thread: what needs only the query and the
    # keyword candidates (their term profiles; the learned ranking's scope statistics and scope features).
    named = named_spans(request.query, request.now)
    early = {b.id: _profile(b, terms_cache) for b, _ in keyword}
    scoped: dict[str, tuple[float, ...]] = {}
    ranked: ScopeQuery | None = None
    said: frozenset[str] | None = None
    if params.ranking is not None:
        stems = query_stems(request.query)
        said = names(request.query)
        if callable(stats):
            stats = stats()
        if stats is not None:
            ranked = scope_query(stems, said, stats)
            for b, _ in keyword:
                scoped_features(ranked, scoped, b, early[b.id])
    alone = {b.id: _alone(b, early[b.id], terms, request, params, named, said) for b, _ in keyword}
    limit = params.candidate_limit
    found, vector, vector_ok = _vector_gather(source, keyword, query_vector, scopes, limit, gather_notes)
    best = max((score for _, score in keyword), default=0.0)
    fulltext = {b.id: score / best for b, score in keyword} if best > 0 else {}
    hybrid = vector_ok and vector is not None
    sims: Mapping[str, float] = {}
    if hybrid and vector is not None and found:
        try:
            sims = source.similarities(list(found), vector)
        except Exception as exc:  # like any failing layer: skipped and reported
            log.warning("vector similarities failed: %s", exc)
            gather_notes.append(f"vector layer skipped: {type(exc).__name__}")
            hybrid = False
    profiles = {i: early[i] if i in early else _profile(b, terms_cache) for i, b in found.items()}
    weights = local_idf(terms, [p.terms for p in profiles.values()])
    mean = sum(p.length for p in profiles.values()) / len(profiles) if profiles else 0.0
    query = None
    if params.ranking is not None:
        assert said is not None
        if ranked is None:  # no statistics given: the candidates' own
            ranked = scope_query(stems, said, scope_stats(list(found.values()), params.context_window))
        query = QueryFeatures(
            stems, bm25_stats(stems, [p.stems for p in profiles.values()]), said, fulltext, ranked, scoped
        )
        query.rank_best(list(found.values()), profiles)
    scoring = _Scoring(source, request, params, terms, weights, mean, named, vector if hybrid else None, query)
    scoring.sims.update(sims)
    scoring.alone.update(alone)
    hits = scoring.score(list(found.values()), {}, profiles, terms_cache, gather_notes)
    # Rescoring with the context, of the best candidates only (reading every candidate's neighbours costs
    # more than the rest of a recall), and candidate recall before it: the neighbours of the very best, which
    # may share no word with the query (a reply next to the turn that asked), become candidates too.
    hits.sort(key=lambda h: -h.final)
    head = [h.bullet for h in hits[: params.context_rescore]]
    near = _adjacent(source, [b.id for b in head], params, gather_notes)
    added = {n.id: n for b in head[: params.context_expand] for n in near.get(b.id, ()) if n.id not in found}
    if added:
        found.update(added)
        near.update(_adjacent(source, list(added), params, gather_notes))
        profiles.update({i: _profile(b, terms_cache) for i, b in added.items()})
    again = [*(b for b in head if near.get(b.id)), *added.values()]  # (without a context: scored already)
    if again:
        rescored = {h.bullet.id: h for h in scoring.score(again, near, profiles, terms_cache, gather_notes)}
        hits = [rescored.pop(h.bullet.id, h) for h in hits] + list(rescored.values())
    hits = [h for h in hits if h.final > 0.0 and h.blended >= params.min_relevance]
    hits.sort(key=lambda h: (-h.final, h.bullet.id))
    packed, omitted = pack(hits, [h.tokens for h in hits], request.max_results, request.token_budget)
    return RecallResult(
        query=request.query,
        scope=str(request.scope),
        mode="hybrid" if hybrid else "keyword-only",
        hits=tuple(h.hit() for h in packed),
        candidates=len(found),
        omitted_by_budget=omitted,
        tokens_used=sum(h.tokens for h in packed),
        notes=(*notes, *gather_notes),
    )
