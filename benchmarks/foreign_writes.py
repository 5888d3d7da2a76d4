"""Recall right after another process has written: a store of N bullets built as `speed.py` builds it,
opened twice (two `Memory` objects on one data folder, each with its own in-memory copy, as two clients'
servers are). One remembers a new fact, then the other recalls; the recall's latency is measured three
ways in one run: with no write in between, after a write it catches up with from the change log, and after
a write with the log removed (what every foreign write cost before the log: reloading the whole copy).

    python benchmarks/foreign_writes.py [--size 10000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import random
import time

import speed
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from speed import percentiles


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    reader, _ = speed.build(args.size)
    home = reader.settings.home
    writer = open_memory(Settings(home=home), cwd=home)
    writer.deps.embedder.get(120.0)
    rng = random.Random(5)
    log = home / "store" / "generation.log"
    facts = speed.texts(3 * args.rounds, seed=99)
    timings: dict[str, list[float]] = {
        "no write in between": [],
        "caught up from the log": [],
        "whole copy reloaded": [],
    }
    for _ in range(args.rounds):
        for label in timings:
            if label != "no write in between":
                writer.remember(facts.pop() + " (foreign)", scope="project:p0")
                if label == "whole copy reloaded":
                    log.unlink(missing_ok=True)
            query = f"how do I {rng.choice(speed.VERBS)} the {rng.choice(speed.THINGS)} of {rng.choice(speed.TOOLS)}?"
            start = time.perf_counter()
            reader.recall(query, scope="project:p0", reinforce=False)
            timings[label].append(time.perf_counter() - start)
    for label, values in timings.items():
        print(f"{args.size} bullets, recall {label:24} {percentiles(values)}")


if __name__ == "__main__":
    main()
