"""The batched write path of `memx import`: each batch embedded in one call, curated against the store and
the records before it, stored in one commit, with the decisions of one write at a time."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.lance.rows import as_stored, bullets_table, table_to_bullets
from memx_mcp.config import Settings
from memx_mcp.domain.models import Bullet, KnowledgeType, Section, Status
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder
from memx_mcp.usecases import maintenance

from ..conftest import MODEL, T0, Clock

REDIS_A = "A Redis pool of 10 connections is enough"
REDIS_B = "Redis is only stable with a pool of 50 connections or more"
PARALLEL = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"
PARALLEL_AGAIN = "Run the suite in parallel with pytest -n auto; it needs pytest-xdist"


def another_memory(tmp_path: Path, name: str, embedder: FastEmbedEmbedder) -> Memory:
    settings = Settings(home=tmp_path / name, scope="project:demo")
    store = LanceStore(settings.home / "store", MODEL, 384)
    return Memory(settings, store, ReadyEmbedder(embedder), clock=Clock(), cwd=tmp_path)


def lines_of(texts: list[str]) -> list[str]:
    return [json.dumps({"content": t}) for t in texts]


def state(memory: Memory) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The stored bullets and conflict records, by content (each store makes its own ids)."""
    bullets = memory.store.all_bullets()
    content = {b.id: b.content for b in bullets}
    kept = {(b.content, b.scope, b.recall_count, b.confidence, b.origin, b.tags, b.status) for b in bullets}
    conflicts = {
        (content[c.a_id], content[c.b_id], c.kind, c.evidence, c.similarity)
        for c in memory.store.conflicts(sorted({b.scope for b in bullets}))
    }
    return kept, conflicts


SERVICES = (
    "billing api, checkout, search indexer, auth gateway, email sender, ledger, geocoder, pdf renderer, audit log, "
    "rate limiter, chat relay, image resizer, cron scheduler, session store, metrics exporter, docs site"
).split(", ")
SETTINGS_ = [
    ("connection pool size", "connections", (10, 20, 50)),
    ("request timeout", "seconds", (5, 30, 120)),
    ("memory limit", "MB", (256, 512, 2048)),
    ("log retention", "days", (7, 30, 90)),
]
TOOLS = [
    ("pytest -x", "stop at the first failing test"),
    ("ruff check --fix", "fix lint findings"),
    ("npm ci", "install what the lock file pins"),
    ("alembic upgrade head", "apply the pending migrations"),
    ("docker compose up -d", "start the local databases"),
    ("terraform plan", "preview infrastructure changes"),
]


def mixed(n: int, seed: int) -> list[str]:
    """Facts, with paraphrases, repeats and contradictions of facts met earlier, in two scopes."""
    rng = random.Random(seed)
    earlier: list[tuple[str, str, str, str | None]] = []
    records = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.25 and earlier:
            text, same, against, scope = rng.choice(earlier)
            text = rng.choice((same, text, against))
        else:
            service = rng.choice(SERVICES)
            scope = "global" if rng.random() < 0.15 else None
            if rng.random() < 0.5:
                name, unit, values = rng.choice(SETTINGS_)
                value, other = rng.sample(values, 2)
                text = f"Set the {name} of the {service} to {value} {unit}"
                same = f"The {service} needs its {name} at {value} {unit}"
                against = f"Set the {name} of the {service} to {other} {unit}"
            else:
                command, why = rng.choice(TOOLS)
                text = f"Run `{command}` to {why} in the {service} repository"
                same = f"In the {service} repository, `{command}` is how to {why}"
                against = f"Never run `{command}` to {why} in the {service} repository"
            earlier.append((text, same, against, scope))
        records.append(json.dumps({"content": text, **({"scope": scope} if scope else {})}))
    return records


def test_a_near_duplicate_inside_one_file_merges_as_one_write_at_a_time_would(
    memory: Memory, tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    lines = lines_of(["The staging database lives in eu-west-1", PARALLEL, PARALLEL_AGAIN])
    batched = maintenance.import_records(memory, lines)
    assert (batched.inserted, batched.merged) == (2, 1)
    (merged,) = [b for b in memory.store.all_bullets() if "pytest" in b.content]
    assert merged.recall_count == 1  # the second record counted as a reinforcement of the first
    reference = another_memory(tmp_path, "reference", embedder)
    maintenance.import_records(reference, lines, one_by_one=True)
    assert state(memory) == state(reference)


def test_a_contradicting_pair_inside_one_file_is_flagged(memory: Memory) -> None:
    result = maintenance.import_records(memory, lines_of([REDIS_A, "Lint with ruff before pushing", REDIS_B]))
    assert (result.inserted, result.merged) == (3, 0)
    (view,) = memory.list_conflicts()
    assert {view.a.content, view.b.content} == {REDIS_A, REDIS_B}
    assert view.conflict.kind == "contradiction" and any("10 vs 50" in e for e in view.conflict.evidence)


def test_a_bad_line_in_the_middle_is_reported_by_number_and_loses_nothing_else(
    memory: Memory, tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    good = mixed(120, seed=3)
    lines = [*good[:70], '{"content": "bad confidence", "confidence": "high"}', *good[70:]]
    result = maintenance.import_records(memory, lines, batch=32)
    assert result.errors == ["line 71: confidence must be a number, not str"]
    assert result.inserted + result.merged == 120
    reference = another_memory(tmp_path, "reference", embedder)
    maintenance.import_records(reference, good, batch=32, one_by_one=True)
    assert state(memory) == state(reference)


def test_batched_and_one_by_one_imports_leave_the_same_bullets_and_conflicts(
    memory: Memory, tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    prefill, lines = mixed(40, seed=1), mixed(300, seed=2)
    reference = another_memory(tmp_path, "reference", embedder)
    for m in (memory, reference):
        maintenance.import_records(m, prefill)
    batched = maintenance.import_records(memory, lines, batch=64)
    one_by_one = maintenance.import_records(reference, lines, batch=64, one_by_one=True)
    assert batched == one_by_one
    assert batched.merged > 20 and batched.inserted > 100  # the set holds both kinds of decision
    kept, conflicts = state(memory)
    assert {c[2] for c in conflicts} == {"contradiction", "overlap"}
    assert (kept, conflicts) == state(reference)


def test_after_a_batch_the_in_memory_copy_matches_the_table(memory: Memory, settings: Settings) -> None:
    maintenance.import_records(memory, mixed(150, seed=4), batch=50)
    probe = memory.embed_texts(["Set the request timeout of the ledger to 30 seconds"])[0]
    assert probe is not None
    reopened = LanceStore(settings.home / "store", MODEL, 384)  # its copy is read from the table
    for scope in ("project:demo", "global"):
        kept = [(b.id, round(s, 5)) for b, s in memory.store.similar(probe[0], [scope], 20)]
        assert kept == [(b.id, round(s, 5)) for b, s in reopened.similar(probe[0], [scope], 20)]


def test_a_staged_bullet_reads_back_as_the_table_gives_it() -> None:
    from datetime import timedelta, timezone

    bullet = Bullet(
        "b_1",
        "Set the pool to 10",
        Section.GENERAL,
        KnowledgeType.KNOWLEDGE,
        61.123456,
        0.87654321,
        "import",
        "project:demo",
        T0.astimezone(timezone(timedelta(hours=2))),
        T0,
        tags=("redis",),
        last_recalled_at=T0,
        recall_count=3,
        status=Status.ACTIVE,
        vector=tuple(0.1 + i / 1000 for i in range(384)),
    )
    (read,) = table_to_bullets(bullets_table([bullet], 384))
    staged = as_stored(bullet)
    assert staged == read and staged.vector == read.vector and staged.created_at.utcoffset() == timedelta(0)


def test_import_progress_counts_lines_up_to_the_total(memory: Memory) -> None:
    seen: list[tuple[int, int]] = []
    lines = mixed(70, seed=5)
    maintenance.import_records(memory, lines, batch=30, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(30, 70), (60, 70), (70, 70)]
