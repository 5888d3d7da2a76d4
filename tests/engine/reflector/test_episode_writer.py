"""Hybrid mode's writing path: the LLM gets the whole sanitized episode and writes the bullets, the rules'
drafts as hints; what it returns is masked again and checked against the episode. Against the real
loopback Messages API server the other LLM tests use."""

from __future__ import annotations

import json

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.readings.episode_writer import check_written
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

from ...messages_api import MessagesAPI
from .test_rules import bash, session

SECRET = "ghp_" + "Zx9Qw2Er7Ty4Ui1Op3As5Df6Gh8Jk0Lz1Xc3"
NOISE = "\n".join(f"debug line {n}: resolving module graph" for n in range(200))
EPISODE = session(
    bash("npm test", f"Error: Cannot find module 'jsdom'\n{NOISE}", True),
    bash("cat package.json", '{"name": "web", "devDependencies": {}}\n' + NOISE),
    ("assistant", f"The test environment needs jsdom installed. Using token {SECRET} for the registry."),
    bash(f"NPM_TOKEN={SECRET} npm install --save-dev jsdom", "added 1 package"),
    bash("npm test", "Tests: 12 passed"),
)
GOOD = (
    "When `npm test` fails with \"Cannot find module 'jsdom'\", install it: `npm install --save-dev jsdom`; "
    "`npm test` then passed."
)


def run(written: list[str]) -> tuple[Reflector, MessagesAPI, object]:
    t = parse_transcript(EPISODE)
    sanitizer = PrivacySanitizer().learning(t.text)
    with MessagesAPI("write", written=written).running() as api:
        refiner = AnthropicRefiner("test-key", "claude-test", api.url, 5.0)
        reflector = Reflector(sanitizer, "hybrid", refiner, writes=True)
        report = reflector.reflect(t)
    return reflector, api, report


def test_the_llm_receives_the_whole_episode_sanitized_and_its_bullet_is_kept() -> None:
    _, api, report = run([GOOD])
    (request,) = api.requests
    prompt = request["messages"][0]["content"]
    assert prompt.startswith("One whole episode")
    episode = prompt.split("<episode>")[1].split("</episode>")[0]
    for seen in (
        "npm test",
        "Cannot find module 'jsdom'",
        "cat package.json",
        "npm install --save-dev jsdom",
        "12 passed",
    ):
        assert seen in episode  # from the failure to the first success, nothing cut off
    assert "needs jsdom installed" in episode and "[REDACTED" in episode
    assert SECRET not in json.dumps(api.requests)
    drafts = prompt.split("</episode>")[1]
    assert "hints only" in drafts and "0. " in drafts  # the rules' draft goes along as a hint
    (b,) = report.bullets  # type: ignore[attr-defined]
    assert b.content == GOOD and b.source == "hybrid-written"


def test_a_bullet_that_invents_a_command_or_names_nothing_is_rejected_with_a_note_and_the_draft_stays() -> None:
    _, _, report = run(["Run `rm -rf node_modules && npm ci` to fix it.", "It is fixed now, all good."])
    reasons = [d.reason for d in report.dropped]  # type: ignore[attr-defined]
    assert any("quotes `rm -rf node_modules && npm ci`" in r for r in reasons)
    assert any("names no command" in r for r in reasons)
    notes = " ".join(report.notes)  # type: ignore[attr-defined]
    assert "rejected" in notes and "the rules' drafts were kept" in notes
    assert report.bullets and all(b.source != "hybrid-written" for b in report.bullets)  # type: ignore[attr-defined]


def test_a_secret_in_what_the_llm_returns_is_masked_before_it_is_kept() -> None:
    _, _, report = run([f"Install jsdom with `npm install --save-dev jsdom` (token {SECRET}); `npm test` passed."])
    (b,) = report.bullets  # type: ignore[attr-defined]
    assert SECRET not in b.content and "[REDACTED" in b.content
    assert any("masked" in n for n in report.notes)  # type: ignore[attr-defined]


def test_an_empty_answer_drops_the_drafts_as_not_worth_keeping() -> None:
    _, _, report = run([])
    assert report.bullets == []  # type: ignore[attr-defined]
    assert [d.reason for d in report.dropped] == ["LLM: not worth keeping"]  # type: ignore[attr-defined]


def test_nothing_is_taken_from_a_question_and_success_needs_a_success_in_the_episode() -> None:
    episode = "[user] should we set `PORT=8080` in .env?\n[Bash FAILED] npm start\nError: listen EADDRINUSE :::3000"
    assert "only in a question" in check_written("Set `PORT=8080` in .env.", episode)
    assert "no success" in check_written("`npm start` worked after freeing port 3000.", episode)
    assert check_written("`npm start` fails with EADDRINUSE when port 3000 is taken.", episode) == ""


def test_a_convention_said_in_words_stands_on_the_statements_that_say_it_and_on_nothing_else() -> None:
    episode = (
        "[user] In the generated scripts the closing heredoc delimiter must always stand on its own line.\n"
        "[assistant] Understood: the generator writes the closing delimiter on its own line.\n"
        "[user] could the generated scripts also preserve file permissions?"
    )
    assert check_written("In generated scripts the closing heredoc delimiter stands on its own line.", episode) == ""
    assert "nor says what" in check_written("Generated scripts preserve file permissions.", episode)  # asked only
    assert "nor says what" in check_written("The user prefers tabs over spaces in every file.", episode)
