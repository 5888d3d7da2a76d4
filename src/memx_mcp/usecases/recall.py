"""Recall: the Generator's hybrid retrieval in the visible scopes, with the question embedded while the
full-text query runs, and what is returned reinforced for Decay (now, or by a recorder off the answer's
path)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from ..domain.catalog import spec
from ..domain.inputs import MAX_QUERY_CHARS, MAX_RESULTS_CAP, TOKEN_BUDGET_CAP, clamp, clean_text
from ..domain.models import RecallResult
from ..engine.retrieval import RecallRequest
from ..engine.retrieval import recall as generate
from ..engine.retrieval.generator import TERMS_CACHE_LIMIT, term_profiles
from ..engine.retrieval.ranking import ScopeStats, scope_stats
from ..text.language import mostly_cjk
from .deps import Deps
from .recalls import RecallRecorder

log = logging.getLogger(__name__)


def recall(
    deps: Deps,
    query: str,
    *,
    scope: str | None = None,
    max_results: int | None = None,
    token_budget: int | None = None,
    reinforce: bool = True,
    recorder: RecallRecorder | None = None,
) -> RecallResult:
    """Hybrid retrieval in the visible scopes; what is returned is reinforced (one batched write, or
    handed to ``recorder``)."""
    text = clean_text(query, "query", MAX_QUERY_CHARS)
    with deps.store.one_read():  # the store's change counter read once for the whole recall
        return _recall(deps, text, scope, max_results, token_budget, reinforce, recorder)


def _recall(
    deps: Deps,
    text: str,
    scope: str | None,
    max_results: int | None,
    token_budget: int | None,
    reinforce: bool,
    recorder: RecallRecorder | None,
) -> RecallResult:
    settings = deps.settings
    notes: list[str] = []
    vector: Callable[[], Sequence[float] | None] | None = None
    cjk_note = ""
    if settings.semantic_cjk or not mostly_cjk(text) or spec(settings.model_name).multilingual:
        # made on its own thread, first: the scope, the full-text query and what needs no vector go meanwhile
        pending = deps.embedding_pool().submit(deps.embed_texts, [text], "query")

        def vector() -> Sequence[float] | None:
            vectors, note = pending.result()
            if note:
                notes.append(note)
            return vectors[0] if vectors else None

    else:  # the shipped English model gives Chinese and Japanese near-random vectors: keywords carry them
        cjk_note = "CJK query: keyword layers only (the embedding model is English)"
    limit = clamp("max_results", max_results, settings.max_results, MAX_RESULTS_CAP, notes)
    budget = clamp("token_budget", token_budget, settings.token_budget, TOKEN_BUDGET_CAP, notes)
    if cjk_note:
        notes.append(cjk_note)
    try:
        resolved = deps.workspace.resolve(scope)
    except Exception:
        if vector is not None:
            pending.cancel()  # (not wanted after all: unless the model already took it)
        raise
    request = RecallRequest(text, resolved, limit, budget, deps.clock())
    scopes = request.scope.visible()
    result = generate(
        deps.store, request, vector, deps.retrieval, notes, deps.terms, lambda: visible_stats(deps, scopes)
    )
    if deps.teams is not None and (team_notes := deps.teams.read_notes()):
        result = dataclasses.replace(result, notes=(*result.notes, *team_notes))
    if reinforce and result.hits:
        ids = [h.bullet.id for h in result.hits]
        if recorder is not None:
            recorder.record(ids, request.now)
        else:
            try:
                reinforce_now(deps, dict.fromkeys(ids, 1), request.now)
            except Exception as exc:  # reinforcement is bookkeeping: the answer still goes out
                log.warning("could not record recalls: %s", exc)
    return dataclasses.replace(result, scope_why=deps.workspace.reason(scope))


STATS = "scope-stats"  # deps.caches key: visible scopes -> (the store's generation, their ScopeStats)


def visible_stats(deps: Deps, scopes: Sequence[str]) -> ScopeStats:
    """The learned ranking's BM25 statistics over the active bullets of ``scopes``, kept until the store's
    generation moves (``ports.Generational``)."""
    seen = deps.store.generation()
    kept: dict[tuple[str, ...], tuple[str, ScopeStats]] = deps.caches.setdefault(STATS, {})
    key = tuple(scopes)
    hit = kept.get(key)
    if seen and hit is not None and hit[0] == seen:
        return hit[1]
    bullets = deps.store.active_in(scopes)
    made = None
    if deps.terms is not None and len(bullets) <= TERMS_CACHE_LIMIT // 2:  # (more would push each other out)
        # every visible bullet's term profile made (or found) now: its stems count here, and the candidates
        # of the recalls until the next write find their profiles ready
        made = {i: p.stems for i, p in term_profiles(bullets, deps.terms).items()}
    stats = scope_stats(bullets, deps.retrieval.context_window, made)
    if seen:
        if len(kept) >= 16:  # a few scopes at a time are asked; the oldest goes
            kept.pop(next(iter(kept)))
        kept[key] = (seen, stats)
    return stats


def reinforce_now(deps: Deps, counts: Mapping[str, int], now: datetime) -> None:
    deps.store.mark_recalled(counts, now)
