"""The prompt gate's features and weights (``engine/retrieval/gate.py``): pure functions, no model."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from memx_mcp.engine.retrieval.gate import FEATURES, GateWeights, distinctive, features, probabilities

RIPGREP = "Prefer rg (ripgrep) over grep -r to search code"


def shipped() -> dict[str, object]:
    text = resources.files("memx_mcp.engine.retrieval").joinpath("gate_weights.json").read_text("utf-8")
    data: dict[str, object] = json.loads(text)
    return data


def test_distinctive_terms_leave_out_common_and_generic_words_and_bare_numbers() -> None:
    assert distinctive("How should I search the codebase for all the TODO comments?") == [
        "search",
        "codebase",
        "todo",
        "comment",
    ]
    assert distinctive("continue") == [] and distinctive("please fix the error in this file") == []
    assert distinctive("run it 10 more") == []
    assert "连接" in distinctive("高峰期 Redis 连接经常断开")  # a CJK bigram names a subject


def test_features_read_both_texts_and_compare_the_hits() -> None:
    (answer, other) = features(
        "How should I search the codebase for all the TODO comments?",
        [(RIPGREP, 0.35), ("Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10", 0.15)],
    )
    semantic, share, size, lead, cover = answer
    assert semantic == 0.35 and share == pytest.approx(1 / 4) and lead == pytest.approx(0.20)
    assert 0 < cover < 1 and size > 0
    assert other[1] == 0.0 and other[3] == pytest.approx(-0.20) and other[4] == 0.0
    (alone,) = features("continue", [("diverse_musical_ai.py waited on input('Press Enter to continue…')", 0.3)])
    assert alone[1] == 0.0 and alone[4] == 0.0  # a match on a chatter word says nothing


def test_the_shipped_weights_load_and_rank_the_answer_above_the_word_alike() -> None:
    weights = GateWeights.from_json(shipped())
    assert 0 < weights.threshold < 1
    answer, other = probabilities(
        "How should I search the codebase for all the TODO comments?",
        [(RIPGREP, 0.35), ("Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10", 0.15)],
        weights,
    )
    assert answer > weights.threshold > other


def test_weights_for_other_features_are_refused_with_a_clear_error() -> None:
    data = shipped()
    with pytest.raises(ValueError, match="features"):
        GateWeights.from_json({**data, "features": [*FEATURES, "kind"]})
    with pytest.raises(ValueError, match="one mean"):
        GateWeights.from_json({**data, "coef": [1.0]})
