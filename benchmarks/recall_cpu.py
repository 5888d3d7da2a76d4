"""CPU and wall time of a scoped recall in-process with the learned ranking, beside the floor (the query's
embedding and a numpy scan of the same vectors), on `speed.py`'s store; then a cProfile of 100 recalls.
Compare two versions by running it with PYTHONPATH pointing at an export of the older ``src``.

    cd benchmarks && N=3000 python recall_cpu.py      # N: bullets (default 10000)
"""

import cProfile
import dataclasses
import os
import pstats
import random
import statistics
import time

from memx_mcp.usecases.deps import shipped_ranking
from speed import THINGS, TOOLS, VERBS, build_bullets, floor

memory, made = build_bullets(int(os.environ.get("N", "10000")))
memory.deps.retrieval = dataclasses.replace(memory.deps.retrieval, ranking=shipped_ranking())
rng = random.Random(3)
queries = [f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(100)]
memory.recall(queries[0], scope="project:p1")


def run():
    for q in queries:
        memory.recall(q, scope="project:p1")


for _round in range(2):
    t = time.perf_counter()
    c = time.process_time()
    run()
    print(
        "recall wall ms",
        (time.perf_counter() - t) * 10,
        "cpu ms",
        (time.process_time() - c) * 10,
        "load",
        os.getloadavg()[0],
    )
    c = time.process_time()
    fl = floor(memory, made, queries)
    print("floor p50 ms", statistics.median(fl) * 1000, "cpu ms", (time.process_time() - c) * 10)
cProfile.runctx("run()", globals(), {"run": run}, "/tmp/memx-recall-cpu.prof")
p = pstats.Stats("/tmp/memx-recall-cpu.prof")
p.sort_stats("tottime").print_stats(30)
p.sort_stats("cumulative").print_stats(60)
