"""Token estimates and packing into ``max_results`` / ``token_budget`` (SPEC §7)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from ...text.tokenize import cjk_char_count

CJK_CHARS_PER_TOKEN = 1.5
LATIN_CHARS_PER_TOKEN = 4.0

T = TypeVar("T")


def estimate_tokens(text: str) -> int:
    """CJK text at 1.5 characters per token, everything else at 4.0, so Chinese and Japanese are not
    over-truncated. Never below 1 for non-empty text."""
    if not text:
        return 0
    cjk = cjk_char_count(text)
    other = len(text) - cjk
    return max(1, math.ceil(cjk / CJK_CHARS_PER_TOKEN + other / LATIN_CHARS_PER_TOKEN))


def pack(items: Sequence[T], costs: Sequence[int], max_results: int, token_budget: int) -> tuple[list[T], int]:
    """Take items in rank order until ``max_results`` are taken; an item too large for the tokens left is
    skipped (a smaller one after it may still fit). Returns the packed items and how many were skipped
    for the budget (items never reached because the results were full do not count)."""
    packed: list[T] = []
    skipped = 0
    used = 0
    for item, cost in zip(items, costs, strict=True):
        if len(packed) >= max_results:
            break
        if used + cost <= token_budget:
            packed.append(item)
            used += cost
        else:
            skipped += 1
    return packed, skipped
