"""Many processes on one store: two MCP servers over stdio, a CLI loop and Claude Code hook runs, at once.
Every acknowledged write must be present exactly once afterwards; SIGKILLed writers lose nothing acked."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder

from .conftest import MODEL
from .helpers import env_for, script

DATA = Path(__file__).parents[1] / "benchmarks" / "data"
SESSION = DATA / "transcripts" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def facts(prefix: str, count: int) -> list[str]:
    """Distinct facts: LoCoMo dialog turns (varied real sentences), each tagged with its writer."""
    conversations = json.loads((DATA / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    turns = [
        t["text"]
        for c in conversations
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
        if len(t["text"]) > 80
    ]
    random.Random(prefix).shuffle(turns)
    return [f"{prefix}: {t}" for t in turns[:count]]


def acked(result: dict[str, Any]) -> str:
    """The id that must exist after a write: the new bullet, or the one it was merged into."""
    return str(result["merged_into"] or result["bullet"]["id"])


async def mcp_writer(home: Path, cwd: Path, texts: list[str], out: list[str], errors: list[str]) -> None:
    cmd = script("memx-mcp")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(home), cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for text in texts:
            r = await session.call_tool("remember", {"text": text, "scope": "project:shared"})
            if r.is_error:
                errors.append(r.content[0].text)
                continue
            out.append(acked(r.structured_content))
            q = await session.call_tool("recall", {"query": text[:60], "scope": "project:shared"})
            if q.is_error:
                errors.append(q.content[0].text)


def test_four_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    acks: dict[str, list[str]] = {"a": [], "b": []}
    errors: list[str] = []
    cli_texts = facts("cli", 6)
    cli = subprocess.Popen(
        [sys.executable, "-c", _CLI_LOOP, json.dumps(cli_texts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
    )
    hooks = []
    for n in range(2):
        copy = tmp_path / f"s{n}.jsonl"
        shutil.copy(SESSION, copy)
        payload = json.dumps(
            {"session_id": f"s{n}", "transcript_path": str(copy), "cwd": str(tmp_path), "hook_event_name": "SessionEnd"}
        )
        hooks.append(
            subprocess.Popen(
                [*script("memx"), "hook", "claude-code"],
                stdin=subprocess.PIPE,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env_for(home),
                cwd=tmp_path,
            )
        )
        hooks[-1].stdin.write(payload)  # type: ignore[union-attr]
        hooks[-1].stdin.close()  # type: ignore[union-attr]

    async def both() -> None:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(mcp_writer, home, tmp_path, facts("alpha", 8), acks["a"], errors)
                tg.start_soon(mcp_writer, home, tmp_path, facts("beta", 8), acks["b"], errors)

    anyio.run(both)
    out, err = cli.communicate(timeout=120)
    assert cli.returncode == 0, err
    cli_acks = [line for line in out.splitlines() if line.startswith("b_")]
    for h in hooks:
        assert h.wait(timeout=120) == 0
    assert errors == []
    assert len(acks["a"]) == len(acks["b"]) == 8 and len(cli_acks) == 6
    deadline = time.monotonic() + 120  # sessions this long (3.4 MB) are read by the worker the hooks started
    while (log := (home / "logs" / "hook.log").read_text()).count(" steps 0→") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "failed open" not in log and log.count("SessionEnd session=s0 steps 0→299") == 1, log
    assert log.count("SessionEnd session=s1 steps 0→299") == 1, log

    store = LanceStore(home / "store", MODEL, 384)
    ids = [b.id for b in store.all_bullets()]
    assert len(ids) == len(set(ids)), "a bullet was stored twice"
    assert set(acks["a"] + acks["b"] + cli_acks) <= set(ids), "an acknowledged write is missing"
    store.optimize()  # compaction works on the shared store afterwards
    assert sorted(b.id for b in store.all_bullets()) == sorted(ids)


_CLI_LOOP = """
import json, sys
from memx_mcp.cli.app import main
import io, contextlib
for text in json.loads(sys.argv[1]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["remember", text, "--scope", "project:shared", "--json"]) == 0
    r = json.loads(buf.getvalue())
    print(r["merged_into"] or r["bullet"]["id"], flush=True)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["recall", text[:50], "--scope", "project:shared"]) == 0
"""

# Each killed writer is a process of its own that opens the store and loads the model itself, forked from
# one parent that has imported memx, LanceDB and fastembed once (the imports are most of a start's cost and
# hold nothing of a store). The parent forks a writer per batch and answers with its pid; the writer prints
# "ready", then each acknowledged id, into the FIFO it is given.
_FORKS_WRITERS = """
import json, os, signal, sys
import fastembed, lancedb  # noqa: F401 (paid once, before any fork)
from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # a killed writer is reaped at once
print("warm", flush=True)
for line in sys.stdin:
    fifo, batch = json.loads(line)
    pid = os.fork()
    if pid:
        print(pid, flush=True)
        continue
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        out = open(fifo, "w")
        memory = open_memory(load_settings(), cwd=None)
        memory.deps.embedder.get(60)
        print("ready", file=out, flush=True)
        for text in batch:
            r = memory.remember(text, scope="project:crash")
            print(r.merged_into or r.bullet.id, file=out, flush=True)
        code = 0
    finally:
        os._exit(code)
"""


def test_writers_killed_mid_write_lose_no_acknowledged_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    texts = facts("crash", 400)
    acked_ids: list[str] = []
    rng = random.Random(7)
    parent = subprocess.Popen(
        [sys.executable, "-c", _FORKS_WRITERS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
    )
    assert parent.stdin is not None and parent.stdout is not None
    try:
        assert parent.stdout.readline().strip() == "warm"
        for round_ in range(20):
            batch = texts[round_ * 20 : (round_ + 1) * 20]
            fifo = tmp_path / f"writer-{round_}"
            os.mkfifo(fifo)
            parent.stdin.write(json.dumps([str(fifo), batch]) + "\n")
            parent.stdin.flush()
            pid = int(parent.stdout.readline())
            with fifo.open(encoding="utf-8") as out:
                assert out.readline().strip() == "ready"
                deadline = time.monotonic() + rng.uniform(0.05, 0.6)
                lines: list[str] = []
                while time.monotonic() < deadline:
                    line = out.readline()
                    if not line:
                        break
                    lines.append(line.strip())
                with contextlib.suppress(ProcessLookupError):  # it wrote its whole batch and exited
                    os.kill(pid, signal.SIGKILL)
                rest = out.read()  # up to the end the kill made
            acked_ids += [x for x in lines + rest.splitlines() if x.startswith("b_")]
            store = LanceStore(home / "store", MODEL, 384)  # always opens
            bullets = {b.id: b for b in store.all_bullets()}
            missing = set(acked_ids) - set(bullets)
            assert not missing, f"round {round_}: acknowledged writes lost: {missing}"
            assert all(b.content and b.vector is not None and len(b.vector) == 384 for b in bullets.values())
    finally:
        parent.stdin.close()
        parent.wait(60)
    assert len(acked_ids) >= 20


def test_a_memory_in_this_process_sees_the_other_processes_writes(tmp_path: Path, embedder: Any) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home, scope="project:shared")
    memory = Memory(settings, LanceStore(home / "store", MODEL, 384), ReadyEmbedder(embedder), cwd=tmp_path)
    text = facts("other", 1)[0]
    done = subprocess.run(
        [*script("memx"), "remember", text, "--scope", "project:shared", "--json"],
        capture_output=True,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert memory.recall(text[:60]).hits[0].bullet.content == text
