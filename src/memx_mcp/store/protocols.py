"""The seams between the engine and its heavy dependencies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dim`` floats."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...
