"""The prompt gate: is a recalled bullet worth handing back unasked, with a prompt or at the moment of need?

One threshold on the fused score cannot tell "How should I search the codebase for all the TODO comments?"
(the ripgrep bullet is the answer, fused score 0.22) from a pasted build log that shares a dozen words with an
unrelated bullet (0.3). The gate reads five features of each hit, all from what recall already computed (the
hit's cosine similarity) or from the two texts' words (no model, no store access):

- ``semantic``: the hit's cosine similarity to the prompt (MiniLM, with its context's lift);
- ``share``: of the prompt's distinctive terms (``distinctive``: not a common word, not a word every coding
  prompt uses, three characters or more or a CJK bigram, not a bare number), the share the bullet says;
- ``prompt_terms``: log(1 + the prompt's meaningful terms): a long paste matches anything a little;
- ``lead``: how far the hit's similarity stands above the best other hit's (a bullet that is *the* answer
  stands out; a log close to everything does not);
- ``cover``: of the bullet's own distinctive terms, the share the prompt says.

A logistic model over them (standardised, then weighted) gives each hit a probability of being relevant; a
hit is handed back when it reaches the model's threshold. Weights, standardisation and threshold are fitted by
``benchmarks/prompt_gate.py`` on the tune part of the labelled real prompts only, the threshold chosen for at
most 5 % of unrelated prompts injected; they ship in ``gate_weights.json`` beside this file."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...text.tokenize import COMMON_WORDS, is_cjk, query_terms, tokens

FEATURES = ("semantic", "share", "prompt_terms", "lead", "cover")

# Words nearly every coding prompt or lesson says ("the build fails, fix the error in this file"), and a
# prompt's chatter ("continue", "proceed"): a match on them alone says nothing about the subject. Written
# from general knowledge of coding prompts, not from the labelled sets.
GENERIC_WORDS = frozenset(
    """error errors file files run running code test tests fix add use using used new change changes update
    work working works issue problem try check make create build set show find need help want look now see
    also continue proceed resume done ahead good great fine nice start stop wait again next first last""".split()
)


def _meaningful(term: str) -> bool:
    if term in COMMON_WORDS or term in GENERIC_WORDS or term.isdigit():
        return False
    return len(term) >= 3 or is_cjk(term)


def distinctive(text: str) -> list[str]:
    """The terms of ``text`` as a query that can name its subject, in order, each once."""
    return [t for t in query_terms(text) if _meaningful(t)]


def _bullet_terms(text: str) -> frozenset[str]:
    return frozenset(t for t in tokens(text) if _meaningful(t))


def features(prompt: str, hits: Sequence[tuple[str, float]]) -> list[tuple[float, ...]]:
    """``FEATURES`` of each hit, given as (bullet text, cosine similarity to the prompt)."""
    wanted = distinctive(prompt)
    size = math.log1p(len(query_terms(prompt)))
    out: list[tuple[float, ...]] = []
    for i, (text, semantic) in enumerate(hits):
        own = _bullet_terms(text)
        said = {t for t in wanted if t in own}
        others = [s for j, (_, s) in enumerate(hits) if j != i]
        lead = semantic - max(others) if others else semantic
        out.append(
            (
                semantic,
                len(said) / len(wanted) if wanted else 0.0,
                size,
                lead,
                len(said) / len(own) if own else 0.0,
            )
        )
    return out


@dataclass(frozen=True)
class GateWeights:
    """A fitted gate: per-feature mean and scale (standardisation), coefficients, intercept and threshold."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    bias: float
    threshold: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GateWeights:
        names = tuple(data["features"])
        if names != FEATURES:
            raise ValueError(f"gate weights are for features {names}, this memx computes {FEATURES}")
        mean, scale, coef = (tuple(float(x) for x in data[k]) for k in ("mean", "scale", "coef"))
        if not len(mean) == len(scale) == len(coef) == len(FEATURES):
            raise ValueError("gate weights: one mean, scale and coefficient per feature")
        return cls(mean, scale, coef, float(data["bias"]), float(data["threshold"]))

    def probability(self, row: Sequence[float]) -> float:
        z = self.bias + sum(c * (x - m) / s for c, x, m, s in zip(self.coef, row, self.mean, self.scale, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def probabilities(prompt: str, hits: Sequence[tuple[str, float]], weights: GateWeights) -> list[float]:
    """Each hit's probability of being relevant to ``prompt``."""
    return [weights.probability(row) for row in features(prompt, hits)]
