from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.engine.decay import DecayParams, base_weight, decay_weight, is_archive_candidate

from ..conftest import T0

P = DecayParams()


@pytest.mark.parametrize(
    ("age_days", "recalls", "base", "final"),
    [
        (0, 0, 1.0, 1.0),  # just written (protected)
        (30, 0, 0.5, 0.5),  # 30 days unused
        (60, 0, 0.25, 0.25),  # 60 days unused
        (30, 5, 0.5, 0.75),  # 30 days, recalled 5 times
        (90, 15, 0.125, 1.0),  # 90 days, recalled 15 times: permanent
    ],
)
def test_every_row_of_the_spec_decay_table(age_days: int, recalls: int, base: float, final: float) -> None:
    assert base_weight(age_days, P) == pytest.approx(base)
    now = T0 + timedelta(days=age_days)
    assert decay_weight(T0, recalls, now, P) == pytest.approx(final)


def test_a_bullet_younger_than_seven_days_keeps_full_weight() -> None:
    assert decay_weight(T0, 0, T0 + timedelta(days=7), P) == 1.0
    assert decay_weight(T0, 0, T0 + timedelta(days=7, seconds=1), P) < 1.0


def test_fifteen_recalls_make_a_bullet_permanent_even_when_very_old() -> None:
    assert decay_weight(T0, 15, T0 + timedelta(days=3650), P) == 1.0
    assert decay_weight(T0, 14, T0 + timedelta(days=3650), P) < 0.02


def test_boosted_weight_is_clamped_to_one() -> None:
    # 10 days old: base 0.794; with 14 recalls boosted 0.794 * 2.4 > 1
    assert decay_weight(T0, 14, T0 + timedelta(days=10), P) == 1.0


def test_archive_candidate_below_two_percent() -> None:
    # 2 ** (-age/30) < 0.02 once age > 30 * log2(50) ≈ 169.3 days
    assert not is_archive_candidate(decay_weight(T0, 0, T0 + timedelta(days=169), P), P)
    assert is_archive_candidate(decay_weight(T0, 0, T0 + timedelta(days=170), P), P)


def test_age_never_goes_negative_for_clock_skew() -> None:
    assert decay_weight(T0, 0, T0 - timedelta(days=3), P) == 1.0
