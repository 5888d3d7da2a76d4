"""Where a `memx-mcp` server's resident memory goes over its first seconds, on a store of N bullets built
as `speed.py` builds it (then 50 `remember`s, as `speed.py` does before it starts the server). The server's
RSS is sampled every 10 ms from /proc while a client initializes it and calls `recall` 300 times; printed:
a timeline of every change of 25 MB or more, then the peak (VmHWM) and where it settled.

    python benchmarks/server_memory.py [--size 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time
from pathlib import Path

import speed
from harness import INITIALIZE, SERVER, receive, send


def rss_mb(pid: int, field: str = "VmRSS") -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith(field + ":")) // 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    args = parser.parse_args()
    memory, _ = speed.build(args.size)
    for text in speed.texts(50, seed=args.size):
        memory.remember(text + " (new)", scope="project:p0")
    env = {**os.environ, "MEMX_HOME": str(memory.settings.home)}
    proc = subprocess.Popen(
        SERVER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=memory.settings.home,
    )
    start = time.perf_counter()
    samples: list[tuple[float, int]] = []
    events: list[tuple[float, str]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                samples.append((time.perf_counter() - start, rss_mb(proc.pid)))
            except (OSError, StopIteration):
                return
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        send(proc, INITIALIZE)
        receive(proc, 1)
        events.append((time.perf_counter() - start, "initialize answered"))
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n in range(2, 302):
            arguments = {"query": f"how do I clear the cache of redis {n}", "scope": f"project:p{n % 5}"}
            send(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "recall", "arguments": arguments},
                },
            )
            receive(proc, n)
            if n in (2, 301):
                events.append(
                    (time.perf_counter() - start, "first recall answered" if n == 2 else "300th recall answered")
                )
        peak, settled = rss_mb(proc.pid, "VmHWM"), rss_mb(proc.pid)
    finally:
        done.set()
        sampler.join()
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(60)
    pending = iter(events)
    event = next(pending, None)
    last = -100
    for at, mb in samples:
        while event and event[0] <= at:
            print(f"  {event[0]:6.2f} s  -- {event[1]}")
            event = next(pending, None)
        if abs(mb - last) >= 25:
            print(f"  {at:6.2f} s  {mb:5d} MB")
            last = mb
    print(f"{args.size} bullets: server peak RSS {peak} MB, {settled} MB after 300 recalls")


if __name__ == "__main__":
    main()
