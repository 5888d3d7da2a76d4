from __future__ import annotations

import pytest

from memx_mcp.engine.retrieval.layers import exact_score, fuzzy_score, metadata_score, metadata_terms
from memx_mcp.text.tokenize import query_terms, tokens


def terms(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def test_exact_layer_spans_zero_to_fifteen() -> None:
    bullet = terms("Use pytest -n auto to run tests in parallel")
    assert exact_score(query_terms("pytest parallel"), bullet) == 15.0
    assert exact_score(query_terms("pytest docker"), bullet) == 7.5
    assert exact_score(query_terms("docker compose"), bullet) == 0.0


def test_fuzzy_layer_rewards_spelling_variants() -> None:
    bullet = terms("Configure the connection pool")
    score = fuzzy_score(query_terms("conection pool"), bullet)
    assert 9.0 < score <= 10.0


def test_fuzzy_layer_ignores_weak_matches() -> None:
    assert fuzzy_score(query_terms("kubernetes"), terms("Configure the connection pool")) == 0.0


def test_metadata_layer_is_jaccard_times_ten() -> None:
    meta = metadata_terms(["redis"])
    assert metadata_score(query_terms("redis"), meta) == pytest.approx(10.0)
    assert metadata_score(query_terms("redis pool"), meta) == pytest.approx(5.0)
    assert metadata_score(query_terms("redis"), frozenset()) == 0.0


def test_cjk_terms_count_as_in_bm25_and_latin_words_by_presence() -> None:
    query = ["并行", "测试"]
    weights = {"并行": 1.0, "测试": 1.0}
    terms = frozenset(query)
    once = exact_score(query, terms, weights, {"并行": 1, "测试": 1}, relative_length=1.0)
    assert once == 15.0  # each once in a text of average length: full share, capped at 15
    half = exact_score(["并行", "缓存"], terms, {"并行": 1.0, "缓存": 1.0}, {"并行": 1}, 1.0)
    repeated = exact_score(["并行", "缓存"], terms, {"并行": 1.0, "缓存": 1.0}, {"并行": 3}, 1.0)
    long_text = exact_score(["并行", "缓存"], terms, {"并行": 1.0, "缓存": 1.0}, {"并行": 1}, 3.0)
    assert half == 7.5 and long_text < half < repeated <= 15.0
    latin = exact_score(["pytest", "docker"], frozenset({"pytest"}), {"pytest": 1.0, "docker": 1.0}, {}, 3.0)
    assert latin == 7.5  # length and repeats do not matter for a Latin word
