"""Latency of the moment-of-need hooks, as Claude Code sees it: each tool call spawns `memx hook claude-code`,
writes the hook JSON on stdin (``PostToolUseFailure`` after a failed command, ``PostToolUse`` after a
successful one, ``PreToolUse`` before an edit) and waits for it to exit; the warm helper answers.

The store holds N bullets built as in speed.py (five projects; the hooks run in one of them), plus a few
fixes the failures match, so that some calls hand something back. Reported per size: p50 / p95 of the
whole hook process over the warm calls, per kind of call, and how many printed something; the same for a
hook call that does nothing (what starting the `memx` process costs on this machine), and the time spent
inside the helper (the use case itself, as logged in ``logs/injections.jsonl``).

    python benchmarks/moment_latency.py [--sizes 1000,10000] [--calls 60]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from speed import THINGS, TOOLS, build, percentiles

MEMX = [str(Path(sys.executable).parent / "memx")]
if not Path(MEMX[0]).exists():
    MEMX = [sys.executable, "-m", "memx_mcp.cli.app"]
ERRORS = ["Timeout", "Connection", "Import", "Value", "Key"]


def call(home: Path, payload: dict[str, Any]) -> tuple[float, str]:
    env = {**os.environ, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1"}
    start = time.perf_counter()
    done = subprocess.run(
        [*MEMX, "hook", "claude-code"], input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=home
    )
    return time.perf_counter() - start, done.stdout


def payloads(home: Path, i: int, rng: random.Random) -> dict[str, dict[str, Any]]:
    tool, thing = rng.choice(TOOLS), rng.choice(THINGS)
    base = {"session_id": f"s{i}", "cwd": str(home), "transcript_path": str(home / "none.jsonl")}
    error = f"Exit code 1\n{rng.choice(ERRORS)}Error: the {thing} of {tool} failed at 0x{rng.randrange(16**6):06x}"
    return {
        "failure": {
            **base,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"{tool} {thing} --jobs {rng.randint(2, 9)}"},
            "error": error,
        },
        "success": {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"{tool} status"},
            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
        },
        "edit": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": str(home / "config" / f"{tool}.toml"), "old_string": "a", "new_string": "b"},
        },
    }


def helper_times(home: Path) -> list[float]:
    lines = (home / "logs" / "injections.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    return [r["ms"] / 1000 for r in records if str(r["event"]).startswith("moment:")]


def measure(size: int, calls: int) -> None:
    memory, _ = build(size)
    home = memory.settings.home
    rng = random.Random(7)
    try:
        cold, _ = call(home, payloads(home, -1, rng)["failure"])  # starts the helper
        times: dict[str, list[float]] = {"failure": [], "success": [], "edit": []}
        printed: dict[str, int] = dict.fromkeys(times, 0)
        empty: list[float] = []
        for i in range(calls):  # the baseline between the tool calls: the machine's load hits both alike
            empty.append(call(home, {"hook_event_name": "Notification", "message": "x"})[0])
            for kind, payload in payloads(home, i, rng).items():
                seconds, out = call(home, payload)
                times[kind].append(seconds)
                printed[kind] += bool(out.strip())
        print(f"{size} bullets; first call, cold (starts the helper): {cold * 1000:.0f} ms")
        print(f"  baseline, a hook that does nothing (process start only): {percentiles(empty)}")
        inside = helper_times(home)
        print(f"  inside the helper (the use case, from logs/injections.jsonl): {percentiles(inside)}")
        every = [t for ts in times.values() for t in ts]
        print(f"  every tool call, warm: {percentiles(every)} ({len(every)} calls)")
        for kind, ts in times.items():
            print(f"  {kind:8s} {percentiles(ts)}; printed something {printed[kind]}/{len(ts)}")
    finally:
        state = home / "run" / "hook-helper.json"
        if state.exists():
            pid = json.loads(state.read_text()).get("pid")
            if pid:
                os.kill(int(pid), signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.calls)


if __name__ == "__main__":
    main()
