"""Wall time of starting one command, N times (stdin ``{}``): p50 and minimum. What the quick floor figures of
``docs/notes/r6-hooklat.md`` were taken with (the load first, then each command in turn).

    python benchmarks/spawn_floor.py [--runs 15] -- python -S -c pass
    python benchmarks/spawn_floor.py -- memx hook claude-code
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(command, input=b"{}", capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    print(
        f"load {os.getloadavg()[0]:.2f}; {' '.join(command)}: p50 {statistics.median(times):.1f} ms, "
        f"min {min(times):.1f} ms ({args.runs} runs)"
    )


if __name__ == "__main__":
    main()
