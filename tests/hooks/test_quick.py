"""The light way of `memx hook CLIENT` (``hooks/quick.py``, ``channel.py``, ``wire.py``): with the warm helper
running, a hook process imports no settings, no registry, not even ``json``, and prints what the whole way
prints; what it settles alone is what memx could never answer; everything else takes the whole way; a helper
that takes a call and never answers costs the hook its wait and nothing more.

The hook processes and the helper are the real ones (the installed `memx` script, ``python -m
memx_mcp.hooks.helper``) over a real store with the shipped model. The one stand-in is a peer that speaks the
helper's handshake and then stays silent: a misbehaving helper, which no memx part can be made to be."""

from __future__ import annotations

import hmac
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.config import CHILD_MARKER, load_settings
from memx_mcp.domain.tool_events import ToolEvent
from memx_mcp.hooks import channel, client_hook, helper, logs, quick, wire
from memx_mcp.hooks.tool_payloads import TOOL_HOOKS, answerable, tool_kinds, worth_asking
from memx_mcp.memory import Memory
from memx_mcp.usecases.moment import need_of

from ..helpers import env_for, script, warm_helper
from .test_tool_payloads import PUSH_FIX, SCHEMA, claude_failure, codex_post, cursor_failure, gemini_after

REDIS = "Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10"
HEAVY = ("memx_mcp.config", "memx_mcp.clients", "pydantic", "json", "re", "hashlib", "socket", "typing", "logging")


# -- the pieces ---------------------------------------------------------------------------------------


def samples() -> list[Any]:
    rng = random.Random(3)
    text = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)])) for _ in range(300))
    return [
        {},
        [],
        {"hook_event_name": "PostToolUse", "tool_input": {"command": "git push 2>&1"}, "n": [1, -2, 3.5, 1e300]},
        {"text": text, "ctrl": '\x00\x01\x1f\t\n"\\/', "sep": "\u2028\u2029", "emoji": "🙂", "日本": "語"},
        {"big": 10**40, "neg": -0.0, "t": True, "f": False, "none": None, "nested": [[{"a": [{}]}]]},
        {"nan": float("inf"), "ninf": float("-inf")},
    ]


def test_wire_reads_and_writes_json_as_the_json_module_does() -> None:
    for value in samples():
        assert wire.dumps(value) == json.dumps(value, ensure_ascii=False)
        for text in (json.dumps(value), json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
            assert wire.loads(text) == json.loads(text)
            assert wire.loads(f" \n{text}\r\n") == json.loads(text)
            assert wire.loads(text.encode()) == json.loads(text.encode())
    assert math.isnan(wire.loads("NaN")) and wire.loads('"x"') == "x" and wire.loads("12") == 12
    for bad in ("", " ", "{", '{"a": 1} x', "nul", "[1,]", '{"a": "\x01"}', "{'a': 1}", "\ufeff{}"):
        with pytest.raises(ValueError):
            json.loads(bad)
        with pytest.raises(ValueError):
            wire.loads(bad)
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError):
        wire.dumps(looped)
    assert wire.dumps({"after": "a refused cycle"}) == '{"after": "a refused cycle"}'
    with pytest.raises(TypeError):
        wire.dumps({"a": object()})


def test_wire_hmac_is_the_hmac_modules() -> None:
    rng = random.Random(5)
    for size in (0, 1, 32, 63, 64, 65, 128, 200):
        key, message = rng.randbytes(size), rng.randbytes(rng.randrange(0, 300))
        assert wire.hmac_sha256(key, message) == hmac.new(key, message, "sha256").hexdigest()
    token = "ab" * 32
    assert channel.proof(token, "hook", "n", "c") == hmac.new(token.encode(), b"memx-hook|n|c", "sha256").hexdigest()
    assert wire.same("abc", "abc") and not wire.same("abc", "abd")


def test_the_light_way_finds_the_data_folder_and_keeps_the_whole_ways_constants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    monkeypatch.delenv("MEMX_HOME", raising=False)
    for xdg in (None, str(tmp_path / "xdg")):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        for given in (None, "rel/data", "~/data", str(tmp_path / "abs")):
            assert quick.data_folder(given) == str(load_settings(home=given).home), (xdg, given)
    monkeypatch.setenv("MEMX_HOME", "~/env-data")
    assert quick.data_folder(None) == str(load_settings().home) == str(tmp_path / "me" / "env-data")
    assert quick.CHILD_MARKER == CHILD_MARKER and quick.MAX_STDIN == logs.MAX_STDIN
    assert quick.PROMPT_WAIT == 2 * client_hook.HELPER_WAIT and helper.PROTOCOL == channel.PROTOCOL


def test_only_a_plain_hook_command_line_takes_the_light_way() -> None:
    assert quick.hook_call(["hook", "claude-code"]) == (None, "claude-code", False)
    assert quick.hook_call(["--home", "/d", "hook", "cursor", "--json"]) == ("/d", "cursor", True)
    assert quick.hook_call(["hook", "gemini", "--home=/e"]) == ("/e", "gemini", False)
    for other in (
        ["hook", "codex", '{"type": "agent-turn-complete"}'],  # Codex's notification: the whole way
        ["hook", "worker"],
        ["hook"],
        ["--scope", "x", "hook", "claude-code"],
        ["recall", "hook"],
        ["hook", "claude-code", "--home"],
    ):
        assert quick.hook_call(other) is None, other


def test_worth_asking_is_what_the_moment_use_case_can_answer() -> None:
    for phase in ("before", "after"):
        for tool in ("shell", "edit", "read", "other"):
            for command, paths in ((None, ()), ("make test", ()), (None, ("a.py",)), ("make", ("a.py",))):
                for failed in (False, True) if phase == "after" else (False,):
                    event = ToolEvent("c", "s", "/w", phase, tool, command, None, "", paths, failed)  # type: ignore[arg-type]
                    assert worth_asking(event) == (need_of(event) is not None), event


TOOL_NAMES = (
    "Bash", "Shell", "run_shell_command", "exec_command", "Read", "read_file", "read_many_files", "Edit", "Write",
    "MultiEdit", "NotebookEdit", "apply_patch", "replace", "write_file", "Grep", "Glob", "WebFetch", "Task",
    "TodoWrite", "mcp__memx__recall", "", "LS",
)  # fmt: skip


def test_a_tool_call_the_light_way_settles_alone_is_one_memx_could_never_answer() -> None:
    table, kinds = client_hook.routes(), tool_kinds()
    shapes = {
        "claude-code": claude_failure("/w"),
        "codex": codex_post("/w"),
        "gemini": gemini_after("/w"),
        "cursor": cursor_failure("/w"),
    }
    settled = asked = 0
    for client, base in shapes.items():
        hooks = TOOL_HOOKS[client]
        for event, route in table[client].items():
            if "kinds" not in route:
                continue
            for name in TOOL_NAMES:
                tool_input = {"command": "git push", "file_path": "/w/a.py", "path": "/w/b.py"}
                payload = {**base, "hook_event_name": event, "tool_name": name, "tool_input": tool_input}
                read = hooks.read(payload)
                would_ask = read is not None and answerable(read, hooks)
                if kinds.get(name.lower(), "other") not in route["kinds"]:
                    settled += 1
                    assert not would_ask, (client, event, name)
                    whole = hooks.write(event, "")
                    assert route["empty"] == (whole + "\n" if whole else ""), (client, event)
                else:
                    asked += 1
    assert settled > 100 and asked > 20  # both ways are taken
    assert table["gemini"]["BeforeTool"]["kinds"] == [] and table["cursor"]["preToolUse"]["kinds"] == []
    assert table["claude-code"]["PreToolUse"]["kinds"] == ["shell", "edit"]
    assert table["claude-code"]["PostToolUse"]["kinds"] == ["shell", "read"]
    assert "SessionStart" in table["claude-code"] and "userPromptSubmitted" in table["copilot-cli"]
    assert "SessionEnd" not in table["claude-code"] and "notify" not in table["codex"]


# -- the real hook process ---------------------------------------------------------------------------------


def hook(
    home: Path, client: str, payload: dict[str, Any] | str, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The installed `memx hook CLIENT` as the client runs it, and the modules it imported."""
    memx = script("memx")
    argv = [sys.executable, "-X", "importtime", *(memx[1:] if memx[0] == sys.executable else memx)]
    done = subprocess.run(
        [*argv, "hook", client, *args],
        input=payload if isinstance(payload, str) else json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=env_for(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="2", **env),
        timeout=120,
    )
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done, modules


def bare_interpreter() -> set[str]:
    """What `python -c pass` imports here (site and this environment's .pth files may import some)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def wrapper_imports() -> set[str]:
    """What the installed `memx` script imports itself before memx: pip's console-script wrapper imports `re`
    (for `sys.argv[0]`), uv's does not. Not the hook's doing; counted in its time all the same."""
    memx = script("memx")
    path = Path(memx[1] if memx[0] == sys.executable and len(memx) > 1 else memx[0])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    return {line.split()[1] for line in text.splitlines() if line.startswith("import ") and len(line.split()) == 2}


BARE = bare_interpreter() | wrapper_imports()


def light(modules: set[str]) -> bool:
    return "memx_mcp.hooks.quick" in modules and not (modules - BARE) & set(HEAVY)


def test_with_the_helper_warm_a_hook_imports_nothing_heavy_and_prints_what_the_whole_way_prints(
    memory: Memory, tmp_path: Path
) -> None:
    memory.remember(PUSH_FIX, scope="global")
    memory.remember(SCHEMA, scope="global")
    memory.remember(REDIS, scope="global")
    home, cwd = memory.settings.home, str(tmp_path)
    with warm_helper(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="2"):
        deadline = time.monotonic() + 60
        while "routes" not in (channel.read_state(str(home)) or {}):  # published once the helper listens
            assert time.monotonic() < deadline, "the helper published no routes"
            time.sleep(0.02)
        prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "redis keeps dropping connections", "cwd": cwd}
        for _ in range(3):  # the helper listens before its model has loaded; a prompt may fail open meanwhile
            said, modules = hook(home, "claude-code", {**prompt, "session_id": "p-1"})
            if REDIS in said.stdout:
                break
        assert said.returncode == 0 and REDIS in said.stdout and light(modules), (
            said.stdout,
            (modules - BARE) & set(HEAVY),
        )
        as_json, modules = hook(home, "claude-code", {**prompt, "session_id": "p-2"}, "--json")
        assert REDIS in json.loads(as_json.stdout)["hookSpecificOutput"]["additionalContext"] and light(modules)

        fix, modules = hook(home, "claude-code", claude_failure(cwd))
        out = json.loads(fix.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "PostToolUseFailure" and "--set-upstream" in out["additionalContext"]
        assert light(modules)
        again, modules = hook(home, "claude-code", claude_failure(cwd))
        assert again.returncode == 0 and again.stdout == "" and light(modules)  # once per session
        cursor, modules = hook(home, "cursor", cursor_failure(cwd))
        assert "--set-upstream" in json.loads(cursor.stdout)["additional_context"] and light(modules)

        edit = {
            "session_id": "e-1",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": f"{cwd}/src/generated/schema.ts", "old_string": "a", "new_string": "b"},
        }
        warned, modules = hook(home, "claude-code", edit)
        assert "npm run codegen" in json.loads(warned.stdout)["hookSpecificOutput"]["additionalContext"]
        # never answerable: settled in the hook process, the client's empty answer
        read, modules = hook(home, "claude-code", {**edit, "session_id": "e-2", "tool_name": "Read"})
        assert read.returncode == 0 and read.stdout == "" and light(modules)
        before, modules = hook(home, "gemini", {**gemini_after(cwd), "hook_event_name": "BeforeTool"})
        assert before.stdout == "{}\n" and light(modules)
        grep = {**gemini_after(cwd), "session_id": "g-2", "tool_name": "search_file_content"}
        searched, modules = hook(home, "gemini", grep)
        assert searched.stdout == "{}\n" and light(modules)

        # everything else takes the whole way, as before
        note, modules = hook(home, "claude-code", {"hook_event_name": "Notification", "message": "x"})
        assert note.returncode == 0 and note.stdout == "" and "memx_mcp.config" in modules
        broken, modules = hook(home, "gemini", "no json at all")
        assert broken.returncode == 0 and broken.stdout == "" and "memx_mcp.config" in modules
        undecodable = subprocess.run(
            [*script("memx"), "hook", "claude-code"],
            input=b'{"hook_event_name": "PostToolUse", "x": "\xff\xfe"}',
            capture_output=True,
            cwd=home.parent,
            env=env_for(home, PYTHONIOENCODING="utf-8:strict"),  # not the C locale's surrogateescape
            timeout=120,
        )
        assert undecodable.returncode == 0 and undecodable.stdout == b""
        child, modules = hook(home, "claude-code", claude_failure(cwd, session="cc-9"), **{CHILD_MARKER: "1"})
        assert child.returncode == 0 and child.stdout == "" and "memx_mcp.config" not in modules
    log = (home / "logs" / "hook.log").read_text()
    assert "ignored event 'Notification'" in log and "gemini hook failed open" in log
    assert "claude-code hook failed open: UnicodeDecodeError" in log


SILENT_HELPER = """
import json, os, socket, sys, time
from memx_mcp import __version__
from memx_mcp.hooks import channel, client_hook, tool_payloads

home = sys.argv[1]
run = os.path.join(home, "run")
os.makedirs(run, mode=0o700, exist_ok=True)
path = os.path.join(run, "hook-helper.sock")
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(4)
token = "5" * 64
state = {"transport": "unix", "path": path, "token": token, "pid": os.getpid(), "version": __version__,
         "protocol": channel.PROTOCOL, "routes": client_hook.routes(), "tool_kinds": tool_payloads.tool_kinds()}
with open(channel.state_path(home), "w") as f:
    json.dump(state, f)
print("ready", flush=True)
held = []
while True:
    conn, _ = server.accept()
    hello = json.loads(channel.read_line(conn, time.monotonic() + 10))["hello"]
    nonce = "6" * 32
    channel.send(conn, {"nonce": nonce, "proof": channel.proof(token, "helper", hello, nonce)})
    channel.read_line(conn, time.monotonic() + 10)  # the call, taken: and never answered
    held.append(conn)
"""


def test_a_helper_that_takes_a_call_and_never_answers_costs_the_hook_its_wait_and_nothing_more(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    silent = subprocess.Popen(
        [sys.executable, "-c", SILENT_HELPER, str(home)], stdout=subprocess.PIPE, text=True, env=env_for(home)
    )
    try:
        assert silent.stdout is not None and silent.stdout.readline().strip() == "ready"
        success = {**claude_failure(str(tmp_path)), "hook_event_name": "PostToolUse", "tool_response": "ok"}
        started = time.monotonic()
        done, modules = hook(home, "claude-code", success)
        took = time.monotonic() - started
        assert done.returncode == 0 and done.stdout == "" and "memx_mcp.config" not in modules  # no whole way
        assert quick.TOOL_WAIT <= took < quick.TOOL_WAIT + 30  # its wait, then fail open (+ a loaded machine)
        gemini, _ = hook(home, "gemini", {**gemini_after(str(tmp_path)), "tool_response": {"llmContent": "ok"}})
        assert gemini.returncode == 0 and gemini.stdout == "{}\n"  # the client's empty answer: pure JSON
    finally:
        silent.kill()
        silent.wait(30)
    log = (home / "logs" / "hook.log").read_text()
    assert log.count("no answer from the warm helper in time") == 2 and "failed open" in log
    assert os.stat(home / "logs" / "hook.log").st_mode & 0o077 == 0
