"""Curator thresholds per embedding model and script, calibrated on the tune half of
benchmarks/data/curator_pairs.jsonl; the held-out half is measured with the thresholds stored in
``memx_mcp.domain.catalog`` (run by ``python benchmarks/curator.py --calibrate`` / ``--heldout``).

The rules of the choice, per model and script (Latin: English rows; CJK: Chinese and Japanese rows):
- merges: no distinct, compatible or contradicting pair merged, then as many paraphrases merged as can be;
  among equal choices the middle of the range (a margin on both sides for text not seen here);
- conflicts: the lowest threshold at which at most 3 % of unrelated pairs of each language become an
  overlap (the target is 5 %: the rest is margin for the held-out half)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memx_mcp.domain.catalog import E5_CENTRED, E5_SMALL, MINILM, MODELS, MUSE, CuratorDefaults
from memx_mcp.domain.models import Bullet, KnowledgeType, Section
from memx_mcp.engine.curator import CuratorParams, Neighbour, decide
from memx_mcp.ports import Embedder

DATA = Path(__file__).parent / "data" / "curator_pairs.jsonl"
WORK = Path(__file__).parent / ".work"
SCRIPTS = {"latin": ("en",), "cjk": ("zh", "ja")}
GRID = [round(0.5 + 0.0025 * i, 4) for i in range(201)]
UNRELATED_TUNE_MAX = 0.03


def load_model(name: str) -> Embedder:
    if name in (E5_SMALL, E5_CENTRED):
        from memx_mcp.adapters.e5 import Centring, E5Embedder

        return E5Embedder(centring=Centring.load() if name == E5_CENTRED else None)
    if name == MUSE:
        from memx_mcp.adapters.muse import MuseEmbedder

        return MuseEmbedder()
    from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model

    return FastEmbedEmbedder(MINILM, prepare_shipped_model(WORK), 384)


def bullet(text: str) -> Bullet:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    return Bullet("b_a", text, Section.GENERAL, KnowledgeType.KNOWLEDGE, 50, 1, "manual", "global", now, now)


def pairs(split: str, embedder: Embedder) -> list[dict[str, Any]]:
    """The split's pairs with their cosine, plus its unrelated pairs (kind ``unrelated``)."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["split"] == split]
    texts = sorted({t for r in rows for t in (r["a"], r["b"])})
    vectors = dict(zip(texts, np.asarray(embedder.embed_passages(texts)), strict=True))
    out = [dict(r) for r in rows]
    for lang in ("en", "zh", "ja"):
        mine = [r for r in rows if r["lang"] == lang]
        for x, y in itertools.permutations(mine, 2):
            if x["topic"] != y["topic"] and not {x["a"], x["b"]} & {y["a"], y["b"]}:
                out.append({"kind": "unrelated", "a": x["a"], "b": y["b"], "lang": lang})
    for r in out:
        r["similarity"] = float(vectors[r["a"]] @ vectors[r["b"]])
    return out


def params_of(d: CuratorDefaults) -> CuratorParams:
    return CuratorParams(
        merge_threshold=d.merge_threshold,
        conflict_threshold=d.conflict_threshold,
        merge_certain=d.merge_certain,
        merge_min_overlap=d.merge_min_overlap,
    )


def rate(rows: Sequence[dict[str, Any]], kind: str, lang: str, event: Callable[[Any], bool], p: CuratorParams) -> str:
    group = [r for r in rows if r["kind"] == kind and r["lang"] == lang]
    hit = sum(event(decide(r["b"], [Neighbour(bullet(r["a"]), r["similarity"])], p)) for r in group)
    return f"{hit}/{len(group)} = {hit / max(1, len(group)):.1%}"


def merged(d: Any) -> bool:
    return bool(d.action == "merge")


def flagged(d: Any) -> bool:
    return bool(d.action == "merge" or d.conflicts)


def _middle(values: list[float]) -> float:
    return values[len(values) // 2]


def choose(rows: Sequence[dict[str, Any]], langs: Sequence[str]) -> CuratorDefaults:
    mine = [r for r in rows if r["lang"] in langs]
    wrong = [r for r in mine if r["kind"] in ("distinct", "compatible", "contradiction")]
    para = [r for r in mine if r["kind"] == "paraphrase"]

    def merges(group: Sequence[dict[str, Any]], p: CuratorParams) -> int:
        return sum(merged(decide(r["b"], [Neighbour(bullet(r["a"]), r["similarity"])], p)) for r in group)

    def score(t: float, c: float) -> int:
        p = CuratorParams(merge_threshold=t, conflict_threshold=min(t, 0.5), merge_certain=c)
        return -1 if merges(wrong, p) else merges(para, p)

    def false_overlaps(x: float, lang: str) -> float:
        group = [r for r in mine if r["kind"] == "unrelated" and r["lang"] == lang]
        return sum(r["similarity"] >= x for r in group) / max(1, len(group))

    best_c = max(score(c, c) for c in GRID)
    certain = _middle([c for c in GRID if score(c, c) == best_c])
    conflict = next((x for x in GRID if all(false_overlaps(x, lang) <= UNRELATED_TUNE_MAX for lang in langs)), certain)
    conflict = min(conflict, certain)
    between = [t for t in GRID if conflict <= t <= certain]  # a merge below the conflict threshold means nothing
    best_t = max(score(t, certain) for t in between)
    threshold = _middle([t for t in between if score(t, certain) == best_t])
    return CuratorDefaults(threshold, conflict, certain, 0.5)


def report(rows: Sequence[dict[str, Any]], found: dict[str, CuratorDefaults], title: str) -> None:
    print(f"\n{title}")
    print(
        "| lang | distinct merged | compatible merged | unrelated flagged | paraphrases merged | contradictions found |"
    )
    print("|---|---|---|---|---|---|")
    for script, langs in SCRIPTS.items():
        p = params_of(found[script])
        for lang in langs:
            cells = [
                rate(rows, "distinct", lang, merged, p),
                rate(rows, "compatible", lang, merged, p),
                rate(rows, "unrelated", lang, flagged, p),
                rate(rows, "paraphrase", lang, merged, p),
                rate(rows, "contradiction", lang, flagged, p),
            ]
            print(f"| {lang} | " + " | ".join(cells) + " |")


def calibrate(names: Sequence[str] = (MINILM, E5_SMALL)) -> None:
    for name in names:
        rows = pairs("tune", load_model(name))
        found = {script: choose(rows, langs) for script, langs in SCRIPTS.items()}
        print(f"\n## {name}: chosen on the tune half")
        for script, d in found.items():
            print(f"{script}: {d}")
        report(rows, found, f"{name}, tune half, with the thresholds chosen (tuned data: no evidence)")


def heldout(names: Sequence[str] = (MINILM, E5_SMALL)) -> None:
    for name in names:
        spec = MODELS[name]
        rows = pairs("heldout", load_model(name))
        found = {"latin": spec.curator, "cjk": spec.curator_cjk}
        print(f"\n## {name}: stored defaults {found}")
        report(rows, found, f"{name}, held-out half, measured once")
