"""`memx-mcp` as a process: what a person at a terminal sees, and how it stops when a client stops it."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
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
