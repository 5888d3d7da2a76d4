"""What reading each candidate's neighbours in time costs a recall: the `speed.py` store with its bullets
written ``--apart`` seconds one after another (so every bullet has neighbours), recalls with the context
(the shipped default) and without it (``context_window`` 0) in alternating rounds in one process, so that
other load on the machine falls on both alike. Wall p50 and CPU time per recall for each.

    python benchmarks/context_cost.py [--size 10000] [--queries 200] [--apart 30]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time

from speed import THINGS, TOOLS, VERBS, build


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--apart", type=float, default=30.0)
    args = parser.parse_args()
    memory, _ = build(args.size, args.apart)
    rng = random.Random(3)
    queries = [
        (f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?", f"project:p{i % 5}")
        for i in range(args.queries)
    ]
    shipped = memory.retrieval_params
    variants = {"with context (shipped)": shipped, "without context": dataclasses.replace(shipped, context_window=0)}
    wall: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, float] = dict.fromkeys(variants, 0.0)
    candidates: dict[str, int] = dict.fromkeys(variants, 0)
    memory.recall(queries[0][0], scope="project:p1", reinforce=False)  # warm
    for k in range(0, len(queries), 20):
        for name, params in variants.items():
            memory.retrieval_params = params
            for q, scope in queries[k : k + 20]:
                t, c = time.perf_counter(), time.process_time()
                result = memory.recall(q, scope=scope, reinforce=False)
                wall[name].append(time.perf_counter() - t)
                cpu[name] += time.process_time() - c
                candidates[name] += result.candidates
    print(f"{args.size} bullets written {args.apart:g} s apart, {len(queries)} queries")
    print("| recall | p50 | p95 | CPU per recall | candidates scored |")
    print("|---|---|---|---|---|")
    for name in variants:
        times = sorted(wall[name])
        p95 = times[int(len(times) * 0.95)]
        print(
            f"| {name} | {statistics.median(times) * 1000:.1f} ms | {p95 * 1000:.1f} ms | "
            f"{cpu[name] / len(times) * 1000:.1f} ms | {candidates[name] / len(times):.0f} |"
        )


if __name__ == "__main__":
    main()
