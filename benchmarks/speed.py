"""Speed and memory of recall and remember at 1k, 10k and 100k bullets.

Bullets are developer knowledge written from templates (commands, errors, configs, tools; varied words
and numbers). To keep the build of a 100k store within minutes, 2,000 of them are embedded with the
shipped model and the others take the vector of one of those plus small noise (re-normalised): the
indexes see realistic vector geometry, and every query is embedded for real. Queries are paraphrase-like
questions. Reported: p50/p95 of `recall` in-process as the MCP server runs it (query embedding included;
recall counts are written in batches on a background thread after the answer), with the learned ranking and
with SPEC's blend (alternating query by query), the floor (the query's embedding and a numpy scan of the same
vectors for the top 5), of `remember`; then
p50/p95 of `recall` through a real `memx-mcp` process over stdio (JSON-RPC written and read as a client
does) on the same store, and that server's peak RSS (VmHWM: its own high-water mark, the figure a user
sees; the benchmark process itself also holds the 100k bullets it built).

    python benchmarks/speed.py [--sizes 1000,10000,100000] [--queries 200] [--apart SECONDS] [--models minilm,e5]

``--models minilm,e5`` measures both models in one run, one after the other at each size, on the same
queries and scopes (each model its own store, built with its own vectors).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import resource
import statistics
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from harness import INITIALIZE, SERVER, fresh_memory, receive, send
from memx_mcp.domain.catalog import E5_SMALL, MINILM, MUSE, spec
from memx_mcp.domain.models import Bullet, KnowledgeType, Section
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder
from memx_mcp.usecases.deps import with_learned_ranking

TOOLS = "pytest docker redis npm git nginx postgres kafka celery django react vite cargo terraform kubectl uv".split()
VERBS = "run set use avoid enable disable pin raise lower restart clear rebuild".split()
THINGS = "cache pool timeout worker queue port index migration build image token proxy lockfile branch".split()
TEMPLATES = [
    "When {tool} fails with {Err}Error on the {thing}, {verb} the {thing} with `{tool} --{flag} {n}`",
    "{verb} the {thing} of {tool} to {n} in config/{tool}.toml because the {thing2} times out",
    "Use `{tool} {flag} {n}` to {verb} the {thing} faster in CI",
    "The {thing} of the {tool} service must stay at {n}; lower values break the {thing2}",
    "{tool}: {verb} the {thing} before deploying, otherwise {Err}Error appears in the {thing2} logs",
]


def texts(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append(
            rng.choice(TEMPLATES).format(
                tool=rng.choice(TOOLS),
                verb=rng.choice(VERBS),
                thing=rng.choice(THINGS),
                thing2=rng.choice(THINGS),
                flag=rng.choice(["workers", "max-size", "retries", "jobs", "timeout"]),
                n=rng.randint(2, 9000),
                Err=rng.choice(["Timeout", "Connection", "Import", "Value", "Key"]),
            )
            + f" (#{i})"
        )
    return out


def percentiles(values: list[float]) -> str:
    values = sorted(values)
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {values[int(0.95 * (len(values) - 1))] * 1000:.1f} ms"


MODELS = {"minilm": MINILM, "e5": E5_SMALL, "use": MUSE}


def bullets(embedder: Embedder, size: int, apart: float = 0.0) -> list[Bullet]:
    """``size`` bullets in five project scopes: 2,000 texts embedded for real, the others a vector of one of
    those plus small noise. ``apart``: seconds between two bullets' creation times (0: all created at once,
    as by an import; more: written one after another, so that each has neighbours in time that recall reads
    as its context)."""
    pool = np.asarray(embedder.embed_passages(texts(min(size, 2000), seed=1)), dtype=np.float32)
    rng = np.random.default_rng(0)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i, text in enumerate(texts(size, seed=2)):
        v = pool[i % len(pool)] + rng.normal(scale=0.02, size=pool.shape[1]).astype(np.float32)
        v /= np.linalg.norm(v)
        out.append(
            Bullet(
                f"b_{i:07d}",
                text,
                Section.GENERAL,
                KnowledgeType.KNOWLEDGE,
                50,
                1,
                "import",
                f"project:p{i % 5}",
                now + timedelta(seconds=apart * i),
                now + timedelta(seconds=apart * i),
                tools=(text.split()[1],),
                vector=tuple(v.tolist()),
            )
        )
    return out


def build(size: int, apart: float = 0.0, model: str = "minilm") -> tuple[Memory, list[str]]:
    """A fresh store of ``bullets(size, apart)`` made with ``model``, and their texts."""
    memory, made = build_bullets(size, apart, model)
    return memory, [b.content for b in made]


def build_bullets(size: int, apart: float = 0.0, model: str = "minilm") -> tuple[Memory, list[Bullet]]:
    name = MODELS[model]
    memory = fresh_memory(defer_reinforcement=True, model_name=name, model_dim=spec(name).dim)  # as the server runs it
    embedder = memory.deps.embedder.get(60)
    assert embedder is not None, memory.deps.embedder.note
    made = bullets(embedder, size, apart)
    for start in range(0, len(made), 5000):
        memory.store.add(made[start : start + 5000])
    memory.store.optimize()
    return memory, made


def floor(memory: Memory, made: list[Bullet], queries: list[str]) -> list[float]:
    """The floor recall is measured against: one query embedding and a numpy scan of the same vectors
    (the top 5 by cosine of the whole store, no scope, no keywords, no ranking)."""
    embedder = memory.deps.embedder.get(60)
    assert embedder is not None
    matrix = np.array([b.vector for b in made], dtype=np.float32)
    times = []
    for q in queries:
        t = time.perf_counter()
        v = np.asarray(embedder.embed_queries([q])[0], dtype=np.float32)
        sims = matrix @ v
        top = np.argpartition(-sims, 5)[:5]
        top[np.argsort(-sims[top])]
        times.append(time.perf_counter() - t)
    return times


def served(home: Path, queries: list[str], rng: random.Random, model: str) -> tuple[list[float], float]:
    """``recall`` through a spawned ``memx-mcp`` over stdio; the server's peak RSS in MB at the end."""
    env = {**os.environ, "MEMX_HOME": str(home), "MEMX_MODEL_NAME": model, "MEMX_RANKING": "learned"}
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home
    )
    try:
        send(proc, INITIALIZE)
        receive(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for n, q in enumerate([queries[0], *queries], start=2):  # the first call waits for the model: not timed
            t = time.perf_counter()
            args = {"query": q, "scope": f"project:p{rng.randint(0, 4)}"}
            send(
                proc,
                {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "recall", "arguments": args}},
            )
            answer = receive(proc, n)
            assert not answer["result"].get("isError"), answer
            if n > 2:
                times.append(time.perf_counter() - t)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(60)
    return times, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--apart", type=float, default=0.0, help="seconds between bullets' creation times")
    parser.add_argument("--models", "--model", default="minilm", help="comma-separated: minilm, e5, use")
    args = parser.parse_args()
    models = args.models.split(",")
    if unknown := [m for m in models if m not in MODELS]:
        parser.error(f"unknown model {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    for size in (int(s) for s in args.sizes.split(",")):
        for model in models:
            measure(size, model, args.queries, args.apart)


def measure(size: int, model: str, count: int, apart: float) -> None:
    """One store of ``size`` bullets made with ``model``: recall and remember in-process, then over stdio."""
    rng = random.Random(3 + size)  # the same queries and scopes for every model at this size
    start = time.perf_counter()
    memory, made = build_bullets(size, apart, model)
    built = time.perf_counter() - start
    queries = [f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(count)]
    memory.recall(queries[0], scope="project:p1")  # warm
    blend = dataclasses.replace(memory.deps.retrieval, ranking=None)
    learned = with_learned_ranking(memory.deps.retrieval)
    recall: list[float] = []
    spec: list[float] = []
    for n, q in enumerate(queries):  # the learned ranking and SPEC's blend alternate, so that load hits both
        scope = f"project:p{rng.randint(0, 4)}"
        for params, times in ((learned, recall), (blend, spec))[:: 1 if n % 2 else -1]:
            memory.deps.retrieval = params
            t = time.perf_counter()
            memory.recall(q, scope=scope)
            times.append(time.perf_counter() - t)
    memory.deps.retrieval = blend
    scan = floor(memory, made, queries)
    remember = []
    for text in texts(50, seed=size):
        t = time.perf_counter()
        memory.remember(text + " (new)", scope="project:p0")
        remember.append(time.perf_counter() - t)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    memory.flush()
    stdio, server_rss = served(memory.settings.home, queries, rng, memory.settings.model_name)
    print(
        f"{memory.settings.model_name}, {size:>7} bullets (built in {built:.0f} s): recall {percentiles(recall)} "
        f"(SPEC's blend {percentiles(spec)}); floor (query embedding + numpy scan) {percentiles(scan)}; "
        f"remember {percentiles(remember)}; over stdio: recall {percentiles(stdio)} "
        f"= {statistics.median(stdio) / statistics.median(scan):.2f}x the floor's p50, "
        f"server peak RSS {server_rss:.0f} MB (benchmark process {rss:.0f} MB)",
        flush=True,
    )


if __name__ == "__main__":
    main()
