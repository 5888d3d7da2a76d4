"""The user's coding CLI as the Reflector's model, with fake `claude`, `codex` and `gemini` executables this
test writes: each records what it was given (its argv, its own /proc/self/cmdline and environ, its stdin and
where that came from) and answers in its CLI's format. The session's text is never on a child's command
line; a window of 4-byte characters over 128 KiB reaches Gemini; a child that writes without end is cut at
the cap; a child's own child is ended with it at the deadline; a call that cannot be made is said in the
result."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.adapters.child_process import OutputTooLarge
from memx_mcp.adapters.coding_cli import CLIRefiner
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings

from ..engine.reflector.test_pipeline import EPISODE

SESSION = "the user said: deploy with make ship-prod and the token sk-live-SESSIONTEXT-4242 is rotated"
ANSWER = '{"lessons": []}'

FAKE = """#!{python}
import json, os, subprocess, sys, time
record = os.environ["FAKE_RECORD"]
mode = os.environ.get("FAKE_MODE", "answer")
stdin_at = os.readlink("/proc/self/fd/0")
info = os.fstat(0)
seen = {{
    "argv": sys.argv,
    "cmdline": open("/proc/self/cmdline", "rb").read().decode("utf-8", "replace"),
    "environ": open("/proc/self/environ", "rb").read().decode("utf-8", "replace"),
    "stdin_at": stdin_at,
    "stdin_mode": info.st_mode & 0o777,
    "folder_mode": os.stat(os.path.dirname(stdin_at)).st_mode & 0o777 if stdin_at.startswith("/") else None,
    "cwd": os.getcwd(),
    "cwd_files": os.listdir("."),
    "stdin": sys.stdin.read(),
}}
if mode == "grandchild":
    seen["grandchild"] = subprocess.Popen(["sleep", "300"]).pid
with open(record, "w") as f:
    json.dump(seen, f)
if mode == "flood":
    block = b"x" * (1 << 20)
    for _ in range(1024):  # 1 GiB
        sys.stdout.buffer.write(block)
    sys.exit(0)
if mode in ("grandchild", "hang"):
    time.sleep(300)
if mode == "fail":
    print("E2BIG: something the CLI could not do", file=sys.stderr)
    sys.exit(1)
name = os.path.basename(sys.argv[0])
answer = {answer!r}
if name == "codex":
    with open(sys.argv[sys.argv.index("--output-last-message") + 1], "w") as f:
        f.write(answer)
elif name == "claude":
    print(json.dumps({{"result": answer, "usage": {{"input_tokens": 7, "output_tokens": 3}}}}))
else:
    print(json.dumps({{"response": answer}}))
"""

BACKENDS = {"claude-cli": "claude", "codex-cli": "codex", "gemini-cli": "gemini"}


def fake(tmp_path: Path, name: str) -> str:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text(FAKE.format(python=sys.executable, answer=ANSWER))
    program.chmod(0o755)
    return str(program)


def recorded(tmp_path: Path) -> dict[str, Any]:
    return dict(json.loads((tmp_path / "record.json").read_text()))


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.json"))
    return tmp_path / "record.json"


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_no_child_gets_the_session_on_its_command_line_only_on_stdin_from_a_private_file(
    tmp_path: Path, record: Path, backend: str
) -> None:
    refiner = CLIRefiner(backend, fake(tmp_path, BACKENDS[backend]), timeout=60)
    assert refiner.complete("SYSTEM", SESSION, 100) == ANSWER
    seen = recorded(tmp_path)
    assert "SESSIONTEXT" not in seen["cmdline"] and "SESSIONTEXT" not in " ".join(seen["argv"])  # /proc: ps -eww
    assert "SESSIONTEXT" not in seen["environ"]
    assert SESSION in seen["stdin"]
    assert seen["stdin_mode"] == 0o600 and seen["folder_mode"] == 0o700  # a file only memx can read
    assert not Path(seen["stdin_at"]).exists() and not Path(seen["cwd"]).exists()  # and gone after the call
    assert seen["cwd_files"] == []  # it runs in an empty folder: not beside its input


def test_a_gemini_window_of_4_byte_characters_over_128_kib_reaches_the_child(tmp_path: Path, record: Path) -> None:
    window = "\U0001f600" * 40_000  # 160 KB of UTF-8: one argv string may hold 128 KiB, so every call failed
    refiner = CLIRefiner("gemini-cli", fake(tmp_path, "gemini"), timeout=60)
    assert refiner.complete("SYSTEM", window, 100) == ANSWER
    seen = recorded(tmp_path)
    assert window in seen["stdin"] and "\U0001f600" not in seen["cmdline"]
    assert seen["argv"][-2:] == ["-p", "Answer the request above, as it asks."]


def test_a_child_that_writes_a_gibibyte_is_ended_at_the_cap(
    tmp_path: Path, record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "flood")
    refiner = CLIRefiner("claude-cli", fake(tmp_path, "claude"), timeout=120)
    started = time.monotonic()
    with pytest.raises(OutputTooLarge, match="wrote more than 8 MiB"):
        refiner.complete("SYSTEM", SESSION, 100)
    assert time.monotonic() - started < 60  # it does not hang (generous: the cut comes within a second)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_child_and_its_own_child_are_ended_at_the_deadline(
    tmp_path: Path, record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "grandchild")
    refiner = CLIRefiner("gemini-cli", fake(tmp_path, "gemini"), timeout=2)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="gemini-cli took longer than 2 s"):
        refiner.complete("SYSTEM", SESSION, 100)
    assert time.monotonic() - started < 30  # the grandchild holding the pipes does not keep memx waiting
    grandchild = int(recorded(tmp_path)["grandchild"])
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_call_that_cannot_be_made_is_said_in_the_reflect_result(
    tmp_path: Path, record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "fail")
    monkeypatch.setenv("GEMINI_API_KEY", "loopback")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = Settings(
        home=tmp_path / "data", llm_backend="gemini-cli", cli_paths=f"gemini={fake(tmp_path, 'gemini')}"
    )
    memory = open_memory(settings, cwd=tmp_path, preload=False)
    result = memory.reflect(EPISODE, mode="session", dry_run=True)
    (note,) = [n for n in result.report.notes if "could not be made" in n]
    assert note.startswith("1 model call(s) could not be made (RuntimeError: gemini-cli exited 1: E2BIG"), note
    assert record.is_file()  # the child did run
