"""What the Reflector accepts of an LLM's answer."""

from __future__ import annotations

import json

import pytest

from memx_mcp.domain.models import KnowledgeType, Section
from memx_mcp.engine.reflector.llm import parse_answer


def _answer(**item: object) -> str:
    return json.dumps({"items": [{"index": 0, "keep": True, "score": 70, "bullet": "Use `uv sync`.", **item}]})


def test_a_label_off_the_list_costs_the_label_not_the_bullet() -> None:
    (v,) = parse_answer(_answer(section="Errors & fixes", knowledge_type="error_fix"))
    assert v.bullet == "Use `uv sync`." and v.section is None and v.knowledge_type is None


def test_labels_are_read_whatever_their_case() -> None:
    (v,) = parse_answer("Here it is:\n```json\n" + _answer(section="debugging", knowledge_type="Pitfall") + "\n```")
    assert v.section is Section.DEBUGGING and v.knowledge_type is KnowledgeType.PITFALL


@pytest.mark.parametrize("score", [-1, 101])
def test_a_score_off_the_scale_is_refused(score: int) -> None:
    with pytest.raises(ValueError):
        parse_answer(_answer(score=score))
