"""What the learned ranking's scope statistics cost (``usecases/recall.visible_stats``): building them for one
LoCoMo conversation's visible scopes, then reading them back while the store is unchanged (kept by the
store's generation, or by its scope and status counts where the store has no generation).

    python benchmarks/scope_stats_cost.py --keep /tmp/rank7/locomo [--conversation 2]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import locomo
from memx_mcp.usecases.recall import STATS, visible_stats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True, help="the store kept by locomo.py / fit_ranking.py")
    parser.add_argument("--conversation", type=int, default=2)
    args = parser.parse_args()
    memory, filled = locomo.open_memory_for("bare", args.keep)
    if not filled:
        raise SystemExit(f"no LoCoMo store in {args.keep}: run locomo.py --keep {args.keep} first")
    scopes = memory.resolve_scope(f"project:locomo-{args.conversation}").visible()
    for attempt in range(3):
        memory.deps.caches.pop(STATS, None)
        t = time.perf_counter()
        stats = visible_stats(memory.deps, scopes)
        built = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        kept = visible_stats(memory.deps, scopes)
        again = (time.perf_counter() - t) * 1000
        print(
            f"{stats.documents} bullets: built in {built:.1f} ms, read back in {again:.2f} ms "
            f"({'kept' if kept is stats else 'rebuilt'}), attempt {attempt + 1}",
            flush=True,
        )


if __name__ == "__main__":
    main()
