"""Thread CPU (median over 100 scoped queries) of a recall's parts in-process at 10k bullets, learned
ranking, on `speed.py`'s store: the query's embedding, the keyword candidates, the vector candidates, the
engine's recall with the query vector already made, and the whole use case; then a cProfile of the engine's
recall. Thread CPU, not wall: it moves less with the machine's load (the embedding runs on another thread in
a real recall, so the use case's figure leaves it out).

    cd benchmarks && N=10000 python recall_parts.py   # older code: PYTHONPATH=<its src> before it
"""

import contextlib
import cProfile
import dataclasses
import os
import pstats
import random
import statistics
import time
from collections.abc import Callable, Sequence

from memx_mcp.engine.retrieval import RecallRequest
from memx_mcp.engine.retrieval import recall as generate
from memx_mcp.text.tokenize import query_terms
from memx_mcp.usecases.deps import shipped_ranking
from speed import THINGS, TOOLS, VERBS, build_bullets

memory, made = build_bullets(int(os.environ.get("N", "10000")))
deps = memory.deps
deps.retrieval = dataclasses.replace(deps.retrieval, ranking=shipped_ranking())
rng = random.Random(3)
queries = [f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(100)]
memory.recall(queries[0], scope="project:p1")
embedder = deps.embedder.get(60)
assert embedder is not None
vectors = [embedder.embed_queries([q])[0] for q in queries]
store = deps.store
scope = deps.workspace.resolve("project:p1")
scopes = scope.visible()


def median_ms(part: Callable[[str, Sequence[float]], object]) -> float:
    times = []
    for q, v in zip(queries, vectors, strict=True):
        t = time.thread_time()
        part(q, v)
        times.append(time.thread_time() - t)
    return statistics.median(times) * 1000


def engine(q: str, v: Sequence[float]) -> None:
    with getattr(store, "one_read", contextlib.nullcontext)():  # (older code: without it)
        generate(store, RecallRequest(q, scope, 5, 2000, deps.clock()), v, deps.retrieval, [], deps.terms)


print("load", os.getloadavg()[0])
print("embedding", median_ms(lambda q, v: embedder.embed_queries([q])))
print("keyword_search", median_ms(lambda q, v: store.keyword_search(query_terms(q), scopes, 50)))
print("vector_candidates", median_ms(lambda q, v: store.vector_candidates(v, scopes, 50)))
print("engine recall, vector given", median_ms(engine))
print("use case recall (this thread)", median_ms(lambda q, v: memory.recall(q, scope="project:p1")))
every = "[engine(q, v) for q, v in zip(queries, vectors)]"
cProfile.runctx(every, globals(), {"engine": engine}, "/tmp/memx-parts.prof")
pstats.Stats("/tmp/memx-parts.prof").sort_stats("tottime").print_stats(20)
