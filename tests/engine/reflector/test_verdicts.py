"""What the Reflector accepts of an LLM's answer."""

from __future__ import annotations

import json

import pytest

from memx_mcp.domain.models import KnowledgeType, Section
from memx_mcp.engine.reflector.readings.verdicts import check_prompt, parse_answer, parse_checks


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


def test_a_check_names_what_to_drop_and_keeps_what_it_does_not_name() -> None:
    prompt = check_prompt("[Bash ok] pytest\n3 passed", [(4, "Run `pytest` from tests/."), (9, "Use `uv`.")])
    assert "0. (step 4) Run `pytest` from tests/." in prompt and "1. (step 9) Use `uv`." in prompt
    checks = parse_checks('{"items": [{"index": 1, "keep": false, "why": "it moved"}]}')
    assert checks.get(0, (True, ""))[0] and checks[1] == (False, "it moved")
    with pytest.raises(ValueError):
        parse_checks("no JSON here")
