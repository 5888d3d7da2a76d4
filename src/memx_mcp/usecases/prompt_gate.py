"""The prompt gate's use: which recalled hits are handed back unasked (``engine/retrieval/gate.py``), with
the weights shipped in the package, or the plain floor on the blended score when the setting asks for it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources

from ..domain.models import Hit
from ..engine.retrieval.gate import GateWeights, probabilities
from .deps import Deps


@cache
def shipped_gate() -> GateWeights:
    """The gate's weights shipped in the package (``engine/retrieval/gate_weights.json``), read once."""
    text = resources.files("memx_mcp.engine.retrieval").joinpath("gate_weights.json").read_text("utf-8")
    return GateWeights.from_json(json.loads(text))


def gate_scores(text: str, hits: Sequence[Hit]) -> list[float]:
    """Each hit's probability of being relevant to ``text`` (the hits together: one feature compares them)."""
    return probabilities(text, [(h.bullet.content, h.score.semantic) for h in hits], shipped_gate())


def passing(deps: Deps, text: str, hits: Sequence[Hit]) -> list[Hit]:
    """The hits of ``text`` worth handing back unasked, best first as given."""
    if deps.settings.prompt_gate == "floor":
        return [h for h in hits if h.score.blended >= deps.settings.inject_min_relevance]
    threshold = shipped_gate().threshold
    return [h for h, p in zip(hits, gate_scores(text, hits), strict=True) if p >= threshold]
