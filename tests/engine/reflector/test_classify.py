from __future__ import annotations

import pytest

from memx_mcp.domain.models import KnowledgeType, Section
from memx_mcp.engine.reflector.classify import classify, extract_metadata, instructivity


@pytest.mark.parametrize(
    ("text", "section", "ktype"),
    [
        (
            "ModuleNotFoundError: install the package with pip install -e .",
            Section.DEBUGGING,
            KnowledgeType.METHOD,
        ),
        ("Never store local times in the database", Section.ARCHITECTURE, KnowledgeType.PITFALL),
        ("I prefer tabs over spaces in Go files", Section.PREFERENCES, KnowledgeType.PREFERENCE),
        ("Use pytest -n auto to run the suite in parallel", Section.COMMANDS, KnowledgeType.METHOD),
        ("The deploy pipeline runs on every tag", Section.WORKFLOW, KnowledgeType.KNOWLEDGE),
        ("遇到 TypeError 时需要加类型断言", Section.DEBUGGING, KnowledgeType.KNOWLEDGE),
        ("デプロイの前にキャッシュを消すのを避けること", Section.WORKFLOW, KnowledgeType.PITFALL),
    ],
)
def test_sections_and_types(text: str, section: Section, ktype: KnowledgeType) -> None:
    c = classify(text)
    assert (c.section, c.knowledge_type) == (section, ktype)


def test_a_specific_actionable_bullet_with_a_cause_scores_higher_than_a_vague_one() -> None:
    good = instructivity("Run `pytest -n auto` because the suite takes 10 minutes serially", 0.8)
    vague = instructivity("tests are slow", 0.8)
    assert good.score > vague.score + 30
    assert "cause and effect" in good.reasons
    assert 0 <= vague.score <= good.score <= 100


def test_metadata_finds_tools_entities_and_hashtags() -> None:
    m = extract_metadata("pytest-xdist fixes ModuleNotFoundError with MAX_POOL_SIZE in redis #perf")
    assert "redis" in m.tools and "pytest-xdist" in m.tools
    assert "ModuleNotFoundError" in m.entities and "MAX_POOL_SIZE" in m.entities
    assert m.tags == ("perf",)


@pytest.mark.parametrize("token", ["a_" * 50_000, "aB1_" * 25_000, "a" * 100_000])
def test_a_100k_character_token_is_classified_in_one_pass(token: str) -> None:
    # \w+Error, \w+\(\) and the path pattern were tried from each of its positions: 150 s before
    text = f"see {token} here"
    assert classify(text) == classify("see it here")
    assert instructivity(text, 0.5).reasons == ("confidence 0.50",)  # no code, no path: one word
    assert extract_metadata(text).tools == ()
