"""Curator and Decay upkeep: conflict scan and resolution, gc and restore, export and import."""

from __future__ import annotations

import json

import pytest

from memx_mcp.domain.errors import InvalidInputError, NotFoundError
from memx_mcp.domain.models import Status
from memx_mcp.memory import Memory
from memx_mcp.usecases import maintenance

from ..conftest import Clock

REDIS_A = "A Redis pool of 10 connections is enough"
REDIS_B = "Redis is only stable with a pool of 50 connections or more"


def test_resolving_keep_b_archives_a(memory: Memory) -> None:
    a = memory.remember(REDIS_A).bullet
    b = memory.remember(REDIS_B).bullet
    (view,) = memory.list_conflicts()
    maintenance.resolve_conflict(memory, view.conflict.id, "b")
    assert memory.store.get([a.id])[0].status is Status.ARCHIVED
    assert memory.store.get([b.id])[0].status is Status.ACTIVE
    assert memory.list_conflicts() == []
    with pytest.raises(InvalidInputError, match="already resolved"):
        maintenance.resolve_conflict(memory, view.conflict.id, "a")


def test_resolving_by_merge_keeps_one_bullet_saying_both(memory: Memory) -> None:
    memory.remember(REDIS_A)
    memory.remember(REDIS_B)
    (view,) = memory.list_conflicts()
    _, merged = maintenance.resolve_conflict(memory, view.conflict.id, "merge")
    assert merged is not None and "10" in merged.content and "50" in merged.content
    assert memory.stats().active == 1


def test_resolving_an_unknown_conflict_is_not_found(memory: Memory) -> None:
    with pytest.raises(NotFoundError):
        maintenance.resolve_conflict(memory, "c_nope", "a")


def test_a_scan_finds_contradictions_imported_without_curation_and_records_them_once(memory: Memory) -> None:
    lines = [
        json.dumps({"id": f"b_{i}", "content": text, "scope": "project:demo"})
        for i, text in enumerate([REDIS_A, REDIS_B, "The staging database lives in eu-west-1"])
    ]
    maintenance.import_records(memory, lines)
    assert memory.list_conflicts() == []  # restored records skip the Curator
    seen: list[tuple[int, int]] = []
    found = maintenance.scan_conflicts(memory, progress=lambda done, total: seen.append((done, total)))
    assert [(c.kind, {c.a_id, c.b_id}) for c in found] == [("contradiction", {"b_0", "b_1"})]
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert maintenance.scan_conflicts(memory) == []


def test_gc_archives_only_what_decayed_below_two_percent_and_purge_erases_only_archived(
    memory: Memory, clock: Clock
) -> None:
    old = memory.remember("The staging database lives in eu-west-1").bullet
    clock.advance(days=200)
    young = memory.remember("Use ruff to lint the code").bullet
    dry = maintenance.gc(memory, dry_run=True)
    assert dry.archived == [old.id] and memory.store.get([old.id])[0].status is Status.ACTIVE
    done = maintenance.gc(memory)
    assert done.archived == [old.id] and done.active_left == 1
    assert memory.recall("staging database region").hits == ()
    purged = maintenance.gc(memory, purge=True)
    assert purged.purged == [old.id] and memory.store.get([old.id]) == []
    assert memory.store.get([young.id])[0].status is Status.ACTIVE


def test_often_recalled_old_bullets_survive_gc(memory: Memory, clock: Clock) -> None:
    b = memory.remember("The staging database lives in eu-west-1").bullet
    memory.store.upsert([b.with_changes(recall_count=15)])
    clock.advance(days=400)
    assert maintenance.gc(memory).archived == []


def test_restore_brings_an_archived_bullet_back_into_recall(memory: Memory, clock: Clock) -> None:
    b = memory.remember("The staging database lives in eu-west-1").bullet
    clock.advance(days=200)
    maintenance.gc(memory)
    restored, missing = maintenance.restore(memory, [b.id, "b_nope"])
    assert restored == [b.id] and missing == ["b_nope"]
    assert memory.recall("staging database region").hits[0].bullet.id == b.id
    assert maintenance.gc(memory).archived == []  # restored knowledge starts a new life


def test_export_then_import_round_trips_every_field_and_is_idempotent(memory: Memory, clock: Clock) -> None:
    memory.remember("Use pytest -n auto to run the suite in parallel", tags=["perf"])
    clock.advance(days=3)
    memory.remember(REDIS_A, scope="global")
    memory.recall("pytest parallel")
    exported = list(maintenance.export(memory, vectors=True))
    for b in memory.store.all_bullets():
        memory.store.delete([b.id])
    first = maintenance.import_records(memory, [json.dumps(r) for r in exported])
    assert first.restored == 2 and first.errors == []
    assert list(maintenance.export(memory, vectors=True)) == exported
    again = maintenance.import_records(memory, [json.dumps(r) for r in exported])
    assert (again.restored, again.skipped_existing) == (0, 2)


def test_import_with_timestamps_builds_an_aged_store(memory: Memory, clock: Clock) -> None:
    record = {
        "content": "The staging database lives in eu-west-1",
        "created_at": "2025-06-01T00:00:00+00:00",
        "recall_count": 3,
    }
    result = maintenance.import_records(memory, [json.dumps(record)])
    assert result.inserted == 1
    (b,) = memory.store.all_bullets()
    assert b.created_at.year == 2025 and b.recall_count == 3 and b.vector is not None


def test_import_without_ids_goes_through_the_curator(memory: Memory) -> None:
    memory.remember("Use pytest -n auto (pytest-xdist) to run the suite in parallel")
    line = json.dumps({"content": "Run the suite in parallel with pytest -n auto; it needs pytest-xdist"})
    assert maintenance.import_records(memory, [line]).merged == 1


def test_bad_import_lines_are_reported_and_skipped(memory: Memory) -> None:
    lines = ["{not json", json.dumps({"content": ""}), json.dumps([1]), json.dumps({"content": "ok fact here"})]
    result = maintenance.import_records(memory, lines)
    assert result.inserted == 1 and len(result.errors) == 3
    assert result.errors[0].startswith("line 1:")


def test_merge_content_combines_both_texts_deterministically(memory: Memory) -> None:
    memory.curator_params = memory.curator_params.__class__(strategy="merge_content")
    memory.settings = memory.settings.replace(reflector_mode="rules")
    first = memory.remember("Run the suite in parallel with `pytest -n auto`.")
    merged = memory.remember("Run the suite in parallel with `pytest -n auto`. It needs pytest-xdist.")
    assert merged.action == "merged" and merged.merged_into == first.bullet.id
    assert "needs pytest-xdist" in merged.bullet.content and merged.bullet.vector is not None


def test_merge_content_uses_the_llm_when_available_and_falls_back_when_not(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ..messages_api import MessagesAPI

    memory.curator_params = memory.curator_params.__class__(strategy="merge_content")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback")
    with MessagesAPI("keep").running() as api:
        memory.settings = memory.settings.replace(reflector_mode="hybrid", llm_base_url=api.url)
        memory.remember("Run the suite in parallel with `pytest -n auto`.")
        merged = memory.remember("Run the suite in parallel with `pytest -n auto`. It needs pytest-xdist.")
    assert merged.bullet.content.startswith("LLM merge:") and len(api.requests) == 1
    with MessagesAPI("error").running() as api:
        memory.settings = memory.settings.replace(llm_base_url=api.url)
        memory.remember("Lint the Python code with `ruff check` before every commit.", scope="project:other")
        again = memory.remember(
            "Lint the Python code with `ruff check` before every commit. Ruff is fast.", scope="project:other"
        )
    assert again.action == "merged" and len(api.requests) == 1
    assert again.bullet.content == "Lint the Python code with `ruff check` before every commit. Ruff is fast."


BAD_RECORDS = [
    ('{"content": 5}', "content must be text"),
    ('{"content": "' + "lorem ipsum " * 85_000 + '"}', "the limit is 4000"),
    ('{"content": "nul \\u0000 inside"}', "binary"),
    ('{"content": "many tags", "tags": [' + ",".join(f'"t{i}"' for i in range(10_000)) + "]}", "at most 32"),
    ('{"content": "long id", "id": "' + "b" * 5000 + '"}', "is not an id"),
    ('{"content": "far future", "created_at": "9999-01-01T00:00:00+00:00"}', "outside 2000..2099"),
    ('{"content": "nan vector", "vector": [' + ",".join(["NaN"] * 384) + "]}", "not a finite number"),
    ('{"content": "number tags", "tags": [1, 2]}', "tag must be text"),
    ('{"content": "huge count", "recall_count": 1e30}', "recall_count"),
    ('{"content": "bad section", "section": "NOPE"}', "section 'NOPE' is not one of"),
    ('{"content": "bad confidence", "confidence": "high"}', "confidence must be a number"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("not json at all", "not JSON"),
    ('{"content": "\\u200b\\u200b"}', "content is empty"),
]


def test_each_bad_record_is_refused_by_line_with_its_reason_and_the_rest_imported(memory: Memory) -> None:
    good = [
        json.dumps({"content": "Use pytest -n auto (pytest-xdist) to run the suite in parallel"}),
        json.dumps({"content": "Escape \x1b]52;c;ZXZpbA==\x07 stripped: run make lint before pushing"}),
    ]
    lines = [good[0], *(line for line, _ in BAD_RECORDS), good[1]]
    result = maintenance.import_records(memory, lines)
    assert result.inserted == 2 and len(result.errors) == len(BAD_RECORDS)
    for n, (error, (_, reason)) in enumerate(zip(result.errors, BAD_RECORDS, strict=True), 2):
        assert error.startswith(f"line {n}: ") and reason in error, error
    assert memory.stats().total == 2
    assert not any("\x1b" in b.content or "\x07" in b.content for b in memory.store.all_bullets())
