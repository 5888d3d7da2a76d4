from __future__ import annotations

from pathlib import Path

import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.errors import InvalidInputError, InvalidScopeError, NotFoundError
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder

from .conftest import Clock

PYTEST = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"


def test_remember_then_recall_by_paraphrase_returns_it_first_with_a_breakdown(memory: Memory) -> None:
    memory.remember("Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10")
    memory.remember("Prefer ruff format over black in this repository")
    stored = memory.remember(PYTEST)
    result = memory.recall("make the tests run faster")
    assert result.mode == "hybrid"
    assert result.hits[0].bullet.id == stored.bullet.id
    s = result.hits[0].score
    assert s.semantic > 0.2 and s.l1 > 0 and s.scope == 1.3 and s.recency == 1.05
    assert s.final == pytest.approx(s.blended * s.decay_effect * s.recency * s.scope)


def test_a_close_paraphrase_merges_instead_of_inserting(memory: Memory) -> None:
    first = memory.remember(PYTEST)
    again = memory.remember("Run the suite in parallel with pytest -n auto; it needs pytest-xdist")
    assert again.action == "merged"
    assert again.merged_into == first.bullet.id
    assert again.similarity is not None and again.similarity >= 0.8
    assert memory.stats().active == 1
    assert memory.store.get([first.bullet.id])[0].recall_count == 1  # reinforced by the merge


def test_the_redis_contradiction_is_recorded_not_merged(memory: Memory) -> None:
    memory.remember("A Redis pool of 10 connections is enough")
    second = memory.remember("Redis is only stable with a pool of 50 connections or more")
    assert second.action == "inserted_with_conflict"
    assert memory.stats().active == 2
    (view,) = memory.list_conflicts()
    assert view.conflict.kind == "contradiction"
    assert any("10" in e and "50" in e for e in view.conflict.evidence)
    assert view.recommended in ("a", "b", "both")


def test_unrelated_bullets_insert_independently(memory: Memory) -> None:
    memory.remember(PYTEST)
    other = memory.remember("The staging database lives in eu-west-1")
    assert other.action == "inserted" and other.conflicts == ()


def test_new_bullets_go_to_the_project_scope_and_stay_there(memory: Memory) -> None:
    b = memory.remember(PYTEST).bullet
    assert b.scope == "project:demo"
    assert memory.recall("pytest parallel", scope="project:other").hits == ()
    assert memory.recall("pytest parallel", scope="project:demo").hits[0].bullet.id == b.id


def test_a_workspace_bullet_is_invisible_from_its_project_and_global_is_visible_everywhere(
    memory: Memory,
) -> None:
    ws = memory.remember("Feature flag LOGIN_V2 must stay off in this branch", scope="workspace:feat-login").bullet
    glob = memory.remember("Always run ruff before pushing", scope="global").bullet
    assert ws.scope == "project:demo/workspace:feat-login"
    assert memory.recall("LOGIN_V2 flag", scope="project:demo").hits == ()
    assert memory.recall("LOGIN_V2 flag", scope="workspace:feat-login").hits[0].bullet.id == ws.id
    assert memory.recall("ruff before pushing", scope="project:elsewhere").hits[0].bullet.id == glob.id


def test_a_new_bullet_is_returned_by_the_very_next_recall(memory: Memory) -> None:
    for i in range(30):
        memory.remember(f"Service number {i} listens on port {8000 + i}")
    new = memory.remember("The billing worker needs BILLING_QUEUE_URL set")
    assert memory.recall("billing worker queue").hits[0].bullet.id == new.bullet.id


def test_recall_reinforces_what_it_returns(memory: Memory, clock: Clock) -> None:
    b = memory.remember(PYTEST).bullet
    clock.advance(days=1)
    memory.recall("pytest parallel")
    got = memory.store.get([b.id])[0]
    assert got.recall_count == 1 and got.last_recalled_at == clock.now


def test_decay_lowers_old_unused_bullets(memory: Memory, clock: Clock) -> None:
    memory.remember(PYTEST)
    fresh = memory.recall("pytest parallel", reinforce=False).hits[0].score
    clock.advance(days=60)
    old = memory.recall("pytest parallel", reinforce=False).hits[0].score
    assert fresh.decay == 1.0 and old.decay == pytest.approx(0.25)
    assert old.recency == 1.0 and old.final < fresh.final


def test_budget_and_max_results_limit_the_answer(memory: Memory) -> None:
    for port in range(5):
        memory.remember(f"Redis cluster node {port} runs on port {7000 + port} " + "with extra detail " * 20)
    result = memory.recall("redis cluster node port", max_results=3, token_budget=150)
    assert len(result.hits) <= 3
    assert result.tokens_used <= 150
    assert result.omitted_by_budget >= 1


def test_out_of_range_limits_are_clamped_and_said(memory: Memory) -> None:
    memory.remember(PYTEST)
    result = memory.recall("pytest", max_results=-3, token_budget=10**9)
    assert len(result.hits) == 1
    assert any("clamped" in n for n in result.notes)


@pytest.mark.parametrize("text", ["", "   \n\t", "a\x00b", "x" * 4001])
def test_bad_text_is_refused_and_nothing_is_stored(memory: Memory, text: str) -> None:
    with pytest.raises(InvalidInputError):
        memory.remember(text)
    assert memory.stats().total == 0


def test_an_invalid_scope_is_a_clear_error(memory: Memory) -> None:
    with pytest.raises(InvalidScopeError):
        memory.recall("x", scope="team:a")


def test_secrets_are_masked_before_they_are_stored(memory: Memory) -> None:
    b = memory.remember("Deploy with AWS key AKIA2E0A8F3B244C9986 and password=hunter22x").bullet
    assert "AKIA2E0A8F3B244C9986" not in b.content and "hunter22x" not in b.content
    assert "AKIA2E0A8F3B244C9986" not in str(memory.store.all_bullets())


def test_forget_archives_and_purge_erases(memory: Memory) -> None:
    a = memory.remember(PYTEST).bullet
    b = memory.remember("The staging database lives in eu-west-1").bullet
    done = memory.forget([a.id, "b_unknown"])
    assert done.archived == (a.id,) and done.not_found == ("b_unknown",)
    assert memory.recall("pytest parallel").hits == ()
    assert memory.stats().archived == 1
    assert memory.forget([b.id], purge=True).purged == (b.id,)
    assert memory.store.get([b.id]) == []


def test_forgetting_only_unknown_ids_is_not_found(memory: Memory) -> None:
    with pytest.raises(NotFoundError):
        memory.forget(["b_nope"])


def test_forget_by_query_needs_confirmation(memory: Memory) -> None:
    a = memory.remember(PYTEST).bullet
    preview = memory.forget_matching("pytest parallel")
    assert preview.would_forget == (a.id,) and preview.archived == ()
    assert memory.stats().active == 1
    assert memory.forget_matching("pytest parallel", confirm=True).archived == (a.id,)


def test_without_the_model_recall_answers_keyword_only_and_says_so(keyword_memory: Memory) -> None:
    b = keyword_memory.remember(PYTEST)
    assert b.bullet.vector is None and b.notes == ("model file missing",)
    result = keyword_memory.recall("pytest parallel")
    assert result.mode == "keyword-only"
    assert result.hits[0].bullet.id == b.bullet.id
    assert "model file missing" in result.notes


def test_without_the_model_an_exact_duplicate_still_merges(keyword_memory: Memory) -> None:
    keyword_memory.remember(PYTEST)
    assert keyword_memory.remember(PYTEST).action == "merged"


def test_reindex_embeds_bullets_stored_while_the_model_was_away(keyword_memory: Memory, memory: Memory) -> None:
    b = keyword_memory.remember(PYTEST).bullet
    assert memory.reindex() == 1
    assert memory.store.get([b.id])[0].vector is not None
    assert memory.recall("make the tests run faster").mode == "hybrid"


def test_list_conflicts_skips_pairs_with_a_forgotten_side(memory: Memory) -> None:
    memory.remember("A Redis pool of 10 connections is enough")
    second = memory.remember("Redis is only stable with a pool of 50 connections or more").bullet
    memory.forget([second.id])
    assert memory.list_conflicts() == []


def test_overlaps_are_listed_only_when_asked(memory: Memory) -> None:
    memory.remember("Use ruff to lint Python code")
    r = memory.remember("Lint the project with ruff check before each commit")  # cosine 0.62 here
    assert r.action == "inserted_with_conflict"
    assert [v.conflict.kind for v in memory.list_conflicts(include_overlaps=True)] == ["overlap"]
    assert memory.list_conflicts() == []


def test_old_bullets_recalled_fifteen_times_keep_full_weight(memory: Memory, clock: Clock) -> None:
    memory.remember(PYTEST)
    for _ in range(15):
        memory.recall("pytest parallel")
    clock.advance(days=365)
    assert memory.recall("pytest parallel").hits[0].score.decay == 1.0


def test_deferred_reinforcement_is_recorded_after_the_answer(
    settings: Settings, store: LanceStore, embedder: FastEmbedEmbedder, clock: Clock, tmp_path: Path
) -> None:
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=tmp_path, defer_reinforcement=True)
    b = memory.remember(PYTEST).bullet
    for _ in range(3):
        memory.recall("pytest parallel")
    memory.flush()
    assert memory.store.get([b.id])[0].recall_count == 3
    assert memory.recall("pytest parallel", reinforce=False).hits[0].bullet.recall_count == 3  # the copy too


@pytest.mark.parametrize(
    ("method", "mode", "note"),
    [
        ("keyword_search", "hybrid", "full-text layer skipped: OSError"),
        ("vector_candidates", "keyword-only", "vector layer skipped: OSError"),
        ("similarities", "keyword-only", "vector layer skipped: OSError"),
    ],
)
def test_a_failing_layer_is_skipped_and_reported_never_fatal(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, method: str, mode: str, note: str
) -> None:
    b = memory.remember(PYTEST).bullet

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("index file unreadable")

    monkeypatch.setattr(memory.store, method, broken)
    result = memory.recall("pytest parallel")
    assert result.mode == mode
    assert note in result.notes
    assert result.hits[0].bullet.id == b.id


def test_a_long_running_process_builds_the_copy_before_the_model_starts_loading(
    memory: Memory, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memx_mcp.adapters.fastembed import LazyEmbedder
    from memx_mcp.compose import open_memory

    memory.remember("Run `pytest -x` to stop at the first failure")
    order: list[str] = []
    warm = LanceStore.warm
    monkeypatch.setattr(LanceStore, "warm", lambda self: (order.append("copy"), warm(self))[1])
    monkeypatch.setattr(LazyEmbedder, "start", lambda self: order.append("model"))  # (not loaded here)
    warmed = open_memory(settings, warm=True)
    assert order == ["copy", "model"]  # one after the other: their passing memory does not add up
    assert len(warmed.store.active_in(["project:demo"])) == 1
    order.clear()
    open_memory(settings)  # a one-shot command: the model starts loading at once, the copy on first use
    assert order == ["model"]


def test_a_copy_that_cannot_be_built_ahead_does_not_keep_the_memory_from_opening(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memx_mcp.adapters.fastembed import LazyEmbedder
    from memx_mcp.compose import open_memory

    def broken(self: LanceStore) -> None:
        raise OSError("disk read error")

    started: list[bool] = []
    monkeypatch.setattr(LanceStore, "warm", broken)
    monkeypatch.setattr(LazyEmbedder, "start", lambda self: started.append(True))
    assert open_memory(settings, warm=True).store is not None
    assert started == [True]  # the model still loads


OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"


@pytest.mark.parametrize("text", ["\u200b\u200b\u200b", "\u200b \ufeff\u2060\n", "\u00ad\u200d"])
def test_text_made_only_of_invisible_characters_is_empty(memory: Memory, text: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        memory.remember(text)
    assert memory.stats().total == 0


def test_remember_strips_terminal_escapes_from_text_and_tags(memory: Memory) -> None:
    b = memory.remember(f"Run pytest -x {OSC52}to stop at the first failure\x9b2J", tags=[f"ci{OSC52}"]).bullet
    stored = memory.store.get([b.id])[0]
    assert "\x1b" not in stored.content and "\x07" not in stored.content and "\x9b" not in stored.content
    assert stored.content.startswith("Run pytest -x ]52;c;") and stored.tags[0].startswith("ci ]52;c;")
    assert not any(c in t for t in stored.tags for c in "\x1b\x07")


def test_tags_are_checked_like_the_text(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="at most 64"):
        memory.remember(PYTEST, tags=["x" * 65])
    with pytest.raises(InvalidInputError, match="at most 32"):
        memory.remember(PYTEST, tags=[f"t{i}" for i in range(33)])
    with pytest.raises(InvalidInputError, match="must be text"):
        memory.remember(PYTEST, tags=[5])  # type: ignore[list-item]
    token = "ghp_" + "Zx9Qw2Er7Ty4Ui1Op3As5Df6Gh8Jk0Lz1Xc3"
    assert token not in str(memory.remember(PYTEST, tags=[token]).bullet.tags)
