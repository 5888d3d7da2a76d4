"""Looking inside and fixing by hand: list filters, show, edit, stats with the decay histogram."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memx_mcp.domain.errors import InvalidInputError, NotFoundError
from memx_mcp.engine.decay import DecayParams, decay_histogram
from memx_mcp.memory import Memory

from ..conftest import T0, Clock


def test_decay_histogram_puts_each_bullet_in_its_band() -> None:
    p = DecayParams()
    now = T0 + timedelta(days=400)
    rows = [
        (now - timedelta(days=1), 0),  # protected (new)
        (now - timedelta(days=10), 0),  # 2**(-10/30) = 0.79
        (now - timedelta(days=60), 0),  # 0.25
        (now - timedelta(days=200), 0),  # 0.0098: gc
        (now - timedelta(days=200), 15),  # permanent
    ]
    counts = decay_histogram(rows, now, p)
    assert counts == {
        "permanent": 1,
        "protected (new)": 1,
        "0.8-1.0": 0,
        "0.6-0.8": 1,
        "0.4-0.6": 0,
        "0.2-0.4": 1,
        "0.02-0.2": 0,
        "<0.02 (gc)": 1,
    }


def test_list_filters_by_scope_section_type_and_status(memory: Memory) -> None:
    a = memory.remember("When pytest fails with ImportError, run pip install -e . first").bullet
    b = memory.remember("Prefer ruff format over black in this repository", scope="global").bullet
    memory.remember("The staging database lives in eu-west-1", scope="project:other")
    assert {x.id for x in memory.list_bullets(scope="project:demo")} == {a.id, b.id}
    assert [x.id for x in memory.list_bullets(scope="global")] == [b.id]
    assert [x.id for x in memory.list_bullets(section=a.section.value.lower())] == [a.id]
    assert a.id in {x.id for x in memory.list_bullets(knowledge_type=a.knowledge_type.value)}
    memory.forget([a.id])
    assert [x.id for x in memory.list_bullets(archived=True)] == [a.id]
    with pytest.raises(InvalidInputError, match="unknown section 'NOPE'; one of: COMMANDS"):
        memory.list_bullets(section="NOPE")


def test_show_and_edit(memory: Memory, clock: Clock) -> None:
    b = memory.remember("Use pytest -n auto to run the suite in parallel").bullet
    with pytest.raises(NotFoundError):
        memory.show("b_missing")
    clock.advance(days=40)
    assert memory.weight(memory.show(b.id)) == pytest.approx(2 ** (-40 / 30), abs=1e-3)
    edited = memory.edit(b.id, content="Use uv run pytest -n 8 with token=ghp_" + "a1B2" * 9, tags=["ci", "ci"])
    assert "ghp_" not in edited.content and edited.tags == ("ci",)
    assert edited.created_at == b.created_at and edited.updated_at == clock.now
    hits = memory.recall("uv run pytest workers", reinforce=False).hits
    assert hits[0].bullet.id == b.id and hits[0].bullet.content == edited.content  # re-embedded, findable
    memory.edit(b.id, tags=["xdist"])
    assert memory.recall("uv run pytest workers", reinforce=False).hits[0].bullet.tags == ("xdist",)
    assert memory.recall("uv run pytest xdist", reinforce=False).hits[0].score.l3 > 0  # no stale cached terms
    assert memory.edit(b.id, tags=[]).tags == ()
    with pytest.raises(InvalidInputError, match="give new content, tags"):
        memory.edit(b.id)


def test_stats_carries_the_decay_histogram(memory: Memory, clock: Clock) -> None:
    memory.remember("Use pytest -n auto to run the suite in parallel")
    clock.advance(days=10)
    memory.remember("Prefer ruff format over black in this repository")
    full = memory.store_stats()
    assert full.stats.active == 2
    assert full.decay_histogram["protected (new)"] == 1 and full.decay_histogram["0.6-0.8"] == 1


def test_cjk_share_counts_the_active_bullets_of_every_scope_by_their_script(memory: Memory) -> None:
    memory.remember("部署前必须先运行数据库迁移脚本，否则服务启动会失败")
    memory.remember("本番環境へのデプロイは金曜日の午後には行わないこと", scope="project:other")
    memory.remember("Use `uv sync` after pulling, the lockfile changes often")  # Latin: not counted
    gone = memory.remember("测试环境的缓存每天凌晨两点自动清空").bullet
    memory.forget([gone.id])  # archived: not counted
    assert memory.cjk_share() == (2, 3)
