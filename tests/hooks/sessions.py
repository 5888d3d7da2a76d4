"""One coding session written as each client writes it, so that a test can check every format yields the
bullet the Claude Code transcript yields. The shapes follow each client's own files: Cursor's agent
transcripts (role beside ``message``, ``<user_query>`` around the prompt, ``tool_use`` without ids, Cursor's
tool names), Codex CLI's rollout (``session_meta``, ``turn_context``, ``response_item`` and ``event_msg``
wrappers, as in tests/data/formats/codex.jsonl), Gemini CLI's saved chat (a metadata line, message records
re-appended as they change, ``$set`` updates, tool calls with ``functionResponse`` results; and the older
single JSON object)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROMPT = "The test suite fails on a fresh checkout, can you fix it?"
FAILED = "ImportError while loading conftest '/home/dev/app/tests/conftest.py'.\nModuleNotFoundError: No module named 'requests'"
# (command, output, failed)
RUNS = [
    ("pytest -q", FAILED, True),
    ("pip install requests", "Successfully installed requests-2.32.3", False),
    ("pytest -q", "5 passed in 0.41s", False),
]
ANSWER = "The tests import requests, which was not installed; after pip install requests all 5 tests pass."
BULLET = "after running `pip install requests`, it succeeded"  # what the rules keep of it


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def claude_code(session: str, cwd: str) -> str:
    out: list[dict[str, Any]] = [
        {"type": "user", "sessionId": session, "cwd": cwd, "message": {"role": "user", "content": PROMPT}}
    ]
    for n, (command, output, failed) in enumerate(RUNS):
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}
        out.append({"type": "assistant", "sessionId": session, "message": {"role": "assistant", "content": [use]}})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output, "is_error": failed}
        out.append({"type": "user", "sessionId": session, "message": {"role": "user", "content": [result]}})
    text = {"type": "text", "text": ANSWER}
    out.append({"type": "assistant", "sessionId": session, "message": {"role": "assistant", "content": [text]}})
    return _lines(out)


def cursor() -> str:
    query = f"<timestamp>Tuesday, Dec 1, 2026, 1:40 PM</timestamp>\n<user_query>\n{PROMPT}\n</user_query>"
    out: list[dict[str, Any]] = [{"role": "user", "message": {"content": [{"type": "text", "text": query}]}}]
    for command, output, failed in RUNS:
        use = {"type": "tool_use", "name": "Shell", "input": {"command": command, "description": "run it"}}
        out.append({"role": "assistant", "message": {"content": [{"type": "text", "text": "Running it."}, use]}})
        text = output + ("\nExit code: 1" if failed else "")
        out.append({"role": "user", "message": {"content": [{"type": "tool_result", "content": text}]}})
    out.append({"role": "assistant", "message": {"content": [{"type": "text", "text": ANSWER}]}})
    out.append({"type": "turn_ended"})
    return _lines(out)


def codex(thread: str, cwd: str) -> str:
    ts = "2026-12-01T13:40:0{}.000Z"
    meta = {"id": thread, "timestamp": ts.format(0), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.120.0"}
    out: list[dict[str, Any]] = [
        {"timestamp": ts.format(0), "type": "session_meta", "payload": {**meta, "source": "cli"}},
        {"timestamp": ts.format(1), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.1-codex"}},
        {
            "timestamp": ts.format(1),
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]},
        },
        {"timestamp": ts.format(1), "type": "event_msg", "payload": {"type": "user_message", "message": PROMPT}},
    ]
    for n, (command, output, failed) in enumerate(RUNS):
        call = f"call_{n}"
        arguments = json.dumps({"cmd": command, "workdir": cwd})
        out.append(
            {
                "timestamp": ts.format(2 + n),
                "type": "response_item",
                "payload": {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call},
            }
        )
        code = 1 if failed else 0
        end = {"type": "exec_command_end", "call_id": call, "aggregated_output": output + "\n", "exit_code": code}
        out.append({"timestamp": ts.format(2 + n), "type": "event_msg", "payload": end})
        body = f"Chunk ID: {n}\nWall time: 0.4 seconds\nProcess exited with code {code}\nOutput:\n{output}"
        out.append(
            {
                "timestamp": ts.format(2 + n),
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": call, "output": body},
            }
        )
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]}
    out.append({"timestamp": ts.format(8), "type": "response_item", "payload": answer})
    out.append(
        {"timestamp": ts.format(8), "type": "event_msg", "payload": {"type": "agent_message", "message": ANSWER}}
    )
    return _lines(out)


def _gemini_messages() -> list[dict[str, Any]]:
    calls = []
    for n, (command, output, failed) in enumerate(RUNS):
        text = f"Output: {output}" + ("\nExit Code: 1" if failed else "") + "\nProcess Group PGID: 4242"
        response = {"id": f"run_shell_command-{n}", "name": "run_shell_command", "response": {"output": text}}
        calls.append(
            {
                "id": f"run_shell_command-{n}",
                "name": "run_shell_command",
                "args": {"command": command, "description": "Run it."},
                "result": [{"functionResponse": response}],
                "status": "success",
                "timestamp": "2026-12-01T13:40:02.000Z",
                "displayName": "Shell",
            }
        )
    ts = "2026-12-01T13:40:01.000Z"
    return [
        {"id": "m-user", "timestamp": ts, "type": "user", "content": [{"text": PROMPT}]},
        {
            "id": "m-tools",
            "timestamp": ts,
            "type": "gemini",
            "content": "",
            "toolCalls": calls,
            "model": "gemini-3-pro",
        },
        {"id": "m-answer", "timestamp": ts, "type": "gemini", "content": ANSWER, "model": "gemini-3-pro"},
    ]


def gemini(session: str) -> str:
    """The JSONL of Gemini CLI 0.3x: the tool message is appended once per tool call, as it grows, and a
    rewound draft answer comes before the real one."""
    user, tools, answer = _gemini_messages()
    meta = {"sessionId": session, "projectHash": "9f2c" * 16, "startTime": user["timestamp"], "kind": "main"}
    out: list[dict[str, Any]] = [meta, user]
    for n in range(1, len(tools["toolCalls"]) + 1):
        out.append({**tools, "toolCalls": tools["toolCalls"][:n]})
        out.append({"$set": {"lastUpdated": "2026-12-01T13:40:02.000Z"}})
    out.append({"id": "m-draft", "timestamp": user["timestamp"], "type": "gemini", "content": "Let me think again."})
    out.append({"$rewindTo": "m-draft"})
    out.append(answer)
    return _lines(out)


def gemini_legacy(session: str) -> str:
    """The single JSON file of older Gemini CLI versions (``session-….json``)."""
    meta = {"sessionId": session, "projectHash": "9f2c" * 16, "startTime": "2026-12-01T13:40:00.000Z"}
    return json.dumps({**meta, "lastUpdated": "2026-12-01T13:41:00.000Z", "messages": _gemini_messages()}, indent=2)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
