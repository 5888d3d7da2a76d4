"""Cursor agent transcripts (``~/.cursor/projects/<workspace>/agent-transcripts/<id>.jsonl``, or
``<id>/<id>.jsonl`` from the editor).

Each line is ``{"role": "user" | "assistant", "message": {"content": [...]}}`` with Claude-API-style blocks:
``text``, ``tool_use`` (``name`` and ``input``, no id) and ``tool_result``. A person's text comes wrapped as
``<user_query>…</user_query>``, sometimes after a ``<timestamp>`` line. Cursor's tools are renamed to the
Claude Code tools of the same meaning (``Shell`` → ``Bash``, ``StrReplace`` → ``Edit``); their file
argument is ``path``, not ``file_path``.

As Cursor really writes them, these files hold tool calls without ids and without any result, and thinking
as ``[REDACTED]``: the reader keeps what is there and says (``results_recorded`` False) that no call's
outcome is known, so nothing is learnt as having worked. The older ``.txt`` form is text: ``user:`` and
``A:`` paragraphs, the calls inside the assistant's text as ``[Tool call] NAME`` with indented
``key: value`` lines, and ``[Tool result] NAME`` (empty in the files seen) and ``[Thinking] …`` lines."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TIMESTAMP = re.compile(r"^\s*<timestamp>.*?</timestamp>\s*", re.DOTALL)
_RENAMED = {"Shell": "Bash", "StrReplace": "Edit", "Write": "Write", "Read": "Read"}


def is_cursor(records: list[Mapping[str, Any]]) -> bool:
    """A role beside the message, not inside it (Claude Code's records carry ``type`` and ``message.role``)."""
    head = records[:50]
    return any(r.get("role") in ("user", "assistant") and isinstance(r.get("message"), Mapping) for r in head) and (
        not any(r.get("type") in ("user", "assistant") for r in head)
    )


def _user(text: str) -> str:
    found = _QUERY.findall(text)
    return "\n".join(found) if found else _TIMESTAMP.sub("", text)


def _args(name: str, raw: Any) -> dict[str, Any]:
    args = dict(raw) if isinstance(raw, Mapping) else {}
    if "path" in args and "file_path" not in args:
        args["file_path"] = args.pop("path")
    if name == "Write" and "contents" in args:
        args["content"] = args.pop("contents")
    return args


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def _blocks(role: str, content: Any, open_calls: deque[str], counter: list[int]) -> Iterable[Event]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip() not in ("", "[REDACTED]"):
            text = str(block["text"])
            yield UserText(_user(text)) if role == "user" else AssistantText(text)
        elif kind == "tool_use":
            counter[0] += 1
            call_id = str(block.get("id") or f"cursor-{counter[0]}")  # Cursor writes no id: pair in order
            name = str(block.get("name", ""))
            open_calls.append(call_id)
            yield ToolCall(call_id, _RENAMED.get(name, name), _args(name, block.get("input")))
        elif kind == "tool_result":
            given = block.get("tool_use_id")
            call_id = str(given) if given else (open_calls.popleft() if open_calls else "")
            if given and given in open_calls:
                open_calls.remove(str(given))
            error = block.get("is_error")
            yield ToolResult(call_id, _result_text(block.get("content")), error if isinstance(error, bool) else None)


_NO_RESULTS = (
    "Cursor's transcript records tool calls without their results: what each call did, and whether it "
    "worked, is not known"
)


def parse_cursor(records: list[Mapping[str, Any]], skipped: int) -> Parsed:
    events: list[Event] = []
    open_calls: deque[str] = deque()
    counter = [0]
    for r in records:
        message = r.get("message")
        role = str(r.get("role", ""))
        if not isinstance(message, Mapping) or role not in ("user", "assistant", "tool"):
            continue  # turn_ended and other markers
        events += _blocks("user" if role == "user" else "assistant", message.get("content"), open_calls, counter)
    calls = sum(isinstance(e, ToolCall) for e in events)
    results = sum(isinstance(e, ToolResult) for e in events)
    if calls and not results:
        return Parsed("cursor", tuple(events), skipped=skipped, notes=(_NO_RESULTS,), results_recorded=False)
    return Parsed("cursor", tuple(events), skipped=skipped)


_SPEAKER = re.compile(r"^(user|A):\s*$")
_TXT_CALL = re.compile(r"^\[Tool call\]\s+(\S+)\s*$")
_TXT_RESULT = re.compile(r"^\[Tool result\]\s*(\S*)\s*$")
_TXT_ARG = re.compile(r"^\s{2,}([A-Za-z_][\w-]*)\s*[:=]\s?(.*)$")


def is_cursor_text(text: str) -> bool:
    """The older ``.txt`` agent transcript: a ``user:`` line, then ``<user_query>``, and ``A:`` paragraphs."""
    head = text[:20000]
    return bool(re.search(r"(?m)^user:\s*\n\s*<user_query>", head)) and bool(re.search(r"(?m)^A:\s*$", head))


def parse_cursor_text(text: str) -> Parsed:
    events: list[Event] = []
    speaker = ""
    prose: list[str] = []
    call: tuple[str, str, dict[str, str]] | None = None  # (id, name, args) of the call being read
    result: tuple[str, list[str]] | None = None
    last_key = ""
    counter = 0
    open_calls: deque[str] = deque()

    def flush_prose() -> None:
        body = "\n".join(prose).strip()
        prose.clear()
        if body and body != "[REDACTED]":
            events.append(UserText(_user(body)) if speaker == "user" else AssistantText(body))

    def flush_call() -> None:
        nonlocal call, result
        if call is not None:
            call_id, name, args = call
            events.append(ToolCall(call_id, _RENAMED.get(name, name), _args(name, args)))
            open_calls.append(call_id)
            call = None
        if result is not None:
            name, lines = result
            body = "\n".join(lines).strip()
            if body and open_calls:
                events.append(ToolResult(open_calls.popleft(), body, None))
            result = None

    for line in text.splitlines():
        who = _SPEAKER.match(line)
        tool = _TXT_CALL.match(line) if speaker == "A" else None
        answer = _TXT_RESULT.match(line) if speaker == "A" else None
        if who:
            flush_prose()
            flush_call()
            speaker = "user" if who.group(1) == "user" else "A"
        elif tool:
            flush_prose()
            flush_call()
            counter += 1
            call, last_key = (f"cursor-{counter}", tool.group(1), {}), ""
        elif answer:
            flush_call()
            result = (answer.group(1), [])
        elif line.startswith("[Thinking]"):
            flush_prose()
            flush_call()
        elif call is not None and (arg := _TXT_ARG.match(line)):
            call[2][arg.group(1)] = arg.group(2)
            last_key = arg.group(1)
        elif call is not None and line.startswith("    ") and last_key:
            call[2][last_key] += "\n" + line.strip()
        elif result is not None and (line.startswith("  ") or not line.strip()):
            result[1].append(line[2:])
        else:
            flush_call()
            prose.append(line)
    flush_prose()
    flush_call()
    calls = sum(isinstance(e, ToolCall) for e in events)
    if calls and not any(isinstance(e, ToolResult) for e in events):
        return Parsed("cursor-txt", tuple(events), notes=(_NO_RESULTS,), results_recorded=False)
    return Parsed("cursor-txt", tuple(events))
