from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.engine.retrieval.fusion import FusionParams, fuse, recency_multiplier

from ...conftest import T0

P = FusionParams()


def test_the_spec_worked_example() -> None:
    s = fuse(l1=8, l2=5, l3=3, semantic=0.72, decay=0.89, recency=1.0, scope=1.3, params=P)
    assert s.keyword == pytest.approx(0.457, abs=5e-4)
    assert s.blended == pytest.approx(0.562, abs=5e-4)
    # The spec rounds each step to three places (0.562 * 0.89 * 1.3 = 0.650); unrounded it is 0.6506.
    assert s.final == pytest.approx(0.650, abs=1e-3)


def test_keyword_only_mode_weights_keywords_fully() -> None:
    s = fuse(l1=15, l2=10, l3=10, semantic=None, decay=1.0, recency=1.0, scope=1.0, params=P)
    assert s.blended == pytest.approx(1.0)
    assert s.semantic == 0.0


def test_negative_cosine_counts_as_zero() -> None:
    s = fuse(l1=0, l2=0, l3=0, semantic=-0.3, decay=1.0, recency=1.0, scope=1.0, params=P)
    assert s.final == 0.0


def test_recency_boost_applies_for_seven_days_only() -> None:
    assert recency_multiplier(T0, T0 + timedelta(days=7), P) == 1.2
    assert recency_multiplier(T0, T0 + timedelta(days=7, seconds=1), P) == 1.0
