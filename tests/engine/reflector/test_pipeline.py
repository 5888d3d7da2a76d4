"""The Reflector pipeline in rules, hybrid and llm modes; LLM paths against a real loopback HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memx_mcp.adapters.anthropic import AnthropicRefiner, make_refiner
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

from ...messages_api import MessagesAPI
from .test_rules import bash, session

DATA = Path(__file__).parents[3] / "benchmarks" / "data" / "transcripts"
SECRET = "ghp_" + "Zx9Qw2Er7Ty4Ui1Op3As5Df6Gh8Jk0Lz1Xc3"
EPISODE = session(
    bash("node assets/build.js", 'Exit code 1\n✘ [ERROR] Could not resolve "js/app.js"', True),
    ("assistant", f"The build script expects to be run from assets/ since the entry is relative. token {SECRET}"),
    bash("cd assets && node build.js", "done"),
)


def reflector(mode: str, api: MessagesAPI | None = None, timeout: float = 5.0) -> Reflector:
    refiner = AnthropicRefiner("test-key", "claude-test", api.url, timeout) if api else None
    return Reflector(PrivacySanitizer(), mode, refiner)


def test_rules_mode_on_a_real_session_finds_the_known_fixes() -> None:
    t = parse_transcript((DATA / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl").read_text(encoding="utf-8"))
    report = reflector("rules").reflect(t)
    texts = " ".join(b.content for b in report.bullets)
    assert "git push --set-upstream origin" in texts
    assert "node build.js" in texts and "expects to be run from within the `assets/` directory" in texts
    assert report.llm_calls == 0
    assert all(b.score >= 30 for b in report.bullets)


def test_bullets_are_sanitized_in_every_mode() -> None:
    report = reflector("rules").reflect(parse_transcript(EPISODE))
    assert report.bullets and all(SECRET not in b.content for b in report.bullets)


def test_hybrid_sends_one_sanitized_request_per_event_and_averages_scores() -> None:
    with MessagesAPI("keep").running() as api:
        report = reflector("hybrid", api).reflect(parse_transcript(EPISODE))
    assert report.llm_calls == len(api.requests) == report.events == 1
    sent = json.dumps(api.requests)
    assert SECRET not in sent and "[REDACTED:api_token]" in sent
    (b,) = report.bullets
    assert b.source == "hybrid" and b.content == "LLM-refined bullet 0"
    rule_only = reflector("rules").reflect(parse_transcript(EPISODE)).bullets[0].score
    assert b.score == pytest.approx((rule_only + 90) / 2, abs=0.1)
    assert report.llm_input_tokens > 0 and report.llm_output_tokens > 0


def test_an_llm_verdict_to_drop_is_honoured() -> None:
    with MessagesAPI("drop").running() as api:
        report = reflector("hybrid", api).reflect(parse_transcript(EPISODE))
    assert report.bullets == [] and report.dropped[0].reason == "LLM: not worth keeping"


@pytest.mark.parametrize("behaviour", ["malformed", "error", "slow"])
def test_llm_failures_fall_back_to_rules_for_that_event(behaviour: str) -> None:
    with MessagesAPI(behaviour, delay=2.0).running() as api:
        report = reflector("hybrid", api, timeout=0.5).reflect(parse_transcript(EPISODE))
    assert report.fallbacks == 1 and report.llm_calls == 1
    (b,) = report.bullets
    assert b.source == "ErrorFixRule" and SECRET not in b.content


def test_llm_mode_calls_once_per_event_and_hybrid_far_less() -> None:
    t = parse_transcript((DATA / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl").read_text(encoding="utf-8"))
    with MessagesAPI("extract").running() as api:
        llm = reflector("llm", api).reflect(t)
        excerpts = [r for r in api.requests if r["messages"][0]["content"].startswith("An excerpt")]
    with MessagesAPI("keep").running() as api:
        hybrid = reflector("hybrid", api).reflect(t)
    assert len(excerpts) == llm.events > 100 and llm.llm_calls <= llm.events + 1  # and the end-of-session check
    assert hybrid.llm_calls <= 0.1 * llm.llm_calls
    assert all(b.source == "llm" for b in llm.bullets)


def test_without_an_api_key_hybrid_runs_as_rules_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    refiner, note = make_refiner("m", "", 1.0)
    assert refiner is None and "no ANTHROPIC_API_KEY" in note
    report = Reflector(PrivacySanitizer(), "hybrid", None).reflect(parse_transcript(EPISODE))
    assert report.mode == "rules" and report.bullets


def test_low_scores_are_dropped_with_the_reason() -> None:
    text = session(*[bash("mix credo --strict")] * 3)
    report = Reflector(PrivacySanitizer(), "rules", None, min_score=90).reflect(parse_transcript(text))
    assert report.bullets == [] and "min_score 90" in report.dropped[0].reason


def test_hybrid_hands_the_llm_the_whole_episode_sanitized() -> None:
    """The request carries every step from the failure to the success (long outputs clipped, the fix and
    the success not cut off), masked with the session's sanitizer: the secret the session used is out."""
    noisy = "\n".join(f"debug line {n}: resolving module graph" for n in range(200))
    text = session(
        bash("npm test", f"Error: Cannot find module 'jsdom'\n{noisy}", True),
        bash("cat package.json", '{"name": "web", "devDependencies": {}}\n' + noisy),
        bash("ls node_modules", noisy),
        ("assistant", f"The test environment needs jsdom installed. Using token {SECRET} for the registry."),
        bash(f"NPM_TOKEN={SECRET} npm install --save-dev jsdom", "added 1 package"),
        bash("npm test", "Tests: 12 passed"),
    )
    t = parse_transcript(text)
    sanitizer = PrivacySanitizer().learning(t.text)
    with MessagesAPI("keep").running() as api:
        refiner = AnthropicRefiner("test-key", "claude-test", api.url, 5.0)
        report = Reflector(sanitizer, "hybrid", refiner).reflect(t)
    (request,) = api.requests
    prompt = request["messages"][0]["content"]
    episode = prompt.split("<episode>")[1].split("</episode>")[0]
    for seen in (
        "npm test",
        "Cannot find module 'jsdom'",
        "cat package.json",
        "npm install --save-dev jsdom",
        "12 passed",
    ):
        assert seen in episode
    assert "needs jsdom installed" in episode and "characters left out" in episode
    assert SECRET not in json.dumps(api.requests) and "[REDACTED" in episode
    assert len(episode) <= 12000
    assert report.bullets and all(SECRET not in b.content for b in report.bullets)


def test_a_config_change_that_reads_the_same_once_masked_is_dropped() -> None:
    # real shape: PAI_DIR "/Users/YOURNAME/.claude" → "/Users/dev/.claude", both home user names masked
    change = {
        "file_path": "/Users/dev/.claude/settings.json",
        "old_string": '"PAI_DIR": "/Users/YOURNAME/.claude"',
        "new_string": '"PAI_DIR": "/Users/dev/.claude"',
    }
    t = parse_transcript(session(("tool", ("Edit", change, "ok", False))))
    report = reflector("rules").reflect(t)
    assert report.bullets == [] and any("read the same once masked" in d.reason for d in report.dropped)


GROUNDED = "When `node assets/build.js` fails with `Could not resolve`, run `cd assets && node build.js` instead."


def test_llm_mode_keeps_a_bullet_that_stands_on_the_excerpt_and_asks_in_the_answers_own_terms() -> None:
    with MessagesAPI("extract", written=[GROUNDED]).running() as api:
        report = reflector("llm", api).reflect(parse_transcript(EPISODE))
    assert report.bullets and {b.content for b in report.bullets} == {GROUNDED}
    prompt = api.requests[0]["messages"][0]["content"]
    assert "score (0-100" in prompt and "DEBUGGING" in prompt and "PITFALL" in prompt


@pytest.mark.parametrize(
    ("bullet", "reason"),
    [
        ("Run `npm run build:assets` from the root to build.", "which the episode does not contain"),
        ("When the build fails, run `cd assets && node build.js`. " + "It is the way. " * 25, "longer than 400"),
    ],
)
def test_llm_mode_refuses_an_invented_command_or_an_overlong_bullet_never_cutting_it(bullet: str, reason: str) -> None:
    with MessagesAPI("extract", written=[bullet]).running() as api:
        report = reflector("llm", api).reflect(parse_transcript(EPISODE))
    assert report.bullets == []
    assert report.dropped and all(reason in d.reason for d in report.dropped if d.rule == "llm")


def test_llm_mode_checks_its_bullets_against_the_rest_of_the_session_and_drops_what_did_not_hold() -> None:
    with MessagesAPI("extract", written=[GROUNDED], checks=[False]).running() as api:
        report = reflector("llm", api).reflect(parse_transcript(EPISODE))
    assert report.bullets == []
    (check,) = [r for r in api.requests if r["messages"][0]["content"].startswith("Bullets drafted")]
    sent = check["messages"][0]["content"]
    assert sent.count(GROUNDED) == 1 and "(step " in sent  # each bullet once, with its step
    assert "cd assets && node build.js" in sent and SECRET not in sent  # what came after, sanitized
    assert {d.reason for d in report.dropped if d.rule == "llm"} == {
        "LLM: does not hold at the end (a later step moved it)"
    }


def test_a_failed_end_of_session_check_keeps_the_bullets_and_says_so() -> None:
    with MessagesAPI("extract", written=[GROUNDED], check_fails=True).running() as api:
        report = reflector("llm", api).reflect(parse_transcript(EPISODE))
    assert {b.content for b in report.bullets} == {GROUNDED}
    assert any("kept unchecked" in n for n in report.notes)


def test_the_strict_floor_keeps_only_environment_fixes_and_stated_preferences() -> None:
    strict = Reflector(PrivacySanitizer(), "rules", None, floor="strict")
    report = strict.reflect(parse_transcript(EPISODE))  # an ErrorFix of the project's own build: left for a model
    assert report.bullets == [] and any(d.reason == "left for a model: the rules' strict floor" for d in report.dropped)
    out = "sudo: a terminal is required to read the password; either use the -S option to read from standard input"
    env = strict.reflect(parse_transcript(session(bash("sudo apt-get install -y cuda-toolkit-12-8", out, True))))
    assert [b.rule for b in env.bullets] == ["ErrorFixRule"] and "cannot run sudo here" in env.bullets[0].content
    assert Reflector(PrivacySanitizer(), "rules", None).reflect(parse_transcript(EPISODE)).bullets  # floor "all"
