"""Latency of the Claude Code context hooks, as Claude Code sees it: each call spawns
`memx hook claude-code`, writes the hook JSON on stdin and waits for it to exit.

The store holds N realistic bullets (built as in speed.py) in five projects; the hooks run with
MEMX_SCOPE set to one of them. The first call starts the warm helper (cold: store open and model load);
the calls after it are the warm path. Reported: the cold first call, then p50 / p95 over the warm calls
of SessionStart and of UserPromptSubmit (prompts related to the store and unrelated ones), and how many
printed something.

Then `memx recall` from a terminal: answered by the warm helper, and on its own (``MEMX_NO_HELPER=1``: it
opens the store and loads the model itself).

    python benchmarks/hooks.py [--size 10000] [--calls 60] [--cli-calls 20]
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

from speed import THINGS, TOOLS, VERBS, build, percentiles

MEMX = [str(Path(sys.executable).parent / "memx")]
if not Path(MEMX[0]).exists():
    MEMX = [sys.executable, "-m", "memx_mcp.cli.app"]


def call(home: Path, payload: dict[str, str]) -> tuple[float, str]:
    env = {**os.environ, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1"}
    start = time.perf_counter()
    done = subprocess.run(
        [*MEMX, "hook", "claude-code"], input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=home
    )
    return time.perf_counter() - start, done.stdout


def command(home: Path, *args: str, **extra: str) -> float:
    env = {**os.environ, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1", **extra}
    start = time.perf_counter()
    done = subprocess.run([*MEMX, *args], capture_output=True, text=True, env=env, cwd=home)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--cli-calls", type=int, default=20)
    args = parser.parse_args()
    memory, _ = build(args.size)
    home = memory.settings.home
    rng = random.Random(5)
    base = {"session_id": "bench", "cwd": str(home), "transcript_path": str(home / "none.jsonl")}
    try:
        cold, _ = call(home, {**base, "hook_event_name": "SessionStart", "source": "startup"})
        starts, prompts, printed = [], [], 0
        for i in range(args.calls):
            seconds, _ = call(home, {**base, "session_id": f"s{i}", "hook_event_name": "SessionStart"})
            starts.append(seconds)
            related = i % 2 == 0
            prompt = (
                f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?"
                if related
                else rng.choice(["write a haiku about autumn", "thanks, looks good", "what is a monad?"])
            )
            seconds, out = call(
                home, {**base, "session_id": f"s{i}", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
            )
            prompts.append(seconds)
            printed += bool(out.strip())
        print(
            f"{args.size} bullets; first SessionStart, cold (starts the helper: store open; its model loads "
            f"after it answers): {cold * 1000:.0f} ms"
        )
        print(f"SessionStart warm: {percentiles(starts)}")
        print(f"UserPromptSubmit warm: {percentiles(prompts)}; printed context for {printed}/{args.calls} prompts")
        # the memx command itself, answered by the running helper, and run on its own (MEMX_NO_HELPER)
        queries = [f"{rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(TOOLS)}" for _ in range(args.cli_calls)]
        warm = [command(home, "recall", q) for q in queries]
        alone = [command(home, "recall", q, MEMX_NO_HELPER="1") for q in queries[: max(3, args.cli_calls // 4)]]
        print(f"memx recall, helper warm: {percentiles(warm)}")
        print(f"memx recall, on its own (store open, model load): {percentiles(alone)}")
    finally:
        state = home / "run" / "hook-helper.json"
        if state.exists():
            os.kill(int(json.loads(state.read_text())["pid"]), signal.SIGTERM)


if __name__ == "__main__":
    main()
