from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memx_mcp.domain.models import Bullet, KnowledgeType, Section
from memx_mcp.engine.retrieval import generator
from memx_mcp.engine.retrieval.generator import TermsCache, _profile

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def bullet(i: int, content: str = "", tags: tuple[str, ...] = ()) -> Bullet:
    text = content or f"Run pytest -n {i} to use {i} workers"
    return Bullet(
        f"b_{i}", text, Section.GENERAL, KnowledgeType.KNOWLEDGE, 50, 1, "manual", "global", NOW, NOW, tags=tags
    )


def test_the_term_cache_stays_bounded_and_follows_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generator, "TERMS_CACHE_LIMIT", 10)
    cache: TermsCache = {}
    for i in range(25):
        _profile(bullet(i), cache)
    assert len(cache) <= 10 and "b_24" in cache  # the older half goes when it is full
    first = _profile(bullet(24), cache)
    assert _profile(bullet(24), cache) is first  # unchanged: the cached profile
    assert "workers" not in _profile(bullet(24, "Pin redis to 7.2"), cache).terms  # edited text: a new one
    assert "xdist" in _profile(bullet(24, "Pin redis to 7.2", tags=("xdist",)), cache).metadata  # new tags too
