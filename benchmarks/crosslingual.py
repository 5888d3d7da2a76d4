"""Cross-language recall: a bullet written in one language found by a question in another
(benchmarks/data/crosslingual_pairs.jsonl: 64 pairs written by us, 16 each of en→ja, ja→en, en→zh and zh→en,
bullet language first; every other row ``heldout``). The 64 bullets share one scope with ~370 distractors,
the texts of the tune half of benchmarks/data/curator_pairs.jsonl (the same developer-tool domain, in the
three languages). recall@5: the share of questions whose bullet memx's recall returns in its top 5; the
vector layer alone in the same run. Nothing was tuned on the held-out half.

    python benchmarks/crosslingual.py [--models minilm,e5]            # the tune half
    python benchmarks/crosslingual.py --heldout                       # the held-out half (measured once)
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from harness import bullet_record, fresh_memory, load, memx, vector
from memx_mcp.domain.catalog import E5_SMALL, MINILM

DATA = Path(__file__).parent / "data"
SCOPE = "project:crosslingual"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--heldout", action="store_true")
    args = parser.parse_args()
    models = {"minilm": MINILM, "e5": E5_SMALL}
    pairs = [json.loads(line) for line in (DATA / "crosslingual_pairs.jsonl").read_text("utf-8").splitlines()]
    curator = [json.loads(line) for line in (DATA / "curator_pairs.jsonl").read_text("utf-8").splitlines()]
    distractors = sorted({t for r in curator if r["split"] == "tune" for t in (r["a"], r["b"])})
    records = [bullet_record(p["id"], p["bullet"], SCOPE) for p in pairs]
    records += [bullet_record(f"d-{i:04d}", t, SCOPE) for i, t in enumerate(distractors)]
    print(f"{len(pairs)} pairs, {len(records)} bullets in one scope")
    print("| model | ranker | split | en→ja | ja→en | en→zh | zh→en | all |")
    print("|---|---|---|---|---|---|---|---|")
    for short in args.models.split(","):
        memory = fresh_memory(model_name=models[short])
        load(memory, records)
        rankers = {
            "memx recall": lambda q, m=memory: memx(m, q, SCOPE, 5),
            "vector alone": lambda q, m=memory: vector(m, q, [SCOPE], 5),
        }
        for ranker, rank in rankers.items():
            for split in ("heldout",) if args.heldout else ("tune",):
                found: dict[str, list[bool]] = defaultdict(list)
                for p in pairs:
                    if p["split"] == split:
                        hit = p["id"] in rank(p["question"])
                        found[f"{p['bullet_lang']}→{p['question_lang']}"].append(hit)
                        found["all"].append(hit)
                cells = [f"{sum(v) / len(v):.3f}" for v in (found[k] for k in ("en→ja", "ja→en", "en→zh", "zh→en"))]
                total = found["all"]
                print(
                    f"| {short} | {ranker} | {split} | " + " | ".join(cells) + f" | {sum(total) / len(total):.3f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
