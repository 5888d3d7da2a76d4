"""Session mode (issue 27): the whole condensed session read a window at a time through a real HTTP
server on loopback; every lesson kept only on its evidence; calls bounded by the session's size."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.readings.condense import condense, condense_lines, max_windows_for
from memx_mcp.engine.reflector.readings.session_reading import (
    Lesson,
    changed_later,
    consolidate_prompt,
    evidence_problem,
    later_changes,
    parse_consolidated,
)
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

from ...messages_api import MessagesAPI
from .test_pipeline import EPISODE, SECRET
from .test_rules import bash, session

FIX: dict[str, Any] = {
    "lesson": "Run the asset build from assets/ (`cd assets && node build.js`): `node assets/build.js` from the "
    "root fails with Could not resolve js/app.js because the entry point is relative.",
    "kind": "fix",
    "outcome": "success",
    "problem_steps": [0],
    "change_step": 2,
    "success_step": 2,
    "cites": ["Could not resolve", "cd assets && node build.js"],
    "section": "COMMANDS",
    "knowledge_type": "PITFALL",
    "score": 80,
}


def reflector(api: MessagesAPI, window_chars: int = 40_000) -> Reflector:
    return Reflector(PrivacySanitizer(), "session", AnthropicRefiner("k", "m", api.url, 5.0), window_chars=window_chars)


def lesson(**changes: Any) -> Lesson:
    base = {**FIX, **changes}
    return Lesson(
        base["lesson"], base["kind"], base["outcome"], tuple(base["problem_steps"]), base["change_step"],
        base["success_step"], tuple(base["cites"]),
    )  # fmt: skip


STEPS = {s.index: s for s in parse_transcript(EPISODE).steps}


def test_a_lesson_that_cites_its_steps_and_a_later_success_is_kept_with_its_provenance() -> None:
    with MessagesAPI("session", lessons=[FIX]).running() as api:
        report = reflector(api).reflect(parse_transcript(EPISODE))
    (bullet,) = report.bullets
    assert bullet.content == FIX["lesson"] and bullet.evidence == (0, 2) and bullet.source == "llm"
    assert report.mode == "session" and report.windows == 1 and report.llm_calls == 1  # one window, one lesson
    sent = api.requests[0]["messages"][0]["content"]
    assert SECRET not in sent and "[0] Bash FAILED: node assets/build.js" in sent and "[2] Bash ok" in sent


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"outcome": "uncertain"}, "outcome uncertain"),
        ({"cites": ["npm run build"]}, "'npm run build', which its steps 0, 2 do not contain"),
        ({"cites": [], "lesson": "Run the build from its folder."}, "quotes nothing"),
        ({"problem_steps": [7]}, "cites step 7"),
        ({"change_step": 2, "success_step": 1}, "is not after the change"),
        ({"change_step": 0, "success_step": 2}, "the change credited (step 0) failed"),
        ({"change_step": None}, "needs the step of the change"),
        ({"kind": "preference", "change_step": None, "problem_steps": [0, 2]}, "must rest on what the user said"),
        ({"problem_steps": [0, 2], "change_step": 1, "success_step": 1}, "is not after the change"),
    ],
)
def test_a_lesson_without_evidence_is_dropped_with_its_reason(changes: dict[str, Any], reason: str) -> None:
    assert reason in evidence_problem(lesson(**changes), STEPS, 0, 2)


def test_a_success_that_a_later_run_of_the_same_command_undid_is_no_success() -> None:
    text = session(
        bash("mix test", "1 failure", True),
        (
            "tool",
            ("Edit", {"file_path": "config/test.exs", "old_string": "pool: 5", "new_string": "pool: 20"}, "ok", False),
        ),
        bash("mix test", "12 tests, 0 failures"),
        bash("mix test", "1 failure: DBConnection.ConnectionError", True),
    )
    steps = {s.index: s for s in parse_transcript(text).steps}
    fix = lesson(problem_steps=[0], change_step=1, success_step=2, cites=["pool: 20"], lesson="Set `pool: 20`.")
    assert evidence_problem(fix, steps, 0, 3) == "step 3 runs the same command again and it fails"
    assert evidence_problem(fix, steps, 0, 2) == ""


def test_a_preference_the_user_said_stands_on_the_users_step() -> None:
    text = session(("user", "Please always use pnpm in this repo, never npm."), bash("pnpm install", "done"))
    steps = {s.index: s for s in parse_transcript(text).steps}
    said = lesson(
        kind="preference", problem_steps=[0], change_step=None, success_step=None, cites=["always use pnpm"],
        lesson="The user wants pnpm in this repository, never npm.",
    )  # fmt: skip
    assert evidence_problem(said, steps, 0, 1) == ""


def test_a_rate_limit_leaves_the_whole_session_for_later_and_keeps_nothing() -> None:
    with MessagesAPI("limited").running() as api:
        report = reflector(api).reflect(parse_transcript(EPISODE))
    assert report.deferred and report.bullets == [] and report.llm_calls == 1


def test_a_failed_window_gets_the_rules_view_of_its_steps() -> None:
    with MessagesAPI("error").running() as api:
        report = reflector(api).reflect(parse_transcript(EPISODE))
    assert report.fallbacks == 1 and report.bullets and all(b.source == "ErrorFixRule" for b in report.bullets)


def test_a_long_session_costs_a_call_per_window_plus_one_consolidation() -> None:
    events = []
    for n in range(120):
        events += [bash(f"pytest tests/test_{n}.py", f"{n} passed\n" + "x" * 900), ("assistant", f"Step {n} done.")]
    text = session(*events, *[e for e in (("user", "thanks"),)])
    t = parse_transcript(text)
    with MessagesAPI("session", lessons=[]).running() as api:
        report = reflector(api, window_chars=20_000).reflect(t)
    assert report.windows >= 2 and report.llm_calls == report.windows  # no lessons: nothing to consolidate
    assert report.llm_calls <= report.condensed_chars // 20_000 + 1
    fact = {"lesson": "Tests run per file: `pytest tests/test_0.py`.", "kind": "fact", "outcome": "success",
            "problem_steps": [0], "cites": ["pytest tests/test_0.py"]}  # fmt: skip
    with MessagesAPI("session", lessons=[fact]).running() as api:  # a lesson kept: one call more
        found = reflector(api, window_chars=20_000).reflect(t)
    assert found.llm_calls == found.windows + 1 <= found.condensed_chars // 20_000 + 2


def test_a_session_under_one_megabyte_takes_at_most_three_windows() -> None:
    events = [bash(f"cat big_{n}.log", "line of output\n" * 400) for n in range(150)]  # about 900 KB of output
    steps = parse_transcript(session(*events)).steps
    raw = sum(len(x) for s in steps for x in s.texts)
    assert raw < 1_000_000
    c = condense(steps, lambda x: x, 40_000, max_windows_for(raw))
    assert len(c.windows) <= 3 and c.level > 0


def test_repeats_are_folded_into_one_line() -> None:
    steps = parse_transcript(session(*[bash("git status", "clean")] * 4, bash("git log", "abc"))).steps
    lines = condense_lines(steps, lambda x: x)
    assert [line.text.split(" ", 1)[0] for line in lines] == ["[0-3,", "[4]"] and "the same 4 times" in lines[0].text


def test_the_consolidation_drops_what_the_store_knows_and_merges_repeats() -> None:
    answer = json.dumps(
        {"keep": [{"index": 0, "lesson": "merged", "merged": [2]}], "drop": [{"index": 1, "why": "known"}]}
    )
    decisions = parse_consolidated(answer, 4)
    assert [(d.index, d.keep) for d in decisions] == [(0, True), (1, False), (2, False), (3, True)]
    assert decisions[1].why == "known" and decisions[2].why == "merged into 0"


def test_consolidation_runs_against_the_stores_bullets_and_honours_a_drop() -> None:
    class Dropping(MessagesAPI):
        def _session_answer(self, prompt: str) -> str:
            if "Lessons drafted from one coding session" in prompt:
                assert "- Build assets from assets/." in prompt  # what the store holds was shown
                return json.dumps({"keep": [], "drop": [{"index": 0, "why": "known: the memory holds it"}]})
            return super()._session_answer(prompt)

    with Dropping("session", lessons=[FIX]).running() as api:
        report = reflector(api).reflect(parse_transcript(EPISODE), known=["Build assets from assets/."])
    assert report.llm_calls == 2 and report.bullets == []
    assert any("known: the memory holds it" in d.reason for d in report.dropped)


def test_a_lesson_whose_outcome_a_later_part_shows_is_handed_on_and_kept_there() -> None:
    padding = [bash(f"cat notes_{n}.txt", "x" * 1500) for n in range(12)]
    text = session(
        bash("mix test", "** (DBConnection.ConnectionError) connection not available", True),
        ("tool", ("Edit", {"file_path": "config/test.exs", "old_string": "pool_size: 5", "new_string": "pool_size: 20"}, "ok", False)),
        *padding,
        bash("mix test", "42 tests, 0 failures"),
    )  # fmt: skip
    t = parse_transcript(text)
    last = t.steps[-1].index
    early = {"lesson": "Raise `pool_size: 20` in config/test.exs when mix test runs out of connections.",
             "kind": "config", "outcome": "uncertain", "problem_steps": [0], "change_step": 1, "success_step": None,
             "cites": ["pool_size: 20"]}  # fmt: skip

    class Parts(MessagesAPI):
        def _session_answer(self, prompt: str) -> str:
            if prompt.startswith("Part 1 of"):
                return json.dumps({"lessons": [early]})
            if prompt.startswith("Part 2 of"):
                assert "Lessons of the earlier parts whose outcome" in prompt and "(steps 0, 1)" in prompt
                return json.dumps({"lessons": [{**early, "outcome": "success", "success_step": last}]})
            return super()._session_answer(prompt)

    with Parts("session").running() as api:
        report = reflector(api, window_chars=10_000).reflect(t)
    assert report.windows == 2 and [b.content for b in report.bullets] == [early["lesson"]]
    assert report.bullets[0].evidence == (0, 1, last)


def test_a_fact_about_a_file_the_session_later_deletes_is_dropped_and_later_edits_go_to_consolidation() -> None:
    text = session(
        ("user", "Where do we track progress?"),
        bash("cat next_steps.md", "## Next steps\n- finish the decay chain tests"),
        ("tool", ("Edit", {"file_path": "docs/guide.md", "old_string": "v1", "new_string": "v2"}, "ok", False)),
        bash("git rm -q next_steps.md", ""),
    )
    t = parse_transcript(text)
    steps = list(t.steps)
    tracked = lesson(kind="fact", problem_steps=[1], change_step=None, success_step=None, cites=["next_steps.md"],
                     lesson="Progress is tracked in next_steps.md.")  # fmt: skip
    guide = lesson(kind="fact", problem_steps=[1], change_step=None, success_step=None, cites=["decay chain"],
                   lesson="The guide docs/guide.md documents v1.")  # fmt: skip
    assert changed_later(tracked, steps) == "step 3 deletes or moves next_steps.md after the steps it rests on"
    assert changed_later(guide, steps) == ""  # an edit may leave it true: the model weighs it
    later = later_changes([guide], steps)
    assert later.startswith("[2] Edit docs/guide.md:") and "+ v2" in later
    assert "these steps changed files the lessons name:\n[2] Edit docs/guide.md" in consolidate_prompt(
        [guide], [], later
    )
