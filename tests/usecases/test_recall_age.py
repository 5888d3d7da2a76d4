"""Relevance first, age second (issue 28): an old relevant bullet is still found, and gc still forgets
what SPEC §6 says. A real LanceDB in tmp_path, the real offline model, through the Memory facade."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from pathlib import Path

import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.models import Status
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder

from ..conftest import Clock

OLD = "The staging database lives in the eu-west-1 region, behind the bastion host"
QUESTION = "which region is the staging database in"

TOOLS = ("ruff", "mypy", "pytest", "docker", "pnpm", "cargo", "terraform", "alembic", "celery", "nginx")
DOINGS = (
    "needs the cache cleared after a version bump",
    "runs faster with its daemon kept warm",
    "reads its settings from pyproject.toml",
    "fails on CI when the lock file is stale",
    "should be pinned to a minor version",
    "prints more detail with the verbose flag",
    "writes its logs to the project folder",
    "keeps one config file per service",
    "was upgraded last sprint without trouble",
    "is the team's choice over the older tool",
)
PLACES = ("in the web app", "for the billing service")


def newer_unrelated() -> list[str]:
    """200 distinct bullets about other things (a few share a word with the question: "database")."""
    texts = [f"{t} {d} {p}" for t, d, p in itertools.product(TOOLS, DOINGS, PLACES)]
    texts[::25] = [f"alembic migrations for the database {d}" for d in DOINGS[:8]]
    return texts


def aged_store(memory: Memory, clock: Clock) -> str:
    """The relevant bullet written, never recalled, then 120 days of other bullets."""
    old = memory.remember(OLD).bullet.id
    clock.advance(days=120)
    records = []
    for i, text in enumerate(newer_unrelated()):
        created = (clock.now - timedelta(days=100 * i / 200)).isoformat()  # from 100 days ago until today
        records.append(
            {
                "id": f"b_new{i:03d}",
                "content": text,
                "scope": "project:demo",
                "created_at": created,
                "updated_at": created,
            }
        )
    result = memory.import_records(json.dumps(r) for r in records)
    assert not result.errors and result.restored == 200
    return old


def test_a_relevant_bullet_120_days_old_comes_first_among_200_newer_unrelated_ones(
    memory: Memory, clock: Clock
) -> None:
    old = aged_store(memory, clock)
    hits = memory.recall(QUESTION, reinforce=False).hits
    assert hits[0].bullet.id == old
    assert hits[0].score.decay == pytest.approx(2**-4)  # its weight on the curve is what SPEC §6 says
    assert hits[0].bullet.recall_count == 0


def test_with_specs_full_decay_multiplier_the_newer_ones_bury_it(
    tmp_path: Path, store: LanceStore, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    """The failure of issue 28, kept as the proof that the test above tests something."""
    settings = Settings(home=tmp_path / "home", scope="project:demo", decay_share=1.0, recency_boost=1.2)
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=tmp_path)
    old = aged_store(memory, clock)
    hits = memory.recall(QUESTION, reinforce=False).hits
    assert old not in [h.bullet.id for h in hits[:1]]


def test_gc_still_archives_by_the_curve_of_spec_6(memory: Memory, clock: Clock) -> None:
    old = aged_store(memory, clock)
    assert old not in memory.gc(dry_run=True).archived  # 120 days: weight 0.0625, above 0.02
    clock.advance(days=50)  # 170 days: 2 ** (-170 / 30) = 0.0197
    assert memory.gc().archived == [old]
    assert memory.store.get([old])[0].status is Status.ARCHIVED
    assert old not in [h.bullet.id for h in memory.recall(QUESTION, reinforce=False).hits]


def test_a_bullet_recalled_and_used_keeps_its_weight(memory: Memory, clock: Clock) -> None:
    b = memory.remember(OLD).bullet
    for _ in range(5):
        memory.recall(QUESTION)
    clock.advance(days=30)
    hit = memory.recall(QUESTION).hits[0]
    assert hit.bullet.id == b.id and hit.score.decay == pytest.approx(0.75)  # SPEC §6: 30 days, 5 recalls
    assert hit.score.decay_effect == pytest.approx(1 - 0.05 * 0.25)
