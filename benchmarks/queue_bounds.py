"""The bounds of issue 31 point 6, measured before (the code as it was, reproduced here) and after (memx's
adapters as they are):

- trickle: a loopback server answering a model call one byte every 2 s; the call's timeout is 5 s.
  Before: httpx's timeout, per read (as both HTTP backends had it). After: the Anthropic and OpenAI-compatible
  backends, one deadline per call.
- flood: a coding-CLI child that writes 1 GiB to stdout. Peak RSS of a fresh Python process making the call:
  before through ``subprocess.run(capture_output=True)`` (as ``CLIRefiner`` had it), after through
  ``CLIRefiner``.
- grandchild: a child that starts ``sleep 300`` and hangs; the call's timeout is 2 s. Before: whether
  ``subprocess.run(timeout=2)`` returns and whether the grandchild is alive after; after: ``CLIRefiner``.
- hook: wall time of ``memx hook claude-code`` (rules mode, SessionEnd) on a transcript of N MB made of the
  held-out Claude Code sessions; before = reading it inline (``reflect_now``, what the hook did), after = the
  hook as it is (it queues a long session for the worker).

    python benchmarks/queue_bounds.py [--skip-before] [--hook-mb 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "benchmarks" / "data" / "reflector_corpus" / "heldout" / "cc"
MEMX = [str(Path(sys.executable).parent / "memx")]
BODY = b'{"choices": [{"message": {"role": "assistant", "content": "fine"}}], "usage": {}}'


@contextmanager
def trickling(every: float, limit: int) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(BODY)}\r\n\r\n"
            try:
                self.wfile.write(head.encode())
                for i in range(min(limit, len(BODY))):
                    self.wfile.write(BODY[i : i + 1])
                    self.wfile.flush()
                    time.sleep(every)
                self.wfile.write(BODY[limit:])
            except OSError:
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def trickle(skip_before: bool) -> None:
    import httpx

    from memx_mcp.adapters.anthropic import AnthropicRefiner
    from memx_mcp.adapters.openai_compat import OpenAIRefiner

    with trickling(2.0, 45) as url:  # 45 bytes: 90 s uncut
        if not skip_before:
            started = time.monotonic()
            httpx.Client(timeout=5.0, trust_env=False).post(url + "/v1/chat/completions", json={})
            print(f"trickle before (httpx timeout=5, per read): answered after {time.monotonic() - started:.1f} s")
        for name, refiner in (
            ("openai", OpenAIRefiner(url + "/v1", "m", "", 5.0)),
            ("anthropic", AnthropicRefiner("k", "m", url, 5.0)),
        ):
            started = time.monotonic()
            try:
                refiner.complete("s", "p", 10)
                outcome = "answered"
            except Exception as exc:
                outcome = type(exc).__name__
            print(f"trickle after ({name}, deadline 5 s): {outcome} after {time.monotonic() - started:.1f} s")


FAKE = """#!{python}
import os, subprocess, sys, time
if os.environ.get("FAKE") == "flood":
    block = b"x" * (1 << 20)
    for _ in range(1024):
        sys.stdout.buffer.write(block)
else:
    print(subprocess.Popen(["sleep", "300"]).pid, file=open(os.environ["FAKE_PID"], "w"))
    time.sleep(300)
"""

CHILD = """
import os, resource, subprocess, sys, time
from memx_mcp.adapters.coding_cli import CLIRefiner
program, how, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
started = time.monotonic()
try:
    if how == "before":
        subprocess.run([program], capture_output=True, text=True, errors="replace", timeout=timeout,
                       start_new_session=True)
        outcome = "returned"
    else:
        CLIRefiner("gemini-cli", program, timeout=timeout).complete("s", "p", 10)
        outcome = "returned"
except Exception as exc:
    outcome = type(exc).__name__
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(f"{outcome} after {time.monotonic() - started:.1f} s, peak RSS {rss} MB")
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def children(skip_before: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder) / "gemini"
        program.write_text(FAKE.format(python=sys.executable))
        program.chmod(0o755)
        for how in ("after",) if skip_before else ("before", "after"):
            env = {**os.environ, "FAKE": "flood"}
            done = subprocess.run([sys.executable, "-c", CHILD, str(program), how, "240"], env=env,
                                  capture_output=True, text=True)  # fmt: skip
            print(f"flood {how}: {done.stdout.strip() or done.stderr.strip()[-300:]}")
        for how in ("before", "after") if not skip_before else ("after",):
            pid_file = Path(folder) / f"pid-{how}"
            env = {**os.environ, "FAKE": "hang", "FAKE_PID": str(pid_file)}
            try:
                done = subprocess.run([sys.executable, "-c", CHILD, str(program), how, "2"], env=env,
                                      capture_output=True, text=True, timeout=30)  # fmt: skip
                said = done.stdout.strip()
            except subprocess.TimeoutExpired:
                said = "still waiting after 30 s (the grandchild holds its pipes)"
            time.sleep(0.5)
            pid = int(pid_file.read_text()) if pid_file.is_file() else 0
            print(f"grandchild {how}: {said}; grandchild alive after: {alive(pid) if pid else '?'}")
            if pid and alive(pid):
                os.kill(pid, 9)


def hook(mb: int, skip_before: bool) -> None:
    from memx_mcp.config import Settings
    from memx_mcp.hooks.logs import logger
    from memx_mcp.hooks.queue import QueuedSession
    from memx_mcp.hooks.sessions import reflect_now

    with tempfile.TemporaryDirectory() as folder:
        transcript = Path(folder) / "big.jsonl"
        sources = sorted(HELDOUT.glob("*.jsonl"))
        with transcript.open("w") as out:
            while out.tell() < mb * 1_000_000:
                for source in sources:
                    text = source.read_text(encoding="utf-8")
                    out.write(text if text.endswith("\n") else text + "\n")
        size = transcript.stat().st_size / 1e6
        payload = {"session_id": "big", "transcript_path": str(transcript), "cwd": folder,
                   "hook_event_name": "SessionEnd"}  # fmt: skip
        env = {**os.environ, "MEMX_HOME": str(Path(folder) / "after"), "MEMX_LLM_BACKEND": "none"}
        started = time.monotonic()
        subprocess.run([*MEMX, "hook", "claude-code"], input=json.dumps(payload), env=env, text=True, check=True)
        print(f"hook after: {size:.1f} MB transcript, the hook returned in {time.monotonic() - started:.1f} s (queued)")
        if not skip_before:
            settings = Settings(home=Path(folder) / "before", llm_backend="none", hook_reflector_mode="rules")
            started = time.monotonic()
            reflect_now(settings, QueuedSession("SessionEnd", transcript, "session:big", folder), logger(settings))
            print(f"hook before: reading {size:.1f} MB inline took {time.monotonic() - started:.1f} s")
        log = Path(folder) / "after" / "logs" / "hook.log"
        deadline = time.monotonic() + 900
        while "session=big steps" not in (log.read_text() if log.is_file() else "") and time.monotonic() < deadline:
            time.sleep(1)  # the worker the hook started: its folder must outlive it
        print(f"worker after: {[x for x in log.read_text().splitlines() if 'session=big steps' in x][-1:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or ""))
    parser.add_argument("--skip-before", action="store_true")
    parser.add_argument("--hook-mb", type=int, default=8)
    parser.add_argument("--only", choices=["trickle", "children", "hook"])
    args = parser.parse_args()
    if args.only in (None, "trickle"):
        trickle(args.skip_before)
    if args.only in (None, "children"):
        children(args.skip_before)
    if args.only in (None, "hook"):
        hook(args.hook_mb, args.skip_before)


if __name__ == "__main__":
    main()
