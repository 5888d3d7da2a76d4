"""Do two versions of memx rank the same? Every ranked list recall gives, with each hit's score breakdown,
for LoCoMo's questions in the aged and bare protocols (the learned ranking and SPEC's blend) and for
`speed.py`-like queries on a store of templated developer bullets, written to a JSON file; ``--compare``
says whether two such files hold the same ids in the same order and the same scores to 1e-9.

    python benchmarks/recall_identity.py --keep /tmp/ident --conversations 0-1 --out new.json
    PYTHONPATH=/tmp/old/src python benchmarks/recall_identity.py --keep /tmp/ident --conversations 0-1 --out old.json
    python benchmarks/recall_identity.py --compare old.json new.json

Every query is asked twice in one process (the second time the caches a recall keeps are warm), and both
answers are written: a cache that changed an answer shows as a difference between the passes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import locomo
from harness import _model_cache, load
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from speed import THINGS, TOOLS, VERBS, bullets


def answers(memory: Memory, asks: list[tuple[str, str]], clock: Any = None) -> list[dict[str, Any]]:
    out = []
    for ranking in ("learned", "spec"):
        deps = memory.deps
        saved = deps.retrieval
        from memx_mcp.usecases.deps import with_learned_ranking

        deps.retrieval = (
            with_learned_ranking(saved) if ranking == "learned" else dataclasses.replace(saved, ranking=None)
        )
        try:
            for attempt in (1, 2):
                for query, scope in asks:
                    if clock is not None:
                        deps.clock = lambda scope=scope: clock(scope)
                    r = memory.recall(query, scope=scope, max_results=10, token_budget=50_000, reinforce=False)
                    out.append(
                        {
                            "ranking": ranking,
                            "pass": attempt,
                            "query": query,
                            "scope": scope,
                            "mode": r.mode,
                            "candidates": r.candidates,
                            "tokens": r.tokens_used,
                            "hits": [[h.bullet.id, h.tokens, dataclasses.asdict(h.score)] for h in r.hits],
                        }
                    )
        finally:
            deps.retrieval = saved
    return out


def locomo_runs(keep: Path, conversations: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for protocol in ("aged", "bare"):
        memory, filled = locomo.open_memory_for(protocol, keep)
        if not filled:
            load(memory, locomo.bare_records(conversations))
        now = locomo.newest_turn(conversations) + locomo.timedelta(days=1)
        clocks = {
            f"project:locomo-{n}": locomo.newest_turn([(n, conv)]) + locomo.timedelta(days=1)
            if protocol == "aged"
            else now
            for n, conv in conversations
        }
        asks = [
            (q["question"], f"project:locomo-{n}")
            for n, conv in conversations
            for q in conv["qa"]
            if q["category"] in locomo.CATEGORIES
        ]
        out[protocol] = answers(memory, asks, clocks.__getitem__)
        print(f"{protocol}: {len(asks)} questions", file=sys.stderr, flush=True)
    return out


def speed_run(keep: Path, size: int, count: int) -> list[dict[str, Any]]:
    home = keep / f"speed{size}"
    filled = (home / "store" / "meta.json").is_file()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "models").exists():
        (home / "models").symlink_to(_model_cache())
    memory = open_memory(Settings(home=home), cwd=home)
    embedder = memory.deps.embedder.get(120.0)
    assert embedder is not None
    if not filled:
        made = bullets(embedder, size, apart=20.0)  # written one after another: each has neighbours in time
        for start in range(0, len(made), 5000):
            memory.store.add(made[start : start + 5000])
        memory.store.optimize()
    rng = random.Random(5)
    asks = [
        (
            f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?",
            f"project:p{rng.randint(0, 4)}",
        )
        for _ in range(count)
    ]
    now = datetime(2026, 1, 10, tzinfo=UTC)  # a fixed clock: decay and recency the same in every run
    return answers(memory, asks, lambda scope: now)


def compare(a: dict[str, Any], b: dict[str, Any], tolerance: float) -> int:
    """How many answers differ (ids, order, tokens, mode, candidates, or a score beyond ``tolerance``)."""
    differ = total = 0
    worst = 0.0
    for part in a:
        left, right = a[part], b[part]
        if part == "locomo":
            pairs = [(x, y) for p in left for x, y in zip(left[p], right[p], strict=True)]
        else:
            pairs = list(zip(left, right, strict=True))
        for x, y in pairs:
            total += 1
            same = [h[0] for h in x["hits"]] == [h[0] for h in y["hits"]] and all(
                x[k] == y[k] for k in ("query", "scope", "ranking", "mode", "candidates", "tokens")
            )
            for hx, hy in zip(x["hits"], y["hits"], strict=False):
                same = same and hx[1] == hy[1]
                for k, v in hx[2].items():
                    gap = abs(v - hy[2][k])
                    worst = max(worst, gap)
                    same = same and gap <= tolerance
            if not same:
                differ += 1
                if differ <= 5:
                    print(
                        "differs:",
                        x["ranking"],
                        x["pass"],
                        x["query"],
                        [h[0] for h in x["hits"]],
                        [h[0] for h in y["hits"]],
                    )
    print(f"{total} answers compared, {differ} differ; largest score difference {worst:.3g}")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="where the stores are made once and reused")
    parser.add_argument("--conversations", default="0-1")
    parser.add_argument("--speed-size", type=int, default=10_000)
    parser.add_argument("--speed-queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        raise SystemExit(1 if compare(a, b, args.tolerance) else 0)
    if args.keep is None or args.out is None:
        parser.error("--keep and --out (or --compare)")
    first, last = (int(x) for x in args.conversations.split("-"))
    data = json.loads(locomo.DATA.read_text())
    conversations = [(n, data[n]) for n in range(first, last + 1)]
    result = {"locomo": locomo_runs(args.keep / "locomo", conversations)}
    result["speed"] = speed_run(args.keep, args.speed_size, args.speed_queries)
    args.out.write_text(json.dumps(result))
    # the warm pass of this run against its cold pass
    for part, rows in [*((f"locomo {p}", r) for p, r in result["locomo"].items()), ("speed", result["speed"])]:
        cold = [r for r in rows if r["pass"] == 1]
        warm = [r for r in rows if r["pass"] == 2]
        print(part, end=": ")
        compare({"x": cold}, {"x": warm}, 0.0)


if __name__ == "__main__":
    main()
