"""Latency of the hooks a client runs on every tool call, prompt and session start, as the client sees it: each
call spawns the command `memx install` writes (`memx hook claude-code`, the installed console script), writes
the hook JSON on stdin and waits for it to exit; the warm helper answers. Beside it, in the same run and
interleaved round by round (so that the machine's load hits all alike), the floors it is judged against:

- `python -S -c pass` (the interpreter alone), `python -c pass` (with `site` and this environment's .pth files:
  what decides the 150 ms target on a quiet machine), `python -c "import memx_mcp.hooks.quick"` (the light way's
  imports, nothing run);
- a minimal Python script that connects to a Unix socket, sends its stdin and prints the line a server echoes
  (the least any hook that asks another process can cost);
- the whole way (`python -m memx_mcp.cli.app hook claude-code`: every hook before the light way; the same
  helper answers it).

The store holds N bullets built as in speed.py (five projects; the hooks run in one of them). Kinds of call:
a failed command (`PostToolUseFailure`), a successful one (`PostToolUse`), an edit (`PreToolUse`), a read
before it runs and a search after it ran (tool calls memx can never answer: settled without a connection),
a session start, a prompt. Reported per size and run: p50 / p95 of the wall time, the median CPU time of the
process (user + system, less sensitive to the load than wall time), the ratio to `python -c pass` in the same
run, whether p95 ≤ 150 ms was seen, and the time inside the helper (``logs/injections.jsonl``).
The load average is printed with each run: on a loaded machine only the ratios mean anything.

Every process runs with a bytecode cache (``PYTHONPYCACHEPREFIX`` in a fresh temporary folder, filled by warm-up
calls before any is timed), as an installed package has one; ``--no-bytecode-cache`` keeps the environment as it
is (where ``PYTHONDONTWRITEBYTECODE`` is set, every process compiles every module it imports from source).

    python benchmarks/moment_latency.py [--sizes 1000,10000] [--calls 25] [--runs 1] [--profile] [--no-bytecode-cache]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from speed import THINGS, TOOLS, build

PY = sys.executable
MEMX = [str(Path(PY).parent / "memx")]  # the console script `memx install` writes into the client's settings
if not Path(MEMX[0]).exists():
    MEMX = [PY, "-m", "memx_mcp.cli"]
WHOLE = [PY, "-m", "memx_mcp.cli.app"]  # the whole CLI, as every hook ran before the light way
ERRORS = ["Timeout", "Connection", "Import", "Value", "Key"]
TARGET = 0.150  # seconds, p95, issue 32 point 4

ECHO_SERVER = """
import os, socket, sys
path = sys.argv[1]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    with conn:
        data = b""
        while not data.endswith(b"\\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        conn.sendall(data)
"""
ECHO_CLIENT = """import _socket, sys
s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read().replace(b"\\n", b" ") + b"\\n")
data = b""
while not data.endswith(b"\\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.buffer.write(data)
"""


ENV: dict[str, str] = dict(os.environ)  # every process's environment (main() sets the bytecode cache)


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def spawn(argv: list[str], payload: str, env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall time, CPU time and stdout of one process, run to its end."""
    cpu = cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, env=env, cwd=cwd)
    return time.perf_counter() - start, cpu_of_children() - cpu, done.stdout


def payloads(home: Path, i: int, rng: random.Random) -> dict[str, dict[str, Any]]:
    tool, thing = rng.choice(TOOLS), rng.choice(THINGS)
    base = {"session_id": f"s{i}", "cwd": str(home), "transcript_path": str(home / "none.jsonl")}
    error = f"Exit code 1\n{rng.choice(ERRORS)}Error: the {thing} of {tool} failed at 0x{rng.randrange(16**6):06x}"
    path = str(home / "config" / f"{tool}.toml")
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
            "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
        },
        "read before (never answered)": {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": path},
        },
        "search after (never answered)": {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Grep",
            "tool_input": {"pattern": thing},
            "tool_response": {"content": f"config/{tool}.toml: {thing} = 4\n" * 40},
        },
        "session start": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "prompt": {**base, "hook_event_name": "UserPromptSubmit", "prompt": f"the {thing} of {tool} keeps failing"},
    }


TOOL_KINDS = ("failure", "success", "edit")
SKIPPED = ("read before (never answered)", "search after (never answered)")
CONTEXT = ("session start", "prompt")


def helper_times(home: Path, since: int) -> list[float]:
    lines = (home / "logs" / "injections.jsonl").read_text(encoding="utf-8").splitlines()[since:]
    records = [json.loads(line) for line in lines]
    return [r["ms"] / 1000 for r in records if str(r["event"]).startswith("moment:")]


def injection_lines(home: Path) -> int:
    path = home / "logs" / "injections.jsonl"
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def stats(walls: list[float]) -> tuple[float, float]:
    ordered = sorted(walls)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


class Echo:
    """The echo server of the minimal socket client, in a process of its own (as the helper is)."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "echo.sock")
        self.proc = subprocess.Popen([PY, "-c", ECHO_SERVER, self.path], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


def one_run(home: Path, calls: int, rng: random.Random, echo: Echo) -> dict[str, list[tuple[float, float, str]]]:
    env = {**ENV, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1"}
    probes: dict[str, Callable[[int], tuple[float, float, str]]] = {
        "python -S -c pass": lambda i: spawn([PY, "-S", "-c", "pass"], "", env, home),
        "python -c pass": lambda i: spawn([PY, "-c", "pass"], "", env, home),
        "python -c 'import memx_mcp.hooks.quick'": lambda i: spawn(
            [PY, "-c", "import memx_mcp.cli, memx_mcp.hooks.quick"], "", env, home
        ),
        "socket echo client (floor)": lambda i: spawn(
            [PY, "-c", ECHO_CLIENT, echo.path], json.dumps(payloads(home, i, rng)["failure"]), env, home
        ),
        "whole way, failed command": lambda i: spawn(
            [*WHOLE, "hook", "claude-code"], json.dumps(payloads(home, i, rng)["failure"]), env, home
        ),
    }
    for kind in (*TOOL_KINDS, *SKIPPED, *CONTEXT):
        probes[kind] = lambda i, kind=kind: spawn(
            [*MEMX, "hook", "claude-code"], json.dumps(payloads(home, i, rng)[kind]), env, home
        )
    seen: dict[str, list[tuple[float, float, str]]] = {name: [] for name in probes}
    for i in range(calls):
        order = list(probes)
        rng.shuffle(order)
        for name in order:
            seen[name].append(probes[name](i))
    return seen


def report(seen: dict[str, list[tuple[float, float, str]]], inside: list[float], load: tuple[float, float]) -> None:
    base50, base95 = stats([w for w, _, _ in seen["python -c pass"]])
    base_cpu = statistics.median(c for _, c, _ in seen["python -c pass"])
    print(f"  load average {load[0]:.2f} before, {load[1]:.2f} after (1 min; {os.cpu_count()} cores)")
    print(f"  {'call':42s} {'p50 ms':>8s} {'p95 ms':>8s} {'cpu ms':>7s} {'p50/pass':>9s} {'p95/pass':>9s}  printed")
    for name, runs in seen.items():
        p50, p95 = stats([w for w, _, _ in runs])
        cpu = statistics.median(c for _, c, _ in runs)
        printed = sum(bool(out.strip()) for _, _, out in runs)
        print(
            f"  {name:42s} {p50 * 1000:8.1f} {p95 * 1000:8.1f} {cpu * 1000:7.1f} {p50 / base50:9.2f} "
            f"{p95 / base95:9.2f}  {printed}/{len(runs)}"
        )
    tool = [w for kind in (*TOOL_KINDS, *SKIPPED) for w, _, _ in seen[kind]]
    p50, p95 = stats(tool)
    cpu = statistics.median(c for kind in (*TOOL_KINDS, *SKIPPED) for _, c, _ in seen[kind])
    verdict = "yes" if p95 <= TARGET else "no"
    print(
        f"  every tool call, warm ({len(tool)}): p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
        f"(x{p50 / base50:.2f} / x{p95 / base95:.2f} python -c pass); cpu {cpu * 1000:.1f} ms "
        f"(x{cpu / base_cpu:.2f}); p95 <= 150 ms: {verdict}"
    )
    answered = [w for kind in TOOL_KINDS for w, _, _ in seen[kind]]
    p50, p95 = stats(answered)
    print(f"  tool calls the helper answers ({len(answered)}): p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")
    if inside:
        p50, p95 = stats(inside)
        print(f"  inside the helper (the use case, {len(inside)}): p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")


def profile(home: Path) -> None:
    """Where one light-way hook process spends its imports (``-X importtime``), beside the whole way's."""
    env = {**ENV, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1"}
    payload = json.dumps(payloads(home, 0, random.Random(1))["success"])
    for name, command in (("light way", MEMX), ("whole way", WHOLE)):
        argv = [PY, "-X", "importtime", *(command[1:] if command[0] == PY else command)]
        done = subprocess.run(
            [*argv, "hook", "claude-code"], input=payload, capture_output=True, text=True, env=env, cwd=home
        )
        rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")][1:]
        mods = [(int(r[1]), r[2].strip(), len(r[2]) - len(r[2].lstrip())) for r in rows]
        top = sorted((m for m in mods if m[2] == 1), reverse=True)[:8]  # the modules the program itself imports
        total = sum(m[0] for m in top)
        print(f"  {name}: {len(mods)} modules imported; top-level imports (cumulative µs): {total}")
        print("    " + ", ".join(f"{m[1]} {m[0]}" for m in top))


def measure(size: int, calls: int, runs: int, show_profile: bool) -> None:
    memory, _ = build(size)
    home = memory.settings.home
    rng = random.Random(7)
    env = {**ENV, "MEMX_HOME": str(home), "MEMX_SCOPE": "project:p1"}
    echo = Echo(Path(tempfile.mkdtemp(prefix="memx-echo-")))
    try:
        cold, _, _ = spawn([*MEMX, "hook", "claude-code"], json.dumps(payloads(home, -1, rng)["prompt"]), env, home)
        deadline = time.monotonic() + 120
        while not (home / "run" / "hook-helper.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(3):  # the helper's model and caches warm
            spawn([*MEMX, "hook", "claude-code"], json.dumps(payloads(home, -2, rng)["prompt"]), env, home)
        one_run(home, 1, rng, echo)  # every kind of process once: the bytecode cache filled, not timed
        print(f"{size} bullets; first call, cold (starts the helper): {cold * 1000:.0f} ms")
        if show_profile:
            profile(home)
        for run in range(runs):
            before, lines = os.getloadavg()[0], injection_lines(home)
            seen = one_run(home, calls, rng, echo)
            print(f" run {run + 1} of {runs}, {calls} rounds")
            report(seen, helper_times(home, lines), (before, os.getloadavg()[0]))
    finally:
        echo.close()
        state = home / "run" / "hook-helper.json"
        if state.exists():
            pid = json.loads(state.read_text()).get("pid")
            if pid:
                os.kill(int(pid), signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=25, help="rounds per run (each round: one call of each kind)")
    parser.add_argument("--runs", type=int, default=1, help="short runs one after the other, each reported")
    parser.add_argument("--profile", action="store_true", help="the imports of one hook process, light and whole")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="the environment as it is")
    args = parser.parse_args()
    if not args.no_bytecode_cache:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="memx-pycache-")
    cache = "none" if args.no_bytecode_cache else ENV["PYTHONPYCACHEPREFIX"]
    print(f"python {sys.version.split()[0]} at {PY}; hook command: {' '.join(MEMX)} hook claude-code")
    print(f"bytecode cache: {cache}; PYTHONDONTWRITEBYTECODE={ENV.get('PYTHONDONTWRITEBYTECODE', '')}")
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.calls, args.runs, args.profile)


if __name__ == "__main__":
    main()
