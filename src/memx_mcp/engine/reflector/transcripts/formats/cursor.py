"""Cursor agent transcripts (``~/.cursor/projects/<workspace>/agent-transcripts/<id>.jsonl``, or
``<id>/<id>.jsonl`` from the editor).

Each line is ``{"role": "user" | "assistant", "message": {"content": [...]}}`` with Claude-API-style blocks:
``text``, ``tool_use`` (``name`` and ``input``, no id) and ``tool_result``. A person's text comes wrapped as
``<user_query>…</user_query>``, sometimes after a ``<timestamp>`` line. Cursor's tools are renamed to the
Claude Code tools of the same meaning (``Shell`` → ``Bash``, ``StrReplace`` → ``Edit``); their file
argument is ``path``, not ``file_path``."""

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
        if kind == "text" and str(block.get("text", "")).strip():
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
    return Parsed("cursor", tuple(events), skipped=skipped)
