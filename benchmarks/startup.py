"""Start-up latency of the stdio server, measured the way a client sees it.

For each run: spawn `memx-mcp`, write `initialize`, time until its answer arrives; then call `recall`
and time until its answer arrives (this includes opening the store and loading the model, which start
in the background once `initialize` is answered). Each run is paired with one of the floor,
`bare_server.py` (a bare MCP server with one tool on the same SDK), spawned the same way just before it,
and the ratio of the medians is printed. Runs use a data folder that already holds the model cache and a few
bullets (a returning user); `--cold` uses a new folder each run (first use ever: the model file is also
copied and checked).

    python benchmarks/startup.py [--runs 5] [--cold]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import INITIALIZE, SERVER, receive, send

BARE = [sys.executable, str(Path(__file__).parent / "bare_server.py")]


def bare_run(cwd: Path) -> float:
    """Spawn to `initialize` answered for the floor."""
    start = time.perf_counter()
    proc = subprocess.Popen(BARE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    try:
        send(proc, INITIALIZE)
        receive(proc, 1)
        return time.perf_counter() - start
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)


def one_run(home: Path, cwd: Path) -> tuple[float, float, str]:
    env = {**os.environ, "MEMX_HOME": str(home)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    try:
        send(proc, INITIALIZE)
        receive(proc, 1)
        initialized = time.perf_counter() - start
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        t = time.perf_counter()
        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": "make the tests run faster"}},
            },
        )
        answer = receive(proc, 2)
        first_recall = time.perf_counter() - t
        mode = answer["result"]["structuredContent"]["mode"]
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)
    return initialized, first_recall, mode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="a new data folder for every run")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memx-bench-"))
    warm_home = work / "home"
    if not args.cold:  # a returning user: model cached, a few bullets stored
        subprocess.run(
            [
                str(Path(sys.executable).parent / "memx"),
                "--home",
                str(warm_home),
                "remember",
                "Use pytest -n auto (pytest-xdist) to run the suite in parallel",
            ],
            check=True,
            capture_output=True,
            cwd=work,
        )
    inits, recalls, bares, modes = [], [], [], set()
    for i in range(args.runs):
        home = work / f"cold{i}" if args.cold else warm_home
        bares.append(bare_run(work))
        init, recall, mode = one_run(home, work)
        inits.append(init)
        recalls.append(recall)
        modes.add(mode)
    shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {platform.platform()}, {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"runs: {args.runs} ({'cold: new data folder each run' if args.cold else 'warm data folder'})")
    print(
        f"initialize answered after spawn: median {statistics.median(inits):.3f} s  "
        f"(min {min(inits):.3f}, max {max(inits):.3f})"
    )
    print(
        f"the floor, a bare MCP server with one tool: median {statistics.median(bares):.3f} s  "
        f"(min {min(bares):.3f}, max {max(bares):.3f}); memx / floor "
        f"{statistics.median(inits) / statistics.median(bares):.2f}x"
    )
    print(
        f"first recall after initialize (store open + model load): median {statistics.median(recalls):.3f} s  "
        f"(min {min(recalls):.3f}, max {max(recalls):.3f}); mode {', '.join(sorted(modes))}"
    )
    whole = [i + r for i, r in zip(inits, recalls, strict=True)]
    print(
        f"spawn to the first recall answered: median {statistics.median(whole):.3f} s  "
        f"(min {min(whole):.3f}, max {max(whole):.3f})"
    )


if __name__ == "__main__":
    main()
