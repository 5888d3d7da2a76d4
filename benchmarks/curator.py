"""The Curator's decisions with a real model, on our own pair sets (benchmarks/data/curator_pairs.jsonl):

- distinct: 42 English, 24 Chinese and 24 Japanese pairs of different facts about one tool (never merge);
- paraphrase: 22 / 16 / 16 pairs saying the same thing in other words (should merge);
- contradiction: 16 pairs that disagree (EN, ZH, JA) and compatible: 28 similar pairs that do not;
- unrelated: every pair of texts of one language from rows of different topics (an overlap is false).

Each row has a ``split``: ``tune`` (the thresholds were calibrated on it) or ``heldout`` (measured once).
For each pair, b is written next to a: the decision is what `curator.decide` returns for their real cosine.

    python benchmarks/curator.py                          # the shipped model on every pair (the first report)
    python benchmarks/curator.py --calibrate              # per model and script, on the tune half
    python benchmarks/curator.py --heldout                # both models' stored defaults, on the held-out half
    python benchmarks/curator.py --calibrate --models use   # other models: minilm, e5, e5c (centred), use
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model
from memx_mcp.domain.models import Bullet, KnowledgeType, Section
from memx_mcp.engine.curator import CuratorParams, Neighbour, contradiction_evidence, decide

DATA = Path(__file__).parent / "data" / "curator_pairs.jsonl"
WORK = Path(__file__).parent / ".work"


def bullet(text: str) -> Bullet:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    return Bullet("b_a", text, Section.GENERAL, KnowledgeType.KNOWLEDGE, 50, 1, "manual", "global", now, now)


def main() -> None:
    embedder = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", prepare_shipped_model(WORK), 384)
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        va, vb = (np.asarray(v) for v in embedder.embed_passages([r["a"], r["b"]]))
        r["similarity"] = float(va @ vb)

    def merges(kind: str, params: CuratorParams) -> tuple[int, int]:
        group = [r for r in rows if r["kind"] == kind]
        merged = sum(
            decide(r["b"], [Neighbour(bullet(r["a"]), r["similarity"])], params).action == "merge" for r in group
        )
        return merged, len(group)

    default = CuratorParams()
    print("## Merges")
    print("| rule | distinct merged | compatible merged | paraphrases merged |")
    print("|---|---|---|---|")
    for name, params in (
        ("cosine ≥ 0.80 alone", CuratorParams(merge_certain=0.8)),
        ("cosine ≥ 0.85 alone", CuratorParams(merge_threshold=0.85, merge_certain=0.85)),
        ("cosine ≥ 0.90 alone", CuratorParams(merge_threshold=0.9, merge_certain=0.9)),
        ("default: ≥ 0.90, or ≥ 0.80 with word overlap ≥ 0.5", default),
    ):
        d, c, p = merges("distinct", params), merges("compatible", params), merges("paraphrase", params)
        print(f"| {name} | {d[0]}/{d[1]} | {c[0]}/{c[1]} | {p[0]}/{p[1]} |")
    for kind in ("distinct", "compatible", "paraphrase"):
        sims = sorted(r["similarity"] for r in rows if r["kind"] == kind)
        print(f"{kind}: cosine min {sims[0]:.3f}, median {sims[len(sims) // 2]:.3f}, max {sims[-1]:.3f}")

    print("\n## Contradictions (contradiction vs compatible pairs)")
    pairs = [r for r in rows if r["kind"] in ("contradiction", "compatible")]
    for label, predict in (
        ("evidence detector alone", lambda r: bool(contradiction_evidence(r["a"], r["b"]))),
        (
            "write path: decide() records a contradiction",
            lambda r: any(
                c.kind == "contradiction"
                for c in decide(r["b"], [Neighbour(bullet(r["a"]), r["similarity"])], default).conflicts
            ),
        ),
    ):
        tp = sum(predict(r) for r in pairs if r["kind"] == "contradiction")
        fp = sum(predict(r) for r in pairs if r["kind"] == "compatible")
        fn = sum(not predict(r) for r in pairs if r["kind"] == "contradiction")
        print(
            f"{label}: precision {tp}/{tp + fp} = {tp / max(1, tp + fp):.3f}, "
            f"recall {tp}/{tp + fn} = {tp / (tp + fn):.3f}"
        )
    missed = [r for r in pairs if r["kind"] == "contradiction" and r["similarity"] < default.conflict_threshold]
    for r in missed:
        print(f"  below the conflict threshold ({r['similarity']:.3f}): {r['a']} | {r['b']}")
    merged_contradictions = [
        r
        for r in pairs
        if r["kind"] == "contradiction"
        and decide(r["b"], [Neighbour(bullet(r["a"]), r["similarity"])], default).action == "merge"
    ]
    print(f"contradicting pairs merged away: {len(merged_contradictions)}")


if __name__ == "__main__":
    import sys

    from curator_calibration import calibrate, heldout
    from memx_mcp.domain.catalog import E5_CENTRED, E5_SMALL, MINILM, MUSE

    short = {"minilm": MINILM, "e5": E5_SMALL, "e5c": E5_CENTRED, "use": MUSE}
    named = sys.argv[sys.argv.index("--models") + 1].split(",") if "--models" in sys.argv else ["minilm", "e5"]
    if "--calibrate" in sys.argv:
        calibrate([short[n] for n in named])
    elif "--heldout" in sys.argv:
        heldout([short[n] for n in named])
    else:
        main()
