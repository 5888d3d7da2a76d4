"""Recorded model answers replay by what the prompt shows, not by its instruction text
(benchmarks/prompt_content.py, used by benchmarks/llm_replay.py): the same window under reworded instructions
finds its answer; a window whose steps changed, or other open lessons, does not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

from memx_mcp.engine.reflector.readings.session_reading import (
    WINDOW_PROMPT,
    Lesson,
    consolidate_prompt,
    window_prompt,
)
from prompt_content import content_key, content_of, templates

WINDOW = "[0] user: run the tests\n[1] Bash FAILED: pytest -q\n  ModuleNotFoundError: No module named 'x'"


def test_the_same_window_under_reworded_instructions_has_the_same_content_key() -> None:
    today = templates()
    reworded = dict(today, WINDOW_PROMPT=WINDOW_PROMPT.replace("List the durable lessons", "Name the lasting lessons"))
    prompt = window_prompt(WINDOW, 1, 2)
    old_prompt = reworded["WINDOW_PROMPT"].format(window=WINDOW, part=1, parts=2, open="")
    assert prompt != old_prompt
    assert content_key(old_prompt, reworded) == content_key(prompt, today) is not None
    found = content_of(prompt, today)
    assert found is not None and found[0] == "WINDOW_PROMPT" and found[1]["window"] == WINDOW


def test_what_the_prompt_shows_changing_changes_the_content_key() -> None:
    today = templates()
    key = content_key(window_prompt(WINDOW, 1, 2), today)
    assert content_key(window_prompt(WINDOW.replace("[1]", "[2]"), 1, 2), today) != key
    assert content_key(window_prompt(WINDOW, 2, 2), today) != key
    lesson = Lesson("Install x with `pip install x`.", "fix", "uncertain", (1,), None, None, ("pytest -q",))
    assert content_key(window_prompt(WINDOW, 1, 2, [lesson]), today) != key
    drafted = consolidate_prompt([lesson], [])
    assert content_key(drafted, today) != content_key(consolidate_prompt([lesson], [], later="[3] Edit a.py"), today)
    assert content_key("Some prompt memx never sends", today) is None
