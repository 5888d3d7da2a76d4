from __future__ import annotations

import pytest

from memx_mcp.retrieval.layers import exact_score, fuzzy_score, metadata_score, metadata_terms
from memx_mcp.retrieval.tokenize import query_terms, tokens


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
