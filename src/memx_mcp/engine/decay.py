"""The forgetting curve of SPEC §6. Pure: the clock is an argument."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class DecayParams:
    half_life_days: float = 30.0
    boost_factor: float = 0.1
    permanent_recalls: int = 15
    protect_days: float = 7.0
    archive_below: float = 0.02


def age_days(created_at: datetime, now: datetime) -> float:
    return max(0.0, (now - created_at).total_seconds() / SECONDS_PER_DAY)


def base_weight(age: float, params: DecayParams) -> float:
    return float(2.0 ** (-age / params.half_life_days))


def decay_weight(created_at: datetime, recall_count: int, now: datetime, params: DecayParams) -> float:
    """``clamp(2**(-age/half_life) * (1 + boost * recalls), 0, 1)``, with the two protections:
    permanent after ``permanent_recalls`` recalls, and full weight while younger than ``protect_days``."""
    age = age_days(created_at, now)
    if recall_count >= params.permanent_recalls or age <= params.protect_days:
        return 1.0
    boosted = base_weight(age, params) * (1.0 + params.boost_factor * recall_count)
    return min(1.0, max(0.0, boosted))


def is_archive_candidate(weight: float, params: DecayParams) -> bool:
    """The third protection layer: only what fell below ``archive_below`` may be archived by gc."""
    return weight < params.archive_below


HISTOGRAM_BINS = ("permanent", "protected (new)", "0.8-1.0", "0.6-0.8", "0.4-0.6", "0.2-0.4", "0.02-0.2", "<0.02 (gc)")


def decay_histogram(bullets: Iterable[tuple[datetime, int]], now: datetime, params: DecayParams) -> dict[str, int]:
    """How many bullets (``created_at``, ``recall_count``) sit in each band of the curve: permanent ones
    and protected new ones apart, then by weight; the last band is what ``gc`` would archive."""
    counts = dict.fromkeys(HISTOGRAM_BINS, 0)
    for created_at, recalls in bullets:
        if recalls >= params.permanent_recalls:
            counts["permanent"] += 1
        elif age_days(created_at, now) <= params.protect_days:
            counts["protected (new)"] += 1
        else:
            w = decay_weight(created_at, recalls, now, params)
            band = (
                "<0.02 (gc)"
                if is_archive_candidate(w, params)
                else "0.02-0.2"
                if w < 0.2
                else "0.2-0.4"
                if w < 0.4
                else "0.4-0.6"
                if w < 0.6
                else "0.6-0.8"
                if w < 0.8
                else "0.8-1.0"
            )
            counts[band] += 1
    return counts
