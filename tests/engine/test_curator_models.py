"""The Curator with each model's calibrated thresholds, through the real write path and the real models.
The sentences are new: not from benchmarks/data/curator_pairs.jsonl (its held-out half stays unseen)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.catalog import E5_SMALL, MINILM
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import Clock

DISTINCT_CJK = [
    ("`git bisect` 可以二分查找引入问题的提交", "`git blame` 显示每一行最后是谁修改的"),
    ("Postgres 的连接数上限由 max_connections 决定", "Postgres 的 WAL 日志用于崩溃后的恢复"),
    ("`npm outdated` 列出有新版本的依赖", "`npm pack` 把包打成一个压缩文件"),
    ("`git bisect` で不具合を入れたコミットを二分探索する", "`git blame` で各行を最後に変えた人がわかる"),
    ("Postgres の同時接続数の上限は max_connections で決まる", "Postgres の WAL はクラッシュ後の復旧に使われる"),
    ("`npm outdated` で新しい版がある依存を一覧する", "`npm pack` でパッケージを一つの圧縮ファイルにする"),
]
PARAPHRASES_CJK = [
    ("生产环境的数据库密码每九十天轮换一次", "生产数据库的密码每隔九十天轮换一次"),
    ("本番データベースのパスワードは九十日ごとに変更する", "本番データベースのパスワードを九十日ごとに変更している"),
]


def _memory(tmp_path: Path, model: str, embedder: Embedder, clock: Clock) -> Memory:
    settings = Settings(home=tmp_path / "home", scope="project:demo", model_name=model)
    return Memory(settings, LanceStore(settings.home / "store", model, 384), ReadyEmbedder(embedder), clock=clock)


@pytest.mark.parametrize(("a", "b"), DISTINCT_CJK)
def test_distinct_cjk_facts_do_not_merge_with_e5(tmp_path: Path, e5: Embedder, clock: Clock, a: str, b: str) -> None:
    memory = _memory(tmp_path, E5_SMALL, e5, clock)
    memory.remember(a)
    assert memory.remember(b).action != "merged"
    assert memory.stats().active == 2


@pytest.mark.parametrize(("a", "b"), DISTINCT_CJK)
def test_distinct_cjk_facts_do_not_merge_with_minilm(
    tmp_path: Path, embedder: FastEmbedEmbedder, clock: Clock, a: str, b: str
) -> None:
    memory = _memory(tmp_path, MINILM, embedder, clock)
    memory.remember(a)
    assert memory.remember(b).action != "merged"


@pytest.mark.parametrize(("a", "b"), PARAPHRASES_CJK)
def test_a_cjk_paraphrase_merges_with_e5(tmp_path: Path, e5: Embedder, clock: Clock, a: str, b: str) -> None:
    memory = _memory(tmp_path, E5_SMALL, e5, clock)
    memory.remember(a)
    assert memory.remember(b).action == "merged"


def test_unrelated_english_bullets_record_no_overlap_with_e5(tmp_path: Path, e5: Embedder, clock: Clock) -> None:
    memory = _memory(tmp_path, E5_SMALL, e5, clock)
    memory.remember("The staging cluster runs Kubernetes 1.29")
    done = memory.remember("Invoices are emailed to customers on the first day of the month")
    assert done.action == "inserted" and not done.conflicts


def test_the_model_thresholds_apply_unless_the_user_sets_one() -> None:
    e5 = Settings(model_name=E5_SMALL)
    assert e5.curator_thresholds().merge_threshold > Settings().curator_thresholds().merge_threshold
    assert e5.curator_thresholds(cjk=True).conflict_threshold > e5.curator_thresholds().conflict_threshold
    mine = Settings(model_name=E5_SMALL, merge_threshold=0.95, merge_certain=0.99)
    assert mine.curator_thresholds().merge_threshold == mine.curator_thresholds(cjk=True).merge_threshold == 0.95
    assert mine.curator_thresholds().conflict_threshold == e5.curator_thresholds().conflict_threshold
