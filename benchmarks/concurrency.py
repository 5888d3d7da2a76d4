"""Many writers on one store: N processes (default 8) for T seconds (default 60), each alternating
`remember` of a distinct fact and `recall`, on one data folder. Reports the writes per second the store
held, the p50/p95 latency of each operation under that load, and checks that every acknowledged write is
present exactly once afterwards.

    python benchmarks/concurrency.py [--processes 8] [--seconds 60]
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import shutil
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).parent / "data" / "locomo" / "locomo10.json"


def facts() -> list[str]:
    conversations = json.loads(DATA.read_text(encoding="utf-8"))
    return [
        t["text"]
        for c in conversations
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
        if len(t["text"]) > 60
    ]


def worker(home: str, n: int, seconds: float, texts: list[str], out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from memx_mcp.compose import open_memory
    from memx_mcp.config import Settings

    memory = open_memory(Settings(home=Path(home), scope="project:load"), cwd=Path(home))
    memory.embedder.get(120.0)
    out.put(("ready", n, 0.0, ""))
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < seconds and i < len(texts):
        t = time.perf_counter()
        r = memory.remember(f"worker {n}: {texts[i]}")
        out.put(("remember", n, time.perf_counter() - t, r.merged_into or r.bullet.id))
        t = time.perf_counter()
        memory.recall(texts[i][:60])
        out.put(("recall", n, time.perf_counter() - t, ""))
        i += 1
    out.put(("done", n, 0.0, ""))


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="memx-load-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    texts = facts()
    share = len(texts) // args.processes
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=worker, args=(home, n, args.seconds, texts[n * share : (n + 1) * share], queue))
        for n in range(args.processes)
    ]
    for p in procs:
        p.start()
    ready = 0
    while ready < args.processes:
        if queue.get()[0] == "ready":
            ready += 1
    start = time.monotonic()
    latencies: dict[str, list[float]] = {"remember": [], "recall": []}
    acked: list[str] = []
    done = 0
    while done < args.processes:
        kind, _, seconds, bullet = queue.get()
        if kind == "done":
            done += 1
        elif kind in latencies:
            latencies[kind].append(seconds)
            if bullet:
                acked.append(bullet)
    elapsed = time.monotonic() - start
    for p in procs:
        p.join()
    from memx_mcp.adapters.lance.lance import LanceStore

    store = LanceStore(Path(home) / "store", "sentence-transformers/all-MiniLM-L6-v2", 384)
    ids = [b.id for b in store.all_bullets()]
    store.optimize()
    print(f"{args.processes} processes for {elapsed:.0f} s on one store")
    print(
        f"writes acknowledged: {len(latencies['remember'])} = {len(latencies['remember']) / elapsed:.1f} writes/s; "
        f"recalls: {len(latencies['recall'])}"
    )
    for kind, values in latencies.items():
        print(f"{kind}: p50 {pct(values, 0.5):.0f} ms, p95 {pct(values, 0.95):.0f} ms, max {max(values) * 1000:.0f} ms")
    missing = set(acked) - set(ids)
    print(
        f"acknowledged writes missing afterwards: {len(missing)}; duplicated ids: {len(ids) - len(set(ids))}; "
        f"compaction after the run: ok"
    )


if __name__ == "__main__":
    main()
