"""Recall reads a bullet with the bullets written next to it, and the time a question names."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memx_mcp.engine.retrieval.when import named_spans
from memx_mcp.memory import Memory

from ...conftest import Clock

NOW = datetime(2024, 1, 17, 15, 30, tzinfo=UTC)  # a Wednesday


def _import(memory: Memory, rows: list[tuple[str, str, str]]) -> None:
    lines = [
        json.dumps({"id": i, "content": text, "scope": "project:demo", "created_at": at, "updated_at": at})
        for i, text, at in rows
    ]
    assert memory.import_records(lines).errors == []


def test_a_reply_that_shares_no_word_with_the_question_is_found_through_the_turn_it_answers(memory: Memory) -> None:
    _import(
        memory,
        [
            ("b_q", "Mel: what did you end up painting for the art show?", "2026-01-01T10:00:00+00:00"),
            ("b_a", "Caroline: a sunrise over the lake, in oils", "2026-01-01T10:00:30+00:00"),
            ("b_x", "Caroline: the art show tickets sold out on Friday", "2026-01-01T12:00:00+00:00"),
            ("b_y", "Caroline: the paint on the porch is peeling", "2026-01-01T16:00:00+00:00"),
            ("b_z", "Mel: I painted the fence on Sunday", "2026-01-01T22:00:00+00:00"),
        ],
    )
    hits = [h.bullet.id for h in memory.recall("What did Caroline paint for the art show?").hits]
    # above the bullets that share a word with the question (the porch, the fence) without answering it
    assert hits.index("b_a") < min(hits.index("b_y"), hits.index("b_z"))
    shown = {h.bullet.id: h.bullet.content for h in memory.recall("What did Caroline paint for the art show?").hits}
    assert shown["b_a"] == "Caroline: a sunrise over the lake, in oils"  # the context is searched, never shown


def test_bullets_written_hours_apart_are_not_each_others_context(memory: Memory) -> None:
    _import(
        memory,
        [
            ("b_q", "Mel: what did you end up painting for the art show?", "2026-01-01T10:00:00+00:00"),
            ("b_a", "Caroline: a sunrise over the lake, in oils", "2026-01-01T14:00:00+00:00"),
        ],
    )
    assert memory.store.adjacent(["b_q", "b_a"], 3600.0) == {"b_q": [], "b_a": []}
    assert [b.id for b in memory.store.adjacent(["b_q"], 5 * 3600.0)["b_q"]] == ["b_a"]


def test_bullets_of_one_creation_time_are_a_batch_without_neighbours(memory: Memory) -> None:
    at = "2026-01-01T10:00:00+00:00"  # an import of notes, a reflection's lessons: written together, in no order
    _import(memory, [("b_1", "Use ruff to lint", at), ("b_2", "Deploys run on Fridays", at), ("b_3", "Use uv", at)])
    assert memory.store.adjacent(["b_1", "b_2", "b_3"], 3600.0) == {"b_1": [], "b_2": [], "b_3": []}


def test_a_question_naming_a_month_prefers_what_was_written_then_over_newer_bullets(
    memory: Memory, clock: Clock
) -> None:
    _import(
        memory,
        [
            ("b_may", "Deployed the billing service to the new cluster", "2023-05-12T09:00:00+00:00"),
            ("b_aug", "Deployed the billing service to the new cluster again", "2023-08-20T09:00:00+00:00"),
        ],
    )
    clock.now = datetime(2023, 9, 1, tzinfo=UTC)
    assert memory.recall("Which service did we deploy in May 2023?").hits[0].bullet.id == "b_may"
    assert memory.recall("Which service did we deploy?").hits[0].bullet.id == "b_aug"  # otherwise the newer


def test_dates_in_a_question_are_read_as_spans_of_creation_time() -> None:
    def days(query: str) -> list[tuple[str, str]]:
        return [(s.start.date().isoformat(), s.end.date().isoformat()) for s in named_spans(query, NOW)]

    assert days("what did we ship on October 13, 2023?") == [("2023-10-13", "2023-10-14")]
    assert days("the 1st of February, 2023 outage") == [("2023-02-01", "2023-02-02")]
    assert days("the 2023-05-07 deploy") == [("2023-05-07", "2023-05-08")]
    assert days("what changed in Dec 2023") == [("2023-12-01", "2024-01-01")]
    assert days("what did I fix yesterday") == [("2024-01-16", "2024-01-17")]
    assert days("what did we decide last week") == [("2024-01-08", "2024-01-15")]
    assert days("the bug from last month") == [("2023-12-01", "2024-01-01")]
    assert days("the weekend before April 10, 2023, not last week") == [("2023-04-10", "2023-04-11")]
    assert days("what happened in June") == []  # no year: too little to rank by
    assert days("the 31 February 2023 release") == [("2023-02-01", "2023-03-01")]  # no such day: its month
