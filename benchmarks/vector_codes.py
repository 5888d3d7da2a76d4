"""The vector copy's int8 codes against float32, on the shipped model's vectors: memory, scan time, and
how far the similarities and the top ranks move.

Vectors are made as `speed.py` makes them (2,000 texts embedded with the shipped model, the rest those
vectors plus small noise); 50 queries are embedded for real. Scans run with BLAS on one thread, as memx
runs them.

    python benchmarks/vector_codes.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from harness import fresh_memory
from memx_mcp.adapters.lance.vectors import quantize, scan
from speed import THINGS, TOOLS, VERBS, texts


def p50_ms(run: Callable[[], object], repeat: int = 30) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    threadpool_limits(limits=1, user_api="blas")
    embedder = fresh_memory().deps.embedder.get(120)
    assert embedder is not None
    pool = np.asarray(embedder.embed(texts(2000, seed=1)), dtype=np.float32)
    rng = random.Random(3)
    questions = [f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?" for _ in range(50)]
    queries = np.asarray(embedder.embed(questions), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    noise = np.random.default_rng(0)
    for size in (int(s) for s in args.sizes.split(",")):
        exact = pool[np.arange(size) % len(pool)] + noise.normal(scale=0.02, size=(size, pool.shape[1])).astype(
            np.float32
        )
        exact /= np.linalg.norm(exact, axis=1, keepdims=True)
        codes, scales = quantize(exact)
        errors, top10, top50 = [], [], []
        for q in queries:
            want, got = exact @ q, scan(codes, scales, q)
            errors.append(np.abs(got - want))
            top10.append(len(set(np.argsort(-want)[:10]) & set(np.argsort(-got)[:10])) / 10)
            top50.append(len(set(np.argsort(-want)[:50]) & set(np.argsort(-got)[:50])) / 50)
        error = np.concatenate(errors)
        f32_ms = p50_ms(lambda exact=exact: exact @ queries[0])
        codes_ms = p50_ms(lambda codes=codes, scales=scales: scan(codes, scales, queries[0]))
        coded_mb = (codes.nbytes + scales.nbytes) / 1e6
        print(
            f"{size:>7} vectors: memory float32 {exact.nbytes / 1e6:.1f} MB, codes {coded_mb:.1f} MB; "
            f"scan p50 float32 {f32_ms:.2f} ms, codes {codes_ms:.2f} ms; similarity error mean {error.mean():.5f}, "
            f"max {error.max():.5f}; top-10 overlap {statistics.mean(top10):.3f}, top-50 {statistics.mean(top50):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
