"""Where a recall's time goes: cProfile of 20 recalls on a 10k-bullet store (random unit vectors, words
from a small developer vocabulary), with and without the synchronous reinforcement write.

    python benchmarks/profile_recall.py
"""

from __future__ import annotations

import cProfile
import pstats
import random
import time
from datetime import UTC, datetime

import numpy as np

from harness import fresh_memory
from memx_mcp.models import Bullet, KnowledgeType, Section

WORDS = (
    "pytest docker redis npm git config timeout pool cache build deploy error fix install migrate schema index "
    "query lint format test suite parallel worker queue port env token proxy nginx postgres kafka celery flask"
).split()


def main() -> None:
    memory = fresh_memory()
    rng = np.random.default_rng(0)
    now = datetime.now(UTC)
    bullets = []
    for i in range(10_000):
        v = rng.normal(size=384).astype(np.float32)
        v /= np.linalg.norm(v)
        text = " ".join(random.Random(i).choices(WORDS, k=12))
        bullets.append(
            Bullet(
                f"b{i}",
                f"Use {text}",
                Section.GENERAL,
                KnowledgeType.KNOWLEDGE,
                50,
                1,
                "import",
                "project:x",
                now,
                now,
                vector=tuple(v.tolist()),
            )
        )
    for k in range(0, len(bullets), 1000):
        memory.store.add(bullets[k : k + 1000])
    memory.store.optimize()
    query = "how to fix the redis pool timeout in docker"
    memory.recall(query, scope="project:x", reinforce=False)
    for reinforce in (False, True):
        start = time.perf_counter()
        for _ in range(20):
            memory.recall(query, scope="project:x", reinforce=reinforce)
        print(f"reinforce={reinforce}: {(time.perf_counter() - start) / 20 * 1000:.1f} ms per recall")
    cProfile.runctx(
        "for _ in range(20): memory.recall(query, scope='project:x', reinforce=False)",
        globals(),
        {"memory": memory, "query": query},
        "/tmp/memx-recall.prof",
    )
    pstats.Stats("/tmp/memx-recall.prof").sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
