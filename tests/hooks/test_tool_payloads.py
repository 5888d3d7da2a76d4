"""Each client's tool-hook payloads read into one ToolEvent, and memx's answer in the shape each client adds to
the model's context; end to end through the real hook process and its warm helper."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.tool_events import from_wire, to_wire
from memx_mcp.hooks.tool_payloads import read_event, run_tool_hook
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..helpers import env_for, run_hook, script

PUSH_FIX = (
    'When `git push` fails with "fatal: The current branch spotter-gqc has no upstream branch.": '
    "`git push --set-upstream origin spotter-gqc` worked."
)
SCHEMA = "Never edit src/generated/schema.ts by hand: `npm run codegen` overwrites it from schema.graphql."
PUSH_OUTPUT = (
    "fatal: The current branch feature-42 has no upstream branch.\nTo push the current branch, use --set-upstream"
)


def claude_failure(cwd: str, session: str = "cc-1") -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"{cwd}/t.jsonl",
        "cwd": cwd,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "git push 2>&1", "description": "Push"},
        "tool_use_id": "toolu_01",
        "error": f"Exit code 128\n{PUSH_OUTPUT}",
        "is_interrupt": False,
    }


def codex_post(cwd: str) -> dict[str, Any]:
    return {
        "session_id": "019a-codex",
        "turn_id": "t1",
        "transcript_path": None,
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "model": "gpt-5",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "git push"},
        "tool_response": f"Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 128\nOutput:\n{PUSH_OUTPUT}",
        "tool_use_id": "call_1",
    }


def gemini_after(cwd: str) -> dict[str, Any]:
    return {
        "session_id": "gem-1",
        "transcript_path": f"{cwd}/chat.json",
        "cwd": cwd,
        "hook_event_name": "AfterTool",
        "timestamp": "2026-12-04T05:00:00Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "git push", "description": "push"},
        "tool_response": {
            "llmContent": f"Output: {PUSH_OUTPUT}\nExit Code: 128",
            "returnDisplay": PUSH_OUTPUT,
        },
    }


def cursor_failure(cwd: str) -> dict[str, Any]:
    return {
        "conversation_id": "cur-1",
        "generation_id": "g1",
        "hook_event_name": "postToolUseFailure",
        "workspace_roots": [cwd],
        "tool_name": "Shell",
        "tool_input": {"command": "git push"},
        "error_message": PUSH_OUTPUT,
        "failure_type": "error",
    }


def test_each_clients_payload_reads_into_the_same_event() -> None:
    cwd = "/work/repo"
    events = [
        read_event("claude-code", claude_failure(cwd)),
        read_event("codex", codex_post(cwd)),
        read_event("gemini", gemini_after(cwd)),
        read_event("cursor", cursor_failure(cwd)),
    ]
    for e in events:
        assert e is not None and e.tool == "shell" and e.phase == "after" and e.failed
        assert e.command is not None and e.command.startswith("git push") and "no upstream branch" in e.output
        assert e.cwd == cwd and e.session_id
        assert from_wire(json.loads(json.dumps(to_wire(e)))) == e
    assert [e.exit_code for e in events if e] == [128, 128, 128, None]
    ok = read_event(
        "cursor",
        {**cursor_failure(cwd), "hook_event_name": "postToolUse", "tool_output": '{"output":"x","exitCode":0}'},
    )
    assert ok is not None and not ok.failed and ok.exit_code == 0
    patch = "*** Begin Patch\n*** Update File: src/generated/schema.ts\n@@\n-a\n+b\n*** End Patch"
    pre = read_event(
        "codex",
        {
            **codex_post(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
        },
    )
    assert (
        pre is not None and pre.tool == "edit" and pre.phase == "before" and pre.paths == ("src/generated/schema.ts",)
    )
    write = read_event(
        "claude-code",
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": f"{cwd}/a.py"}},
    )
    assert write is not None and write.tool == "edit" and write.paths == (f"{cwd}/a.py",)
    assert read_event("claude-code", {**claude_failure(cwd), "is_interrupt": True}) is None  # the user stopped it


def test_each_clients_answer_comes_back_in_its_own_shape_from_the_warm_helper(
    tmp_path: Path, settings: Settings, store: LanceStore, embedder: Embedder
) -> None:
    memory = Memory(settings, store, ReadyEmbedder(embedder), cwd=tmp_path)
    memory.remember(PUSH_FIX, scope="global")
    memory.remember(SCHEMA, scope="global")
    cwd = str(tmp_path)
    codex = json.loads(run_tool_hook("codex", codex_post(cwd), settings))["hookSpecificOutput"]
    assert codex["hookEventName"] == "PostToolUse" and "--set-upstream" in codex["additionalContext"]
    gemini = json.loads(run_tool_hook("gemini", gemini_after(cwd), settings))
    assert gemini["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "--set-upstream" in gemini["hookSpecificOutput"]["additionalContext"]
    cursor = json.loads(run_tool_hook("cursor", cursor_failure(cwd), settings))
    assert set(cursor) == {"additional_context"} and "--set-upstream" in cursor["additional_context"]
    # nothing to say: Gemini and Cursor still get pure JSON, Claude Code and Codex nothing at all
    quiet = {**gemini_after(cwd), "session_id": "gem-2", "tool_input": {"command": "ls"}}
    quiet["tool_response"] = {"llmContent": "Output: a b\nExit Code: 0"}
    assert run_tool_hook("gemini", quiet, settings) == "{}"
    assert run_tool_hook("gemini", {**quiet, "hook_event_name": "BeforeTool"}, settings) == "{}"
    assert (
        run_tool_hook(
            "cursor",
            {
                **cursor_failure(cwd),
                "conversation_id": "cur-2",
                "tool_input": {"command": "ls"},
                "error_message": "ls: x: No such file",
            },
            settings,
        )
        == "{}"
    )
    assert (
        run_tool_hook("codex", {**codex_post(cwd), "session_id": "c-2", "tool_input": {"command": "ls"}}, settings)
        == ""
    )


def _answered(home: Path, payload: dict[str, Any], tries: int = 4) -> subprocess.CompletedProcess[str]:
    """The hook run again while a helper it started is still loading its model (a hook waits ~8 s for it, then
    fails open with nothing said and nothing marked as handed back: on a loaded machine that can happen)."""
    for _ in range(tries - 1):
        done = run_hook(home, payload)
        if done.stdout:
            return done
    return run_hook(home, payload)


def test_claude_codes_tool_hooks_hand_back_the_fix_and_the_warning_through_the_real_hook_process(
    tmp_path: Path, settings: Settings, store: LanceStore, embedder: Embedder
) -> None:
    memory = Memory(settings, store, ReadyEmbedder(embedder), cwd=tmp_path)
    memory.remember(PUSH_FIX, scope="global")
    memory.remember(SCHEMA, scope="global")
    cwd = str(tmp_path)
    done = _answered(settings.home, claude_failure(cwd))
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]  # plain stdout is not added for tool events
    assert out["hookEventName"] == "PostToolUseFailure" and "--set-upstream" in out["additionalContext"]
    helper = json.loads((settings.home / "run" / "hook-helper.json").read_text())["pid"]
    os.kill(int(helper), signal.SIGTERM)  # what was handed back is on disk: a new helper knows it too
    for _ in range(200):
        if not (settings.home / "run" / "hook-helper.json").exists():
            break
        time.sleep(0.05)
    other = _answered(settings.home, claude_failure(cwd, session="cc-2"))  # a new helper answers another session
    assert "--set-upstream" in json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"]
    assert json.loads((settings.home / "run" / "hook-helper.json").read_text())["pid"] != helper
    again = run_hook(settings.home, claude_failure(cwd))
    assert again.returncode == 0 and again.stdout == ""  # once per session, across hook processes and helpers
    pre = {
        "session_id": "cc-1",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{cwd}/src/generated/schema.ts", "old_string": "a", "new_string": "b"},
    }
    warned = json.loads(run_hook(settings.home, pre).stdout)["hookSpecificOutput"]
    assert warned["hookEventName"] == "PreToolUse" and "npm run codegen" in warned["additionalContext"]
    other = run_hook(settings.home, {**pre, "tool_input": {"file_path": f"{cwd}/src/app.ts"}})
    assert other.returncode == 0 and other.stdout == ""


def _client_hook(home: Path, client: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`memx hook CLIENT` as the client runs it after `memx install CLIENT`: the payload on stdin."""
    return subprocess.run(
        [*script("memx"), "hook", client],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=home.parent,
        env=env_for(home, MEMX_HOOK_DAEMON_IDLE_MINUTES="1"),
        timeout=60,
    )


def test_codex_gemini_and_cursor_hooks_hand_back_the_fix_through_memx_hook_once_per_session(
    tmp_path: Path, settings: Settings, store: LanceStore, embedder: Embedder
) -> None:
    memory = Memory(settings, store, ReadyEmbedder(embedder), cwd=tmp_path)
    memory.remember(PUSH_FIX, scope="global")
    cwd = str(tmp_path)
    shapes = {
        "codex": (codex_post(cwd), lambda out: json.loads(out)["hookSpecificOutput"]["additionalContext"]),
        "gemini": (gemini_after(cwd), lambda out: json.loads(out)["hookSpecificOutput"]["additionalContext"]),
        "cursor": (cursor_failure(cwd), lambda out: json.loads(out)["additional_context"]),
    }
    for client, (payload, context) in shapes.items():
        first = _client_hook(settings.home, client, payload)
        for _ in range(3):  # the first call starts the helper; on a loaded machine it may fail open meanwhile
            if "--set-upstream" in first.stdout:
                break
            first = _client_hook(settings.home, client, payload)
        assert first.returncode == 0 and "--set-upstream" in context(first.stdout), (client, first)
        again = _client_hook(settings.home, client, payload)  # the same session: handed back once
        assert again.returncode == 0 and "--set-upstream" not in again.stdout, (client, again.stdout)
