"""The seams between the engine and its heavy dependencies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .domain.models import Bullet, Conflict

EmbedKind = Literal["query", "passage"]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dim`` floats. Queries (what recall searches with) and
    passages (what is stored, and what the Curator compares) are embedded apart: an asymmetric model such
    as e5 marks each with its own prefix; a symmetric one (MiniLM) gives both the same vector."""

    name: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...

    def embed_passages(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


def embed(embedder: Embedder, texts: Sequence[str], kind: EmbedKind) -> list[tuple[float, ...]]:
    return embedder.embed_queries(texts) if kind == "query" else embedder.embed_passages(texts)


class EmbedderSource(Protocol):
    """Hands out the embedder once it is loaded; ``note`` says what happened when it is not."""

    note: str

    def get(self, timeout: float) -> Embedder | None: ...

    def peek(self) -> Embedder | None: ...


@dataclass
class ReadyEmbedder:
    """An embedder that is already loaded (tests, benchmarks, the CLI after a synchronous load)."""

    embedder: Embedder | None
    note: str = ""

    def get(self, timeout: float) -> Embedder | None:
        return self.embedder

    def peek(self) -> Embedder | None:
        return self.embedder


class WriteTarget(Protocol):
    """Where the Curator's write path reads neighbours and stores its decisions: the store itself (one
    write at a time) or a batch staged in memory (``StagedWrite``)."""

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]: ...

    def find_content(self, content: str, scope: str) -> Bullet | None: ...

    def add(self, bullets: Sequence[Bullet]) -> None: ...

    def upsert(self, bullets: Sequence[Bullet]) -> None: ...

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None: ...
