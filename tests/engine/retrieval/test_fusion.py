from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.engine.decay import DecayParams, decay_weight
from memx_mcp.engine.retrieval.fusion import SPEC_FUSION, FusionParams, decay_effect, fuse, recency_multiplier

from ...conftest import T0

P = FusionParams()


def test_the_spec_worked_example() -> None:
    """SPEC §7's formula as SPEC states it: the Decay weight multiplies the score in full."""
    s = fuse(l1=8, l2=5, l3=3, semantic=0.72, decay=0.89, recency=1.0, scope=1.3, params=SPEC_FUSION)
    assert s.keyword == pytest.approx(0.457, abs=5e-4)
    assert s.blended == pytest.approx(0.562, abs=5e-4)
    # The spec rounds each step to three places (0.562 * 0.89 * 1.3 = 0.650); unrounded it is 0.6506.
    assert s.final == pytest.approx(0.650, abs=1e-3)
    assert s.decay == s.decay_effect == 0.89


def test_the_spec_worked_example_as_shipped_feels_a_twentieth_of_the_decay() -> None:
    s = fuse(l1=8, l2=5, l3=3, semantic=0.72, decay=0.89, recency=1.0, scope=1.3, params=P)
    assert s.decay == 0.89  # the weight is reported unchanged
    assert s.decay_effect == pytest.approx(1 - 0.05 * 0.11)  # 0.9945
    assert s.final == pytest.approx(0.5623 * 0.9945 * 1.3, abs=1e-3)  # 0.727


@pytest.mark.parametrize(("weight", "effect"), [(1.0, 1.0), (0.5, 0.975), (0.125, 0.95625), (0.0, 0.95)])
def test_the_decay_effect_never_goes_below_one_minus_the_share(weight: float, effect: float) -> None:
    assert decay_effect(weight, P) == pytest.approx(effect)
    assert decay_effect(weight, SPEC_FUSION) == pytest.approx(weight)


def test_a_clearly_relevant_faded_bullet_outranks_a_loosely_related_new_one() -> None:
    old = fuse(l1=12, l2=6, l3=0, semantic=0.7, decay=0.0, recency=1.0, scope=1.3, params=P)  # blended 0.59
    new = fuse(l1=4, l2=3, l3=0, semantic=0.4, decay=1.0, recency=1.05, scope=1.3, params=P)  # blended 0.28
    assert old.final > new.final
    # under SPEC's full multiplier the new one wins whenever the old weight is below about 0.57
    spec_old = fuse(l1=12, l2=6, l3=0, semantic=0.7, decay=0.125, recency=1.0, scope=1.3, params=SPEC_FUSION)
    assert (
        spec_old.final
        < fuse(l1=4, l2=3, l3=0, semantic=0.4, decay=1.0, recency=1.2, scope=1.3, params=SPEC_FUSION).final
    )


def test_between_equally_relevant_bullets_the_fresher_ranks_first() -> None:
    fresh = fuse(l1=8, l2=5, l3=0, semantic=0.6, decay=1.0, recency=1.0, scope=1.0, params=P)
    stale = fuse(l1=8, l2=5, l3=0, semantic=0.6, decay=0.25, recency=1.0, scope=1.0, params=P)
    assert fresh.final > stale.final


def test_age_reorders_only_candidates_within_a_tenth_of_each_others_relevance() -> None:
    """Decay (at least 0.95) and recency (at most 1.05) together move a score by less than 11 %."""

    def final(semantic: float, decay: float, recency: float) -> float:
        return fuse(l1=0, l2=0, l3=0, semantic=semantic, decay=decay, recency=recency, scope=1.0, params=P).final

    fresh = final(0.50, 1.0, 1.05)
    assert final(0.55, 0.0, 1.0) < fresh  # 1.1 times as relevant, fully faded, out of the week: fresh first
    assert final(0.56, 0.0, 1.0) > fresh  # 1.12 times as relevant: the old one first


def test_the_recency_boost_as_spec_writes_it_and_as_shipped() -> None:
    assert recency_multiplier(T0, T0 + timedelta(days=1), SPEC_FUSION) == 1.2
    assert recency_multiplier(T0, T0 + timedelta(days=1), P) == 1.05


def test_recalls_keep_the_ranking_weight_of_an_old_bullet() -> None:
    d = DecayParams()
    unused = decay_weight(T0, 0, T0 + timedelta(days=90), d)
    used = decay_weight(T0, 15, T0 + timedelta(days=90), d)
    assert (unused, used) == (pytest.approx(0.125), 1.0)
    assert decay_effect(used, P) == 1.0 > decay_effect(unused, P)


def test_keyword_only_mode_weights_keywords_fully() -> None:
    s = fuse(l1=15, l2=10, l3=10, semantic=None, decay=1.0, recency=1.0, scope=1.0, params=P)
    assert s.blended == pytest.approx(1.0)
    assert s.semantic == 0.0


def test_negative_cosine_counts_as_zero() -> None:
    s = fuse(l1=0, l2=0, l3=0, semantic=-0.3, decay=1.0, recency=1.0, scope=1.0, params=P)
    assert s.final == 0.0


def test_recency_boost_applies_for_seven_days_only() -> None:
    assert recency_multiplier(T0, T0 + timedelta(days=7), P) == 1.05
    assert recency_multiplier(T0, T0 + timedelta(days=7, seconds=1), P) == 1.0


def test_a_candidate_in_another_language_is_judged_by_its_similarity_alone_with_a_cross_language_model() -> None:
    """Issue 33: the keyword layers cannot see across languages; their zero no longer sinks the answer."""
    across = FusionParams(cross_language=True)
    alone = fuse(0.0, 0.0, 0.0, 0.45, 1.0, 1.0, 1.0, across, across_languages=True)
    assert alone.blended == pytest.approx(0.45)
    look_alike = fuse(10.0, 0.0, 0.0, 0.30, 1.0, 1.0, 1.0, across)  # same language, shares a word
    assert alone.final > look_alike.final


def test_without_a_cross_language_model_a_candidate_in_another_language_blends_as_spec_says() -> None:
    score = fuse(0.0, 0.0, 0.0, 0.45, 1.0, 1.0, 1.0, FusionParams(), across_languages=True)
    assert score.blended == pytest.approx(0.45 * 0.4)
