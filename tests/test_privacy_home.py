"""Nothing of the user's leaves the machine, and memx writes nothing outside its data folder.

The real commands run with ``HOME`` set to an empty folder and ``MEMX_HOME`` elsewhere: ``memx remember``,
``recall``, ``doctor``, a server session over the real MCP stdio client, ``memx ui`` with one API request,
and the two context hooks (with the warm helper they start). Afterwards the empty ``HOME`` must still be
empty, and, where strace is installed, every ``connect`` of every process must have been a Unix socket or
loopback, with no DNS query. onnxruntime's telemetry used to leave ``~/.cache/Microsoft/...`` behind and
resolve Microsoft's collector from the long-lived processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .helpers import env_for, script

STRACE = shutil.which("strace")
FACT = "Use pytest -n auto (pytest-xdist) to run the test suite in parallel"


@dataclass
class Run:
    home: Path
    traces: list[Path]


def traced(log: Path, argv: list[str]) -> list[str]:
    if not STRACE:
        return argv
    # --seccomp-bpf: only the traced calls stop a process (this module: 87.8 s without it, 54.1 s with it here)
    return [STRACE, "-f", "--seccomp-bpf", "-qq", "-e", "trace=connect,sendto", "-o", str(log), *argv]


def child_of(pid: int) -> int:
    """The traced command under strace (strace's only child), or ``pid`` itself without strace."""
    if not STRACE:
        return pid
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.02)
    raise AssertionError("strace started no child")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    root = tmp_path_factory.mktemp("privacy")
    home, data, work = root / "home", root / "data", root / "work"
    for folder in (home, work):
        folder.mkdir()
    env = {k: v for k, v in env_for(data).items() if not k.startswith("XDG_")}  # defaults under HOME
    env.update(HOME=str(home), MEMX_HOOK_DAEMON_IDLE_MINUTES="0.03")
    traces: list[Path] = []

    def log(name: str) -> Path:
        traces.append(root / f"{name}.strace")
        return traces[-1]

    def memx(name: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        argv = traced(log(name), [*script("memx"), *args])
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=work, timeout=180)

    assert memx("remember", "remember", FACT).returncode == 0
    assert FACT in memx("recall", "recall", "run the tests in parallel").stdout
    doctor = memx("doctor", "doctor")
    assert "onnxruntime telemetry off" in doctor.stdout, doctor.stdout

    async def mcp_session() -> str:
        argv = traced(log("server"), script("memx-mcp"))
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(work))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            await client.call_tool("remember", {"content": "Deploy with make release after the tests pass"})
            found = await client.call_tool("recall", {"query": "deploy with make release"})
            return json.dumps(found.structured_content)

    assert "make release" in anyio.run(mcp_session)

    ui = subprocess.Popen(
        traced(log("ui"), [*script("memx"), "ui", "--no-open", "--json"]),
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=work,
    )
    try:
        assert ui.stdout is not None
        base, token = json.loads(ui.stdout.readline())["url"].split("/?token=")
        request = urllib.request.Request(base + "/api/stats", headers={"X-Memx-Token": token})
        with urllib.request.urlopen(request, timeout=60) as res:
            assert json.loads(res.read())["active"] >= 1
    finally:
        os.kill(child_of(ui.pid), 2)  # Ctrl-C: memx ui's own way to stop
    assert ui.wait(60) in (0, 130)

    payload = {"session_id": "s-1", "transcript_path": str(work / "t.jsonl"), "cwd": str(work)}
    start = json.dumps({**payload, "hook_event_name": "SessionStart", "source": "startup"})
    prompt = json.dumps({**payload, "hook_event_name": "UserPromptSubmit", "prompt": "run the tests in parallel"})
    # under strace a hook's run lasts until the helper it started idles out (1.8 s after its last use)
    first = subprocess.Popen(
        traced(log("hook-start"), [*script("memx"), "hook", "claude-code"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=work,
    )
    assert first.stdin is not None and first.stdout is not None
    first.stdin.write(start)
    first.stdin.close()
    first.stdout.read()  # the hook's answer (from the helper, when it was ready in time): it has exited
    assert memx("hook-prompt", "hook", "claude-code", stdin=prompt).returncode == 0
    first.wait(120)
    state = data / "run" / "hook-helper.json"
    if not STRACE and state.exists():  # nothing waited for the helper: stop it
        os.kill(int(json.loads(state.read_text())["pid"]), 15)
    yield Run(home, traces)


def test_an_empty_home_stays_empty_after_every_command(session: Run) -> None:
    assert sorted(str(p.relative_to(session.home)) for p in session.home.rglob("*")) == []


LOCAL = re.compile(r'sa_family=AF_(UNIX|NETLINK)|inet_addr\("127\.|inet_pton\(AF_INET6, "::1"')


@pytest.mark.skipif(not STRACE, reason="needs strace to see every connect of every process")
def test_no_process_connects_beyond_loopback_or_asks_dns(session: Run) -> None:
    connects, outward = 0, []
    for trace in session.traces:
        for line in trace.read_text().splitlines():
            if " connect(" not in line and " sendto(" not in line:
                continue
            connects += " connect(" in line
            has_address = "sa_family=" in line
            if "htons(53)" in line or (has_address and not LOCAL.search(line)):
                outward.append(f"{trace.stem}: {line}")
    assert connects > 0  # the trace did see the processes' connects (the ui request, the helper)
    assert outward == []


def test_the_telemetry_switch_is_on_in_a_process_that_embeds_and_overrides_a_user_zero(tmp_path: Path) -> None:
    """The embedder alone, imported as a library would import it, with a user's ORT_DISABLE_TELEMETRY=0."""
    code = (
        "import sys\n"
        "from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model\n"
        "folder = prepare_shipped_model(__import__('pathlib').Path(sys.argv[1]))\n"
        "model = FastEmbedEmbedder('sentence-transformers/all-MiniLM-L6-v2', folder, 384)\n"
        "assert len(model.embed(['hello'])[0]) == 384\n"
        "from memx_mcp.cli.doctor import _telemetry\n"
        "print(_telemetry())\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), ORT_DISABLE_TELEMETRY="0")
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "models")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "status='OK'" in done.stdout and "overrode ORT_DISABLE_TELEMETRY=0" in done.stdout
    assert list(home.iterdir()) == []  # onnxruntime wrote ~/.cache/Microsoft/DeveloperTools/.onnxruntime here


def test_doctor_fails_the_telemetry_check_when_onnxruntime_came_first(tmp_path: Path) -> None:
    code = "import onnxruntime\nfrom memx_mcp.cli.doctor import _telemetry\nprint(_telemetry())\n"
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "status='FAIL'" in done.stdout and "onnxruntime was imported before memx" in done.stdout
