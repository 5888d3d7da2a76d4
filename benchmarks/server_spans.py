"""Where a recall's time goes inside a real `memx-mcp` over stdio, on `speed.py`'s store (10k bullets, learned
ranking): the server is this script run with ``--serve``, which wraps a few of the server's functions with
``perf_counter`` (the recall itself, the answer's model, text and JSON, the tool call on the event loop) and
writes their medians when stdin closes; beside it, the round trip of a bare MCP server's echo tool (the SDK
and the pipes alone) in the same run.

    cd benchmarks && python server_spans.py [--size 10000] [--queries 100]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

SPANS: dict[str, list[float]] = defaultdict(list)


def serve(out: Path) -> None:
    """The server, its functions timed."""
    import atexit

    import memx_mcp.server.app as app
    from memx_mcp.memory import Memory
    from memx_mcp.presentation.schemas import RecallOut

    def dump() -> None:
        lines = [f"{k}\t{statistics.median(v) * 1000:.3f}\t{statistics.mean(v) * 1000:.3f}" for k, v in SPANS.items()]
        out.write_text("\n".join(lines) + "\n")

    atexit.register(dump)

    def timed(inner: Any, key: str) -> Any:
        @functools.wraps(inner)
        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                SPANS[key].append(time.perf_counter() - t)

        return wrapper

    def timed_async(inner: Any, key: str) -> Any:
        @functools.wraps(inner)
        async def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return await inner(*a, **k)
            finally:
                SPANS[key].append(time.perf_counter() - t)

        return wrapper

    Memory.recall = timed(Memory.recall, "Memory.recall (worker thread)")  # type: ignore[method-assign]
    app._result = timed(app._result, "the answer's text and model_dump")
    of = RecallOut.of.__func__  # type: ignore[attr-defined]
    RecallOut.of = classmethod(timed(of, "RecallOut.of"))  # type: ignore[method-assign,assignment]
    app._run = timed_async(app._run, "_run: roots, thread hop, the call, the answer")
    app.MemxServer.call_tool = timed_async(app.MemxServer.call_tool, "call_tool (event loop)")  # type: ignore[method-assign]
    app.main([])


def round_trips(command: list[str], env: dict[str, str], calls: list[dict[str, Any]]) -> list[float]:
    from harness import INITIALIZE, receive, send

    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        send(proc, INITIALIZE)
        receive(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for n, params in enumerate(calls, start=2):
            t = time.perf_counter()
            send(proc, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            answer = receive(proc, n)
            assert not answer["result"].get("isError"), answer
            if n > 2:  # the first call waits for the model
                times.append(time.perf_counter() - t)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(120)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    from speed import THINGS, TOOLS, VERBS, build_bullets, floor

    memory, made = build_bullets(args.size)
    memory.flush()
    rng = random.Random(13)
    queries = [
        f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?"
        for _ in range(args.queries + 1)
    ]
    calls = [{"name": "recall", "arguments": {"query": q, "scope": f"project:p{rng.randint(0, 4)}"}} for q in queries]
    out = Path(tempfile.mkdtemp(prefix="memx-spans-")) / "spans.tsv"
    home = memory.settings.home
    env = {
        **os.environ,
        "MEMX_HOME": str(home),
        "MEMX_MODEL_NAME": memory.settings.model_name,
        "MEMX_RANKING": "learned",
    }
    load = os.getloadavg()[0]
    stdio = round_trips([sys.executable, __file__, "--serve", str(out)], {**env, "PWD": str(home)}, calls)
    bare = round_trips(
        [sys.executable, str(Path(__file__).parent / "bare_server.py")],
        env,
        [{"name": "echo", "arguments": {"text": "x" * 3000}}] * len(calls),
    )
    scan = floor(memory, made, queries)
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}; {args.size} bullets, {args.queries} recalls, learned ranking")
    served, bottom = statistics.median(stdio) * 1000, statistics.median(scan) * 1000
    print(f"  recall over stdio p50 {served:.2f} ms; floor p50 {bottom:.2f} ms ({served / bottom:.2f}x)")
    print(f"  bare MCP server, echo of 3,000 characters, p50 {statistics.median(bare) * 1000:.2f} ms")
    for line in out.read_text().splitlines():
        name, p50, mean = line.split("\t")
        print(f"  {name:50s} p50 {p50} ms (mean {mean})")


if __name__ == "__main__":
    main()
