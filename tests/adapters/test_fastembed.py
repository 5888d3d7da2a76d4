from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memx_mcp.adapters.fastembed import FastEmbedEmbedder, LazyEmbedder, prepare_shipped_model
from memx_mcp.domain.errors import EmbedderUnavailable


def test_the_shipped_model_gives_unit_vectors_of_384_dimensions(embedder: FastEmbedEmbedder) -> None:
    (v,) = embedder.embed(["Use pytest -n auto to run the suite in parallel"])
    assert len(v) == 384
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-3)


def test_paraphrases_are_closer_than_unrelated_text(embedder: FastEmbedEmbedder) -> None:
    a, b, c = (
        np.array(v)
        for v in embedder.embed(
            [
                "Run the tests in parallel with pytest-xdist",
                "Use pytest -n auto to speed up the test suite",
                "The Redis pool needs 50 connections",
            ]
        )
    )
    assert a @ b > a @ c + 0.2


def test_a_model_file_with_the_wrong_checksum_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        prepare_shipped_model(tmp_path / "cache", source=fake)


def test_a_missing_model_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="missing"):
        prepare_shipped_model(tmp_path / "cache", source=tmp_path / "absent.onnx")


def test_the_model_folder_holds_the_model_and_tokenizer_files(model_dir: Path) -> None:
    names = {p.name for p in model_dir.iterdir()}
    assert {
        "model.onnx",
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
    } <= names


def test_lazy_embedder_reports_a_failed_load_and_returns_none() -> None:
    def broken() -> FastEmbedEmbedder:
        raise EmbedderUnavailable("model file missing")

    lazy = LazyEmbedder(broken, "m")
    assert lazy.get(5.0) is None
    assert "keyword-only" in lazy.note and "model file missing" in lazy.note


def test_lazy_embedder_loads_in_the_background(model_dir: Path) -> None:
    lazy = LazyEmbedder(lambda: FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", model_dir, 384), "m")
    assert lazy.peek() is None  # nothing starts until asked
    lazy.start()
    loaded = lazy.get(60.0)
    assert loaded is not None and lazy.peek() is loaded


def _prepare(cache: str) -> str:
    return str(prepare_shipped_model(Path(cache)))


def test_several_processes_can_prepare_the_model_cache_at_once(tmp_path: Path) -> None:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        folders = pool.map(_prepare, [str(tmp_path / "cache")] * 8)
    assert len(set(folders)) == 1
    names = {p.name for p in Path(folders[0]).iterdir()}
    assert "model.onnx" in names and not any(n.endswith(".tmp") for n in names)


def test_a_call_shared_between_two_sessions_gives_the_vectors_of_one(
    embedder: FastEmbedEmbedder, model_dir: Path
) -> None:
    texts = [
        f"The {name} service needs {n} workers in {env}"
        for n in range(12)
        for name, env in (
            ("billing", "staging"),
            ("search indexer", "production"),
            ("auth", "CI"),
            ("pdf renderer", "the laptops"),
            ("geocoder rate limiter with a long name", "the preview environments"),
            ("ledger", "production"),
        )
    ]
    two = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", model_dir, 384, threads=2)
    assert len(texts) >= 64  # large enough to be shared
    assert two.embed(texts) == embedder.embed(texts)
    assert two.embed(texts[:3]) == embedder.embed(texts[:3])  # a small call runs on one session


def test_texts_sorted_by_tokens_into_batches_get_the_vectors_each_gets_alone(embedder: FastEmbedEmbedder) -> None:
    """``embed`` pads each model batch only to its longest text by putting texts of like token counts
    together: on real texts of mixed lengths (the Curator's pairs and the prompt-floor set, both written for
    memx's benchmarks) the vectors are those of each text embedded on its own, to the last bit, in the
    caller's order."""
    data = Path(__file__).parents[2] / "benchmarks" / "data"
    rows = [json.loads(line) for line in (data / "curator_pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = list(dict.fromkeys(t for r in rows for t in (r["a"], r["b"])))[:160]
    floor = [json.loads(line) for line in (data / "prompt_floor.jsonl").read_text(encoding="utf-8").splitlines()]
    texts += [r[k] for r in floor for k in ("fact", "tune")] + ["x", "a much longer text " * 80]  # 1 to 256 tokens
    lengths = embedder._lengths(texts)
    assert min(lengths) <= 3 and max(lengths) == 256 and lengths != sorted(lengths)  # mixed, truncated, unsorted
    alone = [embedder.embed([t])[0] for t in texts]
    assert embedder.embed(texts) == alone
