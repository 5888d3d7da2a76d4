"""`memx-mcp` as a process: what a person at a terminal sees, and how it stops when a client stops it."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import env_for, script

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_server_stopped_by_its_client_exits_at_once_without_a_traceback(tmp_path: Path, sig: int) -> None:
    server = subprocess.Popen(
        script("memx-mcp"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(tmp_path / "home"),
        cwd=tmp_path,
    )
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdin.write((json.dumps(INIT) + "\n").encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1  # answered initialize, as after a health check
    server.send_signal(sig)
    assert server.wait(timeout=20) == 0
    assert b"Traceback" not in server.stderr.read()


def test_memx_mcp_typed_at_a_terminal_says_what_it_is(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    server = subprocess.Popen(
        script("memx-mcp"),
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(tmp_path / "home"),
        cwd=tmp_path,
    )
    os.close(follower)
    assert server.stderr is not None
    said = b""
    while b"Ctrl-C stops" not in said:
        line = server.stderr.readline()
        assert line, said
        said += line
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=20) == 0
    os.close(leader)
    assert b"memx install claude-code" in said and b"memx doctor" in said


def _mapped(pid: int) -> str:
    """The files a running process has mapped: its native libraries among them."""
    return Path(f"/proc/{pid}/maps").read_text()


STORE_LIBRARIES = ("lancedb", "libarrow", "onnxruntime")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps (Linux)")
def test_initialize_is_answered_before_the_store_and_model_libraries_load_and_they_load_once_initialized(
    tmp_path: Path,
) -> None:
    """Cold start (issue 33): loading LanceDB, pyarrow and onnxruntime while `initialize` waits made memx-mcp
    answer 1.5x later than a bare MCP server; they load once the client says it is initialized."""
    server = subprocess.Popen(
        script("memx-mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env_for(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, object]) -> None:
        server.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]

    try:
        send(INIT)
        assert json.loads(server.stdout.readline())["id"] == 1
        before = _mapped(server.pid)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "recall", "arguments": {"query": "make the tests run faster"}}})  # fmt: skip
        answer = json.loads(server.stdout.readline())
        after = _mapped(server.pid)
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    assert answer["id"] == 2 and answer["result"]["structuredContent"]["mode"] == "hybrid", answer
    assert [lib for lib in STORE_LIBRARIES if lib in before] == []
    assert [lib for lib in STORE_LIBRARIES if lib in after] == list(STORE_LIBRARIES)


def test_the_server_module_imports_neither_the_store_nor_the_engines() -> None:
    """What `memx-mcp` imports before it can answer `initialize` (``python -X importtime`` shows the cost)."""
    heavy = ("numpy", "pyarrow", "lancedb", "onnxruntime", "memx_mcp.compose", "memx_mcp.usecases.reflect",
             "memx_mcp.engine.curator", "memx_mcp.privacy")  # fmt: skip
    code = f"import sys, memx_mcp.server.app, memx_mcp.native; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
