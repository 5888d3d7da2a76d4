"""Where a recall's time goes, on the store `speed.py` builds (10k bullets by default), in one process:

1. recall p50 and CPU time per recall with BLAS on one thread (as memx runs it) and on every core
   (numpy's default), in alternating rounds;
2. the CPU time per recall of each thread of the process (BLAS on one thread);
3. a cProfile of the recalls, by own time.

    python benchmarks/profile_recall.py [--size 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import threading
import time
from collections import Counter

from threadpoolctl import threadpool_limits

from memx_mcp.memory import Memory
from speed import THINGS, TOOLS, VERBS, build


def thread_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of each thread of this process, by native id, with its name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        name = names.get(int(tid)) or f"{comm} (native)"
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def timed(memory: Memory, queries: list[str]) -> tuple[float, float]:
    """p50 wall ms and mean CPU ms (all threads) of a recall."""
    times = []
    cpu = time.process_time()
    for q in queries:
        t = time.perf_counter()
        memory.recall(q, scope="project:p1")
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000, (time.process_time() - cpu) / len(queries) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    memory, _ = build(args.size)
    rng = random.Random(3)
    queries = [
        f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(args.queries)
    ]
    memory.recall(queries[0], scope="project:p1")
    cores = os.cpu_count() or 1
    results: dict[str, list[tuple[float, float]]] = {"one": [], "all": []}
    for _ in range(3):
        results["one"].append(timed(memory, queries))  # as memx sets it
        with threadpool_limits(limits=cores, user_api="blas"):
            results["all"].append(timed(memory, queries))
    for label, runs in results.items():
        walls = ", ".join(f"{w:.1f}" for w, _ in runs)
        cpus = ", ".join(f"{c:.1f}" for _, c in runs)
        threads = 1 if label == "one" else cores
        print(f"BLAS on {threads} thread(s): recall p50 {walls} ms; CPU per recall {cpus} ms (three rounds)")

    before = thread_cpu()
    timed(memory, queries)
    after = thread_cpu()
    spent: Counter[str] = Counter()
    for tid, (name, seconds) in after.items():
        spent[name] += seconds - before.get(tid, (name, 0.0))[1]
    print("CPU ms per recall by thread:")
    for name, seconds in spent.most_common():
        if seconds > 0:
            print(f"  {name:<28} {seconds / len(queries) * 1000:6.2f}")

    def run() -> None:
        for q in queries:
            memory.recall(q, scope="project:p1")

    cProfile.runctx("run()", globals(), {"run": run}, "/tmp/memx-recall.prof")
    pstats.Stats("/tmp/memx-recall.prof").sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
