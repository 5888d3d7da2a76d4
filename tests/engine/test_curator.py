from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.domain.models import Bullet, KnowledgeType, Section
from memx_mcp.engine.curator import (
    MAX_ORIGIN_CHARS,
    CuratorParams,
    Neighbour,
    confirmations,
    contradiction_evidence,
    decide,
    merge,
    merge_contents,
    recommend,
)
from memx_mcp.memory import Memory

from ..conftest import T0

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


# -- knowledge, not wording (issue 17) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Compile with warnings as errors: `mix compile --warnings-as-errors` (run 4 times in one session).",
            "Compile check: `mix compile --warnings-as-errors` (run 3 times in one session).",
        ),
        (
            "This project uses the `bd` CLI (17 runs in one session), e.g. `bd show spotter-dov`, `bd ready`.",
            "This project uses the `bd` CLI (22 runs in one session), e.g. `bd show spotter-fum`, `bd ready`.",
        ),
        (
            '`mix test` failed 2 times with "Assertion failed": the fixture needs a sandbox.',
            'When `mix test` fails with "Assertion failed": the fixture needs a sandbox; `mix test --seed 0` worked.',
        ),
        ("Seen in session 4d5611e5-241a-462a-8d15-5122611a9569: pin the tool", "Seen in session 12345678-1234: pin it"),
        ("The fix landed in commit 3f2a9c1 of the parser", "The fix landed in commit 9e8d7c6 of the parser"),
        ("The guard in subagent_live.ex:25 fails", "The guard in subagent_live.ex:31:7 fails"),
        ("See line 12 of the parser for the check", "See line 40 of the parser for the check"),
        ("The job ran at 2026-02-12T15:55:10Z and broke", "The job ran at 2026-02-14 09:12 and broke"),
        ("Reproduced 3 times: the cache is stale", "Reproduced 5 times: the cache is stale"),
        ("重试了 3 次才成功", "重试了 5 次才成功"),
        (
            'When `pytest` fails with "3 failed, 10 passed": fix the fixture',
            'When `pytest` fails with "1 failed": fix it',
        ),
    ],
)
def test_repeat_counts_ids_hashes_line_numbers_and_timestamps_are_no_numeric_evidence(a: str, b: str) -> None:
    assert not any("different values" in e for e in contradiction_evidence(a, b))


@pytest.mark.parametrize(
    ("a", "b", "values"),
    [
        ("A Redis pool of 10 connections is enough", "Redis is only stable with a pool of 50 connections", "10 vs 50"),
        ("Set `pool_size: 10` in config/dev.exs", "Set `pool_size: 50` in config/dev.exs", "10 vs 50"),
        ("Build with `make -j 4` on CI", "Build with `make -j 8` on CI", "4 vs 8"),
        ("Use Node 18 for this project (run 3 times in one session)", "Use Node 20 for this project", "18 vs 20"),
        ("タイムアウトは 30 秒に設定する", "タイムアウトは 60 秒に設定する", "30 vs 60"),
    ],
)
def test_different_numbers_for_the_same_subject_are_still_evidence(a: str, b: str, values: str) -> None:
    assert any(values in e for e in contradiction_evidence(a, b))


@pytest.mark.parametrize(
    ("a", "b", "evidence"),
    [
        (
            "The cache server is Memcached 1.6 on port 11211",
            "The cache server is Memcached 1.6 on port 11311",
            "different values: 11211 vs 11311 (Memcached, port)",
        ),
        (
            "The staging Postgres 16 listens on port 5433",
            "The staging Postgres 16 listens on port 5432",
            "different values: 5433 vs 5432 (Postgres, listens, port)",
        ),
    ],
)
def test_the_evidence_pairs_the_value_that_changed_and_names_the_words_as_written(
    a: str, b: str, evidence: str
) -> None:
    """A new user saw "11211 vs 1.6 (memcach, port)": the port paired with the version both sides state, and
    the subject in stems. The counterpart is a value the other side does not share, of the same shape."""
    assert evidence in contradiction_evidence(a, b)


def test_numbers_of_different_subjects_are_no_evidence() -> None:
    assert contradiction_evidence("Keep 3 replicas of the web service", "The web service listens on port 8080") == ()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            'When `npm start` fails with "Error: can\'t find module x": run `npm ci` first.',
            'When `npm start` fails with "Error: module x missing": run `npm ci` first.',
        ),
        ("When `cat .env` fails with `cat: .env: file not found`: copy .env.example", "Copy .env.example to .env"),
        (
            "make fails with Error: target isn't defined. Add the target to the Makefile",
            "Add the target to the Makefile",
        ),
        ("The message 'command not found' means the PATH is wrong", "The message says the PATH is wrong"),
        ('Run `test -f x || echo "doesn\'t exist"` to check the file', "Run `test -f x` to check the file"),
    ],
)
def test_negation_inside_quoted_error_output_is_not_negation(a: str, b: str) -> None:
    assert not any("negation" in e for e in contradiction_evidence(a, b))


def test_a_negation_of_another_point_of_the_same_failure_is_no_evidence() -> None:
    a = 'When `mix test` fails with "no :secret_key_base configuration": The endpoint isn\'t configured for test env.'
    b = (
        'When `mix test` fails with "no :secret_key_base configuration": All renderer tests pass, but the '
        "LiveView tests need the Endpoint properly configured in test mode."
    )
    assert contradiction_evidence(a, b) == ()


def test_a_negated_claim_the_other_side_makes_is_evidence_even_after_quoted_output() -> None:
    a = 'When `npm test` fails with "Cannot find module": the `NODE_PATH` variable is needed.'
    b = 'When `npm test` fails with "Cannot find module": the `NODE_PATH` variable is not needed.'
    assert any("negation" in e and "not" in e for e in contradiction_evidence(a, b))


def test_the_same_lesson_from_two_sessions_merges_and_counts_as_a_confirmation() -> None:
    a = bullet(
        "Compile with warnings as errors: `mix compile --warnings-as-errors` (run 4 times in one session).",
        score=49,
        confidence=0.55,
        origin="session:one",
    )
    b = bullet(
        "Compile check: `mix compile --warnings-as-errors` (run 3 times in one session).",
        score=47,
        confidence=0.5,
        origin="session:two",
    )
    decision = decide(b.content, [Neighbour(a, 0.96)], P)  # their cosine with the shipped model
    assert decision.action == "merge"
    merged = merge(a, b, "keep_best", T0)
    assert merged.origin == "session:one session:two"
    assert confirmations(merged) == 2
    assert merged.confidence == pytest.approx(1 - 0.45 * 0.5)


def test_the_same_lesson_met_again_in_the_same_session_is_no_new_confirmation() -> None:
    a = bullet("Use ruff to lint", confidence=0.5, origin="session:one")
    merged = merge(a, bullet("Use ruff for linting", confidence=0.6, origin="session:one"), "keep_best", T0)
    assert (merged.origin, confirmations(merged), merged.confidence) == ("session:one", 1, 0.6)


def test_a_learned_origin_counts_its_sessions_not_its_words_and_keeps_its_first_provenance() -> None:
    # what the Reflector stamps: key · steps · client; a re-read of the same session cites other steps
    first = bullet("Use ruff to lint", confidence=0.5, origin="session:one · steps 3,4 · claude-code")
    again = merge(
        first, bullet("Use ruff to lint", confidence=0.6, origin="session:one · steps 9 · codex"), "keep_best", T0
    )
    assert (again.origin, confirmations(again), again.confidence) == (first.origin, 1, 0.6)
    other = merge(
        again, bullet("Use ruff to lint", confidence=0.5, origin="session:two · steps 2 · codex"), "keep_best", T0
    )
    assert other.origin == "session:one · steps 3,4 · claude-code · session:two"
    assert confirmations(other) == 2 and other.confidence == pytest.approx(1 - 0.4 * 0.5)
    third = merge(other, bullet("Use ruff to lint", origin="session:three · steps 1 · codex"), "keep_best", T0)
    assert third.origin == "session:one · steps 3,4 · claude-code · session:two session:three"
    assert confirmations(third) == 3
    # an origin an older memx joined word by word still counts its sessions only
    assert confirmations(bullet("x", origin="session:one · steps 3,4 · claude-code session:two 9")) == 2


def test_the_origin_list_stays_within_its_limit_and_keeps_counting() -> None:
    merged = bullet("Use ruff to lint", confidence=0.5, origin="session:" + "0" * 36)
    for i in range(1, 30):
        again = bullet("Use ruff to lint", confidence=0.5, origin=f"session:{i:036d}")
        merged = merge(merged, again, "keep_best", T0)
    assert len(merged.origin) <= MAX_ORIGIN_CHARS
    assert merged.origin.startswith("session:" + "0" * 36)
    assert confirmations(merged) == 30
    assert merged.confidence <= 0.99


def test_merged_content_keeps_file_names_whole() -> None:
    assert merge_contents("Set strict in tsconfig.json.", "Set strict in tsconfig.json. Keep secrets in .env.") == (
        "Set strict in tsconfig.json. Keep secrets in .env."
    )


def test_the_same_lesson_reflected_from_two_sessions_is_stored_once_and_confirmed(memory: Memory) -> None:
    """Through the real write path (LanceDB and the shipped model): before, the two repeat counts read
    as "different values: 4 vs 3", the pair became a contradiction and the lesson was stored twice."""
    first = memory.remember(
        "Compile with warnings as errors: `mix compile --warnings-as-errors` (run 4 times in one session).",
        origin="session:258c7280-ae70-4798-800f-63464d01a85d",
        confidence=0.55,
    )
    again = memory.remember(
        "Compile check: `mix compile --warnings-as-errors` (run 3 times in one session).",
        origin="session:ae4a77f8-aedd-4bc1-888f-c94edc91af04",
        confidence=0.5,
    )
    assert again.action == "merged" and again.merged_into == first.bullet.id
    assert confirmations(again.bullet) == 2
    assert memory.list_conflicts(include_overlaps=True) == []


def test_a_port_on_a_host_name_is_a_value_but_a_line_in_a_source_file_is_not() -> None:
    assert any(
        "5432 vs 6543" in e
        for e in contradiction_evidence("Connect to db.internal:5432", "Connect to db.internal:6543")
    )
    assert contradiction_evidence("The guard in app/models.py:25 fails", "The guard in app/models.py:31 fails") == ()


def test_a_value_contradicted_while_the_old_number_is_still_mentioned_is_a_contradiction() -> None:
    from memx_mcp.engine.curator import contradiction_evidence

    evidence = contradiction_evidence(
        "Set the gunicorn timeout to 30 seconds",
        "Set the gunicorn timeout to 120 seconds, 30 seconds kills slow uploads",
    )
    assert any("30 vs 120" in e for e in evidence), evidence


def test_a_comma_inside_a_number_does_not_end_its_clause() -> None:
    from memx_mcp.engine.curator import contradiction_evidence

    assert any(
        "vs 500" in e
        for e in contradiction_evidence(
            "Keep the Redis pool at 1,000 connections", "Keep the Redis pool at 500 connections"
        )
    )


def test_never_doing_what_the_other_side_recommends_is_a_contradiction_even_across_clauses() -> None:
    from memx_mcp.engine.curator import contradiction_evidence

    evidence = contradiction_evidence(
        "Tabs are always better than spaces in Makefiles", "Never use tabs in Makefiles, spaces are always better"
    )
    assert any("negation" in e for e in evidence), evidence


def test_parallel_facts_about_different_things_are_not_contradictions() -> None:
    """Issue 33: the same template about two entities (two ports, two services, two settings) is not a
    contradiction; a contradiction needs the same subject with another value or the opposite advice."""
    ports = (
        "Port 8000 is taken by the old API container; use `PORT=8001 make dev`",
        "Port 9000 is taken by the old API container; use `PORT=9001 make dev`",
    )
    services = ("dnsmasq's port set to 0 so it no longer answers DNS", "blocky serves port 53 for the whole LAN")
    settings = ("FEATURE_SEARCH is disabled in staging", "FEATURE_BILLING is enabled in staging")
    host = (
        "Port 8501 on this host is already used by the Streamlit dashboard, so the new one runs on 8502",
        "UFW is active on this host and only allowed 22, 443 and 8501",
    )
    for a, b in (ports, services, settings, host):
        assert contradiction_evidence(a, b) == (), (a, b)


def test_the_same_timeout_at_30_s_and_at_60_s_is_still_a_contradiction() -> None:
    evidence = contradiction_evidence(
        "The payments API request timeout is 30 s", "Set the payments API request timeout to 60 s"
    )
    assert any("30 vs 60" in e for e in evidence)
    assert any(
        "opposite advice" in e
        for e in contradiction_evidence("Enable the build cache in CI", "Disable the build cache in CI")
    )
