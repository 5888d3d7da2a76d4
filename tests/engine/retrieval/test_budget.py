from __future__ import annotations

from memx_mcp.engine.retrieval.budget import estimate_tokens, pack


def test_latin_text_is_four_characters_per_token() -> None:
    assert estimate_tokens("a" * 40) == 10


def test_cjk_text_is_one_and_a_half_characters_per_token() -> None:
    assert estimate_tokens("连接池" * 10) == 20  # 30 CJK characters


def test_mixed_text_adds_both_estimates() -> None:
    assert estimate_tokens("redis 连接池") == 4  # 6 latin/space chars = 1.5, 3 CJK = 2 → ceil(3.5)


def test_empty_text_costs_nothing() -> None:
    assert estimate_tokens("") == 0


def test_pack_stops_at_max_results() -> None:
    assert pack(["a", "b", "c"], [1, 1, 1], max_results=2, token_budget=100) == (["a", "b"], 0)


def test_pack_skips_what_does_not_fit_and_counts_it() -> None:
    packed, skipped = pack(["big", "small", "tiny"], [50, 10, 5], max_results=5, token_budget=20)
    assert packed == ["small", "tiny"]
    assert skipped == 1
