"""Recall on a team store (LanceDB on S3) next to the local store, in the same run.

The S3 server is moto's (the `moto[server]` package of the dev extra) in a process of its own on
127.0.0.1: every request is a real HTTP round trip, though a far faster one than to a cloud region. The
same 10k bullets (speed.py's templates and vectors) go once into a personal store on the local disk and
once into a team store on the S3 server (with an empty personal store beside it, as a team member's
machine has); the same queries are recalled in-process as the MCP server runs them (query embedded,
recall counts written after the answer), after one warm-up recall. Cold open: a new store object (no
cache) opened and its in-memory copy loaded, as a process starting does; median of three.

    python benchmarks/team_store.py [--size 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.lance.routed import RoutedStore
from memx_mcp.compose import open_memory, open_store
from memx_mcp.config import Settings
from memx_mcp.domain.models import Bullet
from memx_mcp.memory import Memory
from speed import THINGS, TOOLS, VERBS, bullets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

SCOPES = [f"project:p{i}" for i in range(5)]


def fill(store: LanceStore, all_bullets: list[Bullet]) -> None:
    for start in range(0, len(all_bullets), 2000):
        store.add(all_bullets[start : start + 2000])
    store.optimize()


def percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values) * 1000, values[int(0.95 * (len(values) - 1))] * 1000


def timed_recalls(memory: Memory, queries: list[str], rng: random.Random) -> list[float]:
    memory.recall(queries[0], scope=SCOPES[1])  # warm: the copy loaded, the first query embedded
    times = []
    for q in queries:
        start = time.perf_counter()
        result = memory.recall(q, scope=rng.choice(SCOPES))
        times.append(time.perf_counter() - start)
        assert result.hits, q
    memory.flush()
    return times


def cold_open(open_one: Callable[[], LanceStore | RoutedStore]) -> float:
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        store = open_one()
        store.warm()
        runs.append(time.perf_counter() - start)
        if isinstance(store, RoutedStore):
            store.close()
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    os.environ.update({"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY})
    server = S3Server().start()
    try:
        bucket = server.bucket()
        work = Path(tempfile.mkdtemp(prefix="memx-team-bench-"))
        local_settings = Settings(home=work / "local")
        team_settings = Settings(
            home=work / "member",
            team_store=f"s3://{bucket}/team",
            team_scopes=", ".join(SCOPES),
            team_s3_endpoint=server.endpoint,
            team_s3_region=REGION,
            team_s3_allow_http=1,
        )
        local = open_memory(local_settings, cwd=work, defer_reinforcement=True)
        member = open_memory(team_settings, cwd=work, defer_reinforcement=True)
        assert isinstance(member.store, RoutedStore) and member.store.team is not None
        embedder = local.deps.embedder.get(60)
        assert embedder is not None
        made = bullets(embedder, args.size)
        start = time.perf_counter()
        fill(local.store.personal if isinstance(local.store, RoutedStore) else local.store, made)
        local_fill = time.perf_counter() - start
        start = time.perf_counter()
        fill(member.store.team, made)
        team_fill = time.perf_counter() - start
        rng = random.Random(3)
        queries = [
            f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?"
            for _ in range(args.queries)
        ]
        local_times = timed_recalls(local, queries, random.Random(4))
        team_times = timed_recalls(member, queries, random.Random(4))
        local_cold = cold_open(lambda: open_store(local_settings))
        team_cold = cold_open(lambda: open_store(team_settings))
        lp, tp = percentiles(local_times), percentiles(team_times)
        print(
            f"{args.size} bullets, {args.queries} queries; stored in {local_fill:.1f} s local, {team_fill:.1f} s on S3"
        )
        print(f"local store:        recall p50 {lp[0]:.1f} ms, p95 {lp[1]:.1f} ms; cold open + copy {local_cold:.2f} s")
        print(f"team store (moto):  recall p50 {tp[0]:.1f} ms, p95 {tp[1]:.1f} ms; cold open + copy {team_cold:.2f} s")
        print(f"team / local:       p50 {tp[0] / lp[0]:.2f}x, p95 {tp[1] / lp[1]:.2f}x")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
