"""The seams between the engine and its heavy dependencies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dim`` floats."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


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
