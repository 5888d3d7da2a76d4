"""What a memx process pays to start: importing LanceDB the ordinary way against memx's way (its
namespace REST client loaded on first use, ``src/memx_mcp/store/lancedb_import.py``), in turns within one
run so that the machine's load drifts over both alike; then a whole ``memx stats`` and a ``memx recall``
on a small store, run on their own (``MEMX_NO_HELPER=1``) and answered by a warm helper, and a
``memx install --dry-run``.

    python benchmarks/import_time.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMX = [str(Path(sys.executable).parent / "memx")]
PLAIN = [sys.executable, "-c", "import lancedb"]
MEMX_WAY = [sys.executable, "-c", "from memx_mcp.adapters.lance.lancedb_import import load; load()"]


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def line(name: str, values: list[float]) -> str:
    low, mid, high = (round(v * 1000) for v in (min(values), statistics.median(values), max(values)))
    return f"{name}: median {mid} ms (min {low}, max {high})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    plain, ours = [], []
    for _ in range(args.runs):
        plain.append(timed(PLAIN))
        ours.append(timed(MEMX_WAY))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(line("import lancedb, the ordinary way", plain))
    print(line("import lancedb, memx's way", ours))
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        env = {**os.environ, "MEMX_HOME": str(home), "MEMX_SCOPE": "global"}
        alone = {**env, "MEMX_NO_HELPER": "1"}
        subprocess.run([*MEMX, "remember", "Use uv sync --frozen in CI"], check=True, capture_output=True, env=alone)
        stats = [timed([*MEMX, "stats"], alone) for _ in range(args.runs)]
        recall = [timed([*MEMX, "recall", "uv sync in CI"], alone) for _ in range(args.runs)]
        user = {**alone, "HOME": str(Path(scratch) / "user")}  # a dry run: it writes nothing even there
        install = [timed([*MEMX, "install", "cursor", "--dry-run"], user) for _ in range(args.runs)]
        helper = subprocess.Popen(
            [sys.executable, "-m", "memx_mcp.hooks.helper", "--home", str(home)], env=env, stderr=subprocess.DEVNULL
        )
        try:
            state = home / "run" / "hook-helper.json"
            while "token" not in (state.read_text() if state.exists() else ""):
                time.sleep(0.05)
            timed([*MEMX, "recall", "uv sync in CI"], env)  # the helper's model has loaded after this one
            warm = [timed([*MEMX, "recall", "uv sync in CI"], env) for _ in range(args.runs)]
        finally:
            pid = json.loads(state.read_text())["pid"] if state.exists() else helper.pid
            os.kill(int(pid), signal.SIGTERM)
            helper.wait(30)
    print(line("memx stats, on its own", stats))
    print(line("memx recall, on its own (model load included)", recall))
    print(line("memx install cursor --dry-run (no store opened)", install))
    print(line("memx recall, answered by the warm helper", warm))


if __name__ == "__main__":
    main()
