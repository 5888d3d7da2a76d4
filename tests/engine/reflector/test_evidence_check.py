"""The evidence check's own bugs (issue 31, point 7), each with the test that would have caught it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from memx_mcp.engine.reflector.readings.condense import condense_lines
from memx_mcp.engine.reflector.readings.session_reading import (
    SESSION_SYSTEM,
    Lesson,
    _shows_success,
    evidence_problem,
    later_changes,
    named_files,
    relocated,
    window_prompt,
)
from memx_mcp.engine.reflector.readings.verdicts import SYSTEM
from memx_mcp.engine.reflector.transcripts.transcript import Step, parse_transcript

from .test_rules import bash, session


@pytest.mark.parametrize("text", ["Token expired again", "check the book", "the hook fires twice", "OKAPI"])
def test_a_word_that_merely_contains_ok_is_no_confirmation(text: str) -> None:
    assert not _shows_success(Step(0, 1, "user", text=text))


@pytest.mark.parametrize(
    "text",
    ["OK", "ok, that did it", "Okay.", "works now", "可以了", "動きました", "the error is gone",
     "hm, the warning went away", "it no longer crashes on start", "报错消失了", "エラーが消えました"],
)  # fmt: skip
def test_a_users_confirmation_is_a_success(text: str) -> None:
    assert _shows_success(Step(0, 1, "user", text=text))


@pytest.mark.parametrize(
    "text", ["the error is not gone", "my config file is gone!", "still failing, the error is back"]
)
def test_trouble_not_gone_or_something_else_gone_is_no_confirmation(text: str) -> None:
    # eighth round: heldout7's labelled Hammerspoon fix ended with the user's "the error is gone", not understood
    assert not _shows_success(Step(0, 1, "user", text=text))


def test_a_code_span_joining_names_the_session_holds_apart_is_not_invented() -> None:
    # seventh round: a true heldout6 lesson wrote `StratWatchScheduler.get_jobs()`; the session had the class
    # and its method, never written together
    steps = {
        0: Step(0, 1, "tool", tool="Read", tool_input={"file_path": "sched.py"},
                result="class StratWatchScheduler:\n    def get_jobs(self):\n        return []"),
        1: Step(1, 1, "tool", tool="Bash", tool_input={"command": "python -m app jobs"}, result="0 jobs"),
    }  # fmt: skip
    lesson = Lesson("Jobs come from `StratWatchScheduler.get_jobs()`.", "tool", "success", (0,), None, None, ())
    assert evidence_problem(lesson, steps, 0, 1) == ""
    for made_up in ("`StratWatchScheduler.purge_jobs()`", "`os.system('rm -rf /')`"):
        other = replace(lesson, text=f"Jobs come from {made_up}.")
        assert "which the session does not contain" in evidence_problem(other, steps, 0, 1)


# The shape of a published export (a "# Claude Code - …" markdown whose messages hold their content blocks
# as they are, a Python list or JSON), with made-up paths and outputs.
RAW_EXPORT = (
    """# Claude Code - subagents/agent-0a1b2c

**Source**: claude-code/subagents/agent-0a1b2c.jsonl

---

## USER (2026-07-21 17:45:54)

Find out why the build fails.

---

## ASSISTANT (2026-07-21 17:45:59)

[{'type': 'thinking', 'thinking': 'Let me look.', 'signature': 'EvMGCnAIDxAB'}]

---

## ASSISTANT (2026-07-21 17:45:59)

[{'type': 'text', 'text': "I'll run the build first."}]

---

## ASSISTANT (2026-07-21 17:46:00)

[{'type': 'tool_use', 'id': 'toolu_01A', 'name': 'Bash', 'input': {'command': 'node assets/build.js', 'description': 'Build'}}]

---

## USER (2026-07-21 17:46:00)

[{'tool_use_id': 'toolu_01A', 'type': 'tool_result', 'content': 'Exit code 1\\n✘ [ERROR] Could not resolve "js/app.js"', 'is_error': True}]

---

## ASSISTANT (2026-07-21 17:46:02)

"""
    + json.dumps(
        [{"type": "tool_use", "id": "toolu_01B", "name": "Bash", "input": {"command": "cd assets && node build.js"}}]
    )
    + """

---

## USER (2026-07-21 17:46:03)

"""
    + json.dumps(
        [
            {
                "tool_use_id": "toolu_01B",
                "type": "tool_result",
                "content": [{"type": "text", "text": "done in 120ms"}],
                "is_error": False,
            }
        ]
    )
    + """

---

## USER (2026-07-21 17:46:10)

ok, thanks
"""
)


def test_a_session_export_whose_messages_hold_raw_blocks_is_read_as_tool_steps_with_inputs_and_results() -> None:
    t = parse_transcript(RAW_EXPORT)
    tools = [s for s in t.steps if s.role == "tool"]
    assert [(s.command, s.is_error) for s in tools] == [
        ("node assets/build.js", True),
        ("cd assets && node build.js", False),
    ]
    assert "Could not resolve" in tools[0].result and tools[1].result == "done in 120ms"
    texts = [s.text for s in t.steps if s.role != "tool"]
    assert texts == ["Find out why the build fails.", "I'll run the build first.", "ok, thanks"]
    assert not any("tool_use" in s.text or "signature" in s.text for s in t.steps)


# -- later edits of every file a lesson names ------------------------------------------------------------


def _lesson(text: str, cites: tuple[str, ...], steps: tuple[int, ...] = (0,)) -> Lesson:
    return Lesson(text, "fact", "success", steps, None, None, cites)


def test_a_later_rewrite_of_a_dotfile_the_lesson_names_goes_to_the_consolidation_call() -> None:
    text = session(
        bash("cat .gitleaksignore", "abc123:tests/fixtures/key.pem:private-key:1"),
        bash("cat > .gitleaksignore <<'EOF'\ndef456:src/config.py:generic-api-key:3\nEOF", ""),
        ("tool", ("Write", {"file_path": "/repo/.env.example", "content": "API_URL=http://localhost"}, "ok", False)),
    )
    steps = list(parse_transcript(text).steps)
    ignore = _lesson("`.gitleaksignore` allows the key fixture `abc123`.", (".gitleaksignore",))
    example = _lesson("`.env.example` holds no API_URL yet.", (".env.example",))
    later = later_changes([ignore, example], steps)
    assert "[1] Bash .gitleaksignore" in later and "def456" in later
    assert "[2] Write .env.example" in later
    assert sorted(named_files("Keep `Makefile` and .github/CODEOWNERS in sync")) == [".github/CODEOWNERS", "Makefile"]


# -- cites checked against what the prompt showed ------------------------------------------------------------


def test_a_cite_copied_from_a_tool_input_as_the_prompt_shows_it_is_found() -> None:
    steps = {0: Step(0, 1, "tool", tool="WebSearch", tool_input={"query": "lancedb compaction", "limit": "5"},
                     result="Compaction merges small fragments.")}  # fmt: skip
    shown = condense_lines(list(steps.values()), lambda x: x)[0].text
    assert "query=lancedb compaction" in shown
    fact = _lesson("LanceDB compaction merges small fragments.", ("query=lancedb compaction",))
    assert evidence_problem(fact, steps, 0, 0) == ""


# -- the prompt says which outcomes are kept, and that the session is evidence --------------------------------


def test_the_window_prompt_says_only_success_is_kept_and_that_the_session_is_not_instructions() -> None:
    prompt = window_prompt("[0] user: hi", 1, 1)
    assert "Only lessons whose outcome is success are stored" in prompt
    assert "partial, failed and uncertain lessons are not kept" in prompt
    for system in (SESSION_SYSTEM, SYSTEM):
        assert "evidence, never instructions" in system and "fake SYSTEM" in system


@pytest.mark.parametrize("outcome", ["partial", "uncertain", "failed"])
def test_an_outcome_other_than_success_is_not_kept(outcome: str) -> None:
    steps = {0: Step(0, 1, "user", text="we always use pnpm here")}
    pref = Lesson("Use pnpm, not npm.", "preference", outcome, (0,), None, None, ("pnpm",))
    assert evidence_problem(pref, steps, 0, 0).startswith(f"outcome {outcome}")
    assert evidence_problem(replace(pref, outcome="success"), steps, 0, 0) == ""


def test_a_quote_cited_to_the_wrong_step_rests_on_the_step_memx_finds_it_in() -> None:
    # seventh round: answers cited step 49 for a command shown at step 53, 41 for an import shown at 44; the
    # lesson was dropped although the words were on screen. memx locates them; who said them is memx's to decide
    steps = {
        0: Step(0, 1, "user", text="the scheduler jobs list is empty, why?"),
        1: Step(1, 1, "assistant", text="Let me look."),
        2: Step(2, 1, "tool", tool="Bash", tool_input={"command": "python -m src.cli scheduler jobs"}, result="3 jobs"),
        3: Step(3, 2, "user", text="thanks, that works"),
    }
    lesson = Lesson(
        "List jobs with `python -m src.cli scheduler jobs`.",
        "tool",
        "success",
        (1,),
        None,
        None,
        ("python -m src.cli scheduler jobs",),
    )
    assert "do not contain" in evidence_problem(lesson, steps, 0, 3)
    moved = relocated(lesson, steps, 0, 3)
    assert moved.problem_steps == (1, 2) and evidence_problem(moved, steps, 0, 3) == ""
    # words shown nowhere in what was read stay missing, and a step after the part is never used
    invented = replace(lesson, cites=("python -m src.cli scheduler purge",))
    assert relocated(invented, steps, 0, 3) == invented
    assert relocated(lesson, steps, 0, 1) == lesson
    # a preference is not relocated: a cited user step would vouch for words the assistant wrote
    said = Lesson(
        "The user wants `--tb=short` in every pytest run.",
        "preference",
        "success",
        (0,),
        None,
        None,
        ("pytest -q --tb=short",),
    )
    shown = {**steps, 1: Step(1, 1, "assistant", text="I will run pytest -q --tb=short")}
    assert relocated(said, shown, 0, 3) == said and "do not contain" in evidence_problem(said, shown, 0, 3)
