"""The learned ranking's relevance floor (``min_relevance`` in ``ranking_weights.json``), chosen on training
data only: LoCoMo recall@5 of conversations 0-4 (aged protocol, the kept store of ``locomo.py --keep``) with
the learned ranking at each floor given.

    python benchmarks/ranking_floor.py --keep /tmp/ranking/locomo 0.0 0.05 0.07 0.1
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from datetime import timedelta
from pathlib import Path

import locomo
from memx_mcp.usecases.deps import shipped_ranking


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True, help="the store kept by locomo.py / fit_ranking.py")
    parser.add_argument("floors", type=float, nargs="+")
    args = parser.parse_args()
    data = json.loads(locomo.DATA.read_text(encoding="utf-8"))
    convs = [(n, c) for n, c in enumerate(data) if n in locomo.TUNED]
    memory, filled = locomo.open_memory_for("aged", args.keep)
    if not filled:
        raise SystemExit(f"no LoCoMo store in {args.keep}: run locomo.py --keep {args.keep} first")
    clocks = {n: locomo.newest_turn([(n, c)]) + timedelta(days=1) for n, c in convs}
    questions = [(n, q) for n, c in convs for q in c["qa"] if q["category"] in locomo.CATEGORIES]
    for floor in args.floors:
        params = dataclasses.replace(memory.deps.retrieval, ranking=shipped_ranking(), min_relevance=floor)
        hits = locomo.evaluate(locomo.timed_recall(memory, clocks, params), questions)["hits"]
        print(
            f"aged, conversations 0-4, learned {shipped_ranking().version}, min_relevance {floor}: "
            f"r@5 {sum(h[2] for h in hits) / len(questions):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
