"""Where one recall's wall time goes, in-process and through the MCP server's own code, at 10k bullets on
`speed.py`'s store with the learned ranking: each part timed with ``time.perf_counter`` around the functions
a recall calls (wrapped here, not changed), median over the queries; then the server's part of a tool call
(the answer's pydantic model, its JSON dump and text, the thread hop) measured the same way in-process; then
a cProfile of the use case.

    cd benchmarks && python recall_spans.py [--size 10000] [--queries 200] [--profile]

Spans nest: "use case" holds everything below it but "answer"; "scoring" is the engine's own work after the
candidates are gathered (both passes, the learned features, the fusion, the packing).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import functools
import gc
import os
import pstats
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import anyio

from memx_mcp.compose import open_memory
from memx_mcp.engine.retrieval import generator
from memx_mcp.presentation import render
from memx_mcp.presentation.schemas import RecallOut
from memx_mcp.server.app import _result
from memx_mcp.usecases import recall as recall_case
from speed import THINGS, TOOLS, VERBS, build_bullets, floor, served

SPANS: dict[str, list[float]] = defaultdict(list)
_open: dict[str, float] = {}


@contextlib.contextmanager
def span(name: str) -> Iterator[None]:
    t = time.perf_counter()
    try:
        yield
    finally:
        _open[name] = _open.get(name, 0.0) + time.perf_counter() - t


def wrap(owner: Any, attr: str, name: str) -> None:
    inner = getattr(owner, attr, None)
    if inner is None:  # (another version of memx: not there)
        return

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        with span(name):
            return inner(*args, **kwargs)

    setattr(owner, attr, timed)


def close() -> None:
    for name, seconds in _open.items():
        SPANS[name].append(seconds)
    _open.clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="also a cProfile of the use case")
    parser.add_argument("--stdio", action="store_true", help="also the same queries through a spawned memx-mcp")
    parser.add_argument("--switch", type=float, help="sys.setswitchinterval for the run (seconds)")
    args = parser.parse_args()
    if args.switch:
        sys.setswitchinterval(args.switch)
    built, made = build_bullets(args.size)
    built.flush()
    rng = random.Random(3 + args.size)
    queries = [
        f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(args.queries)
    ]
    scopes = [f"project:p{rng.randint(0, 4)}" for _ in queries]
    # as the server runs it: a Memory opened afresh on the store (its caches empty), the learned ranking,
    # every query once; the first waits for the model and is not timed
    settings = dataclasses.replace(built.settings, ranking="learned")
    memory = open_memory(settings, cwd=settings.home, defer_reinforcement=True, warm=True)
    memory.recall(queries[0], scope="project:p1")
    store = memory.deps.store
    # what the store does for the engine (the embedding's wait is inside "vector wait")
    for attr, name in (
        ("keyword_search", "keyword_search"),
        ("vector_candidates", "vector_candidates"),
        ("similarities", "similarities"),
        ("adjacent", "adjacent"),
        ("prepare_vector_search", "store: prepare the vector search"),
    ):
        wrap(store, attr, name)
    wrap(recall_case, "visible_stats", "visible_stats")
    from memx_mcp.adapters.lance import vectors

    wrap(vectors.VectorIndex, "bullets", "store: rows made Bullets")
    wrap(vectors, "nearest", "store: vector scan (nearest)")
    wrap(vectors.VectorIndex, "lexical_search", "store: lexical index search")
    wrap(generator, "_profile", "term profiles")
    wrap(generator._Scoring, "score", "score (both passes)")
    wrap(generator.QueryFeatures, "rank_best", "rank_best")
    wrap(generator, "bm25_stats", "bm25_stats (candidates)")
    wrap(generator, "named_spans", "named_spans")
    wrap(generator, "_keyword", "keyword candidates (engine)")
    wrap(generator, "pack", "pack")
    wrap(generator, "_gather", "gather (keyword, vector wait, vector)")  # (before r8)
    wrap(generator, "_vector_gather", "vector gather (vector wait, vector)")
    deps = memory.deps
    real_pool = deps.embedding_pool

    arrived = [0.0]

    class Waited:
        def __init__(self, future: Any) -> None:
            self.future = future

        def result(self) -> Any:
            with span("vector wait"):
                got = self.future.result()
            arrived[0] = time.perf_counter()
            return got

    class Pool:
        def submit(self, fn: Any, *a: Any) -> Waited:
            submitted = time.perf_counter()

            def job() -> Any:
                started = time.perf_counter()
                try:
                    return fn(*a)
                finally:
                    _open["embedding: submit to start (thread)"] = started - submitted
                    _open["embedding: start to done (thread)"] = time.perf_counter() - started

            return Waited(real_pool().submit(job))

    deps.embedding_pool = Pool  # type: ignore[method-assign,assignment]

    def answer(result: Any) -> None:
        with span("answer: RecallOut.of"):
            out = RecallOut.of(result)
        with span("answer: text + model_dump"):
            _result(out, render.recall_text)

    hop: list[float] = []

    async def hops() -> None:
        for _ in range(len(queries)):
            t = time.perf_counter()
            await anyio.to_thread.run_sync(lambda: None)
            hop.append(time.perf_counter() - t)

    collected: dict[int, float] = {}

    def collecting(phase: str, info: dict[str, int]) -> None:  # the garbage collector's passes, timed
        if phase == "start":
            collected[-1] = time.perf_counter()
        else:
            _open[f"gc generation {info['generation']}"] = (
                _open.get(f"gc generation {info['generation']}", 0.0) + time.perf_counter() - collected[-1]
            )

    gc.callbacks.append(collecting)
    walls = []
    for q, sc in zip(queries, scopes, strict=True):
        t = time.perf_counter()
        with span("use case"):
            result = memory.recall(q, scope=sc)
        _open["use case after the vector arrived"] = time.perf_counter() - arrived[0]
        walls.append(time.perf_counter() - t)
        answer(result)
        close()
    gc.callbacks.remove(collecting)
    anyio.run(hops)
    scan = floor(memory, made, queries)
    stdio, _ = (
        served(settings.home, queries, random.Random(3 + args.size), settings.model_name) if args.stdio else ([], 0)
    )
    print(f"load {os.getloadavg()}; {args.size} bullets, {len(queries)} queries, learned ranking, medians in ms:")
    print(
        f"  recall (use case) p50 {statistics.median(walls) * 1000:.2f}; floor p50 {statistics.median(scan) * 1000:.2f}"
    )
    if stdio:
        print(f"  recall over stdio p50 {statistics.median(stdio) * 1000:.2f} (other scopes: served() draws its own)")
    for name, values in sorted(SPANS.items(), key=lambda kv: -statistics.median(kv[1])):
        values += [0.0] * (len(queries) - len(values))
        print(f"  {name:40s} {statistics.median(values) * 1000:7.2f}  (mean {statistics.mean(values) * 1000:.2f})")
    print(f"  {'thread hop (anyio.to_thread, empty)':40s} {statistics.median(hop) * 1000:7.2f}")
    if args.profile:
        run: Callable[[], None] = lambda: [memory.recall(q, scope=sc) for q, sc in zip(queries, scopes, strict=True)]  # noqa: E731
        cProfile.runctx("run()", globals(), {"run": run}, "/tmp/memx-spans.prof")
        p = pstats.Stats("/tmp/memx-spans.prof")
        p.sort_stats("tottime").print_stats(25)
        p.sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main()
