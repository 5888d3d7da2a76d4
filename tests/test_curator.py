from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.curator import (
    CuratorParams,
    Neighbour,
    contradiction_evidence,
    decide,
    merge,
    merge_contents,
    recommend,
)
from memx_mcp.models import Bullet, KnowledgeType, Section

from .conftest import T0

P = CuratorParams()


def bullet(content: str, score: float = 50.0, **kw: object) -> Bullet:
    base = dict(
        id="b_" + str(abs(hash(content)))[:8],
        content=content,
        section=Section.GENERAL,
        knowledge_type=KnowledgeType.KNOWLEDGE,
        instructivity_score=score,
        confidence=1.0,
        source="manual",
        scope="global",
        created_at=T0,
        updated_at=T0,
    )
    base.update(kw)
    return Bullet(**base)  # type: ignore[arg-type]


OLD = bullet("Use ruff to lint the code")


@pytest.mark.parametrize(
    ("similarity", "action", "conflicts"),
    [(0.8, "merge", 0), (0.7999, "insert", 1), (0.5, "insert", 1), (0.4999, "insert", 0)],
)
def test_threshold_edges(similarity: float, action: str, conflicts: int) -> None:
    d = decide("Use ruff for linting the code", [Neighbour(OLD, similarity)], P)
    assert d.action == action
    assert len(d.conflicts) == conflicts


def test_between_merge_and_certain_a_merge_needs_shared_words() -> None:
    old = bullet("Always pin the Node version in .nvmrc")
    new = "The Node version in .nvmrc is read by nvm use"
    close = decide(new, [Neighbour(old, 0.81)], P)
    assert close.action == "insert" and close.conflicts[0].kind == "overlap"
    assert decide(new, [Neighbour(old, 0.9)], P).action == "merge"


def test_a_potential_conflict_without_evidence_is_an_overlap() -> None:
    d = decide("Lint with ruff before committing", [Neighbour(OLD, 0.6)], P)
    assert d.conflicts[0].kind == "overlap"


def test_the_spec_redis_example_is_a_contradiction_with_numeric_evidence() -> None:
    a = "A Redis pool of 10 connections is enough"
    b = "Redis is only stable with a pool of 50 connections or more"
    evidence = contradiction_evidence(a, b)
    assert any("10" in e and "50" in e for e in evidence)
    d = decide(b, [Neighbour(bullet(a), 0.84)], P)
    assert d.action == "insert"  # never merged away, whatever the similarity
    assert d.conflicts[0].kind == "contradiction"


@pytest.mark.parametrize(
    ("a", "b", "word"),
    [
        ("Enable the cache in CI", "Disable the cache in CI", "opposite"),
        ("The retry flag is needed here", "The retry flag is not needed here", "negation"),
        ("Always pin the Node version", "Never pin the Node version", "opposite"),
        ("CI 里启用缓存", "CI 里禁用缓存", "opposite"),
        ("キャッシュを有効にする", "キャッシュを無効にする", "opposite"),
        ("这个参数需要设置", "这个参数不需要设置", "negation"),
    ],
)
def test_opposite_advice_and_negation_are_evidence(a: str, b: str, word: str) -> None:
    assert any(word in e for e in contradiction_evidence(a, b))


def test_compatible_statements_carry_no_evidence() -> None:
    assert contradiction_evidence("Use pytest -n auto for speed", "pytest -n auto runs the suite in parallel") == ()


def test_keep_best_keeps_the_higher_scored_text_under_the_existing_id() -> None:
    existing = bullet("use ruff", score=40, tools=("ruff",), recall_count=2)
    new = bullet("Use ruff check --fix to lint and fix in one go", score=75, tools=("ruff",), tags=("lint",))
    merged = merge(existing, new, "keep_best", T0 + timedelta(days=1))
    assert merged.id == existing.id
    assert merged.content == new.content
    assert merged.instructivity_score == 75
    assert merged.tags == ("lint",)
    assert merged.recall_count == 3  # the merge counts as a reinforcement
    assert merged.updated_at == T0 + timedelta(days=1)


def test_keep_best_keeps_the_existing_text_on_a_tie() -> None:
    existing, new = bullet("A first", score=50), bullet("A second", score=50)
    assert merge(existing, new, "keep_best", T0).content == "A first"


def test_merge_content_adds_only_new_sentences() -> None:
    assert merge_contents("Use ruff. It is fast.", "It is fast. It fixes imports too.") == (
        "Use ruff. It is fast. It fixes imports too."
    )
    existing, new = bullet("Use ruff. It is fast.", score=60), bullet("Ruff also formats code.", score=40)
    merged = merge(existing, new, "merge_content", T0)
    assert merged.content == "Use ruff. It is fast. Ruff also formats code."
    assert merged.vector is None  # new text: the caller re-embeds


def test_recommendation_prefers_newer_then_more_recalled() -> None:
    old, new = bullet("x", created_at=T0), bullet("y", created_at=T0 + timedelta(days=3))
    assert recommend(old, new) == ("b", "newer")
    assert recommend(bullet("x", recall_count=4), bullet("y", recall_count=1)) == ("a", "recalled more often")
