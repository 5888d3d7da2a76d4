"""Gemini CLI saved chats (``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl``).

Read as Gemini CLI's own loader reads them (packages/core/src/services/chatRecordingService.ts): a first
line of metadata (``sessionId``, ``projectHash``, …), then message records appended as they change, so
a message id seen again replaces the earlier record; ``{"$rewindTo": id}`` drops that message and all
after it; ``{"$set": {"messages": [...]}}`` replaces the lot. Older versions wrote one JSON object with
every message in ``messages``. A message is ``user`` or ``gemini`` (``info``, ``error``, ``warning`` are
the CLI's own notes); a ``gemini`` message carries its ``toolCalls`` with their results, whose shell
output ends ``Exit Code: N`` when the command failed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText

_TYPES = ("user", "gemini", "info", "error", "warning")
# What Gemini CLI 0.44 puts before the first prompt as a "user" message (the date, the OS, the folder tree):
# the CLI's, not the person's
_SESSION_CONTEXT = re.compile(r"<session_context>.*?(?:</session_context>|\Z)\s*", re.S)
_UNTRUSTED = re.compile(r"^\s*<untrusted_context>\n?|\n?</untrusted_context>\s*$")
_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
# The frame of run_shell_command's answer (packages/core/src/tools/shell.ts): "Output: …", then the lines
# it adds after the output.
_FRAME = re.compile(r"^(?:Exit Code|Signal|Background PIDs|Process Group PGID): .*$")


def _is_message(r: Mapping[str, Any]) -> bool:
    return isinstance(r.get("id"), str) and r.get("type") in _TYPES and "content" in r and "message" not in r


def is_gemini(records: list[Mapping[str, Any]]) -> bool:
    head = records[:50]
    return any(
        ("sessionId" in r and "projectHash" in r) or "$rewindTo" in r or "$set" in r or _is_message(r) for r in head
    )


def _messages(records: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Mapping[str, Any]], str]:
    messages: dict[str, Mapping[str, Any]] = {}
    session = ""
    for r in records:
        session = session or str(r.get("sessionId") or "")
        if "$rewindTo" in r:
            ids = list(messages)
            cut = ids.index(r["$rewindTo"]) if r["$rewindTo"] in ids else 0
            messages = {i: messages[i] for i in ids[:cut]}
        elif isinstance(r.get("$set"), Mapping) and isinstance(r["$set"].get("messages"), list):
            messages = {m["id"]: m for m in r["$set"]["messages"] if isinstance(m, Mapping) and _is_message(m)}
        elif _is_message(r):
            messages[str(r["id"])] = r
        elif isinstance(r.get("messages"), list):  # the metadata line of an older file held every message
            messages.update((m["id"], m) for m in r["messages"] if isinstance(m, Mapping) and _is_message(m))
    return messages, session


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    return "\n".join(str(p["text"]) for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str))


def _output(result: Any) -> str:
    parts = result if isinstance(result, list) else [result]
    texts = []
    for p in parts:
        if not isinstance(p, Mapping):
            continue
        call = p.get("functionResponse")
        response = call.get("response") if isinstance(call, Mapping) else None
        if isinstance(response, Mapping):
            value = response.get("output", response.get("content", response.get("error", "")))
            texts.append(value if isinstance(value, str) else str(value))
        elif isinstance(p.get("text"), str):
            texts.append(p["text"])
    return _UNTRUSTED.sub("", "\n".join(texts))


def _call(call: Mapping[str, Any]) -> tuple[ToolCall, ToolResult]:
    call_id, name = str(call.get("id", "")), str(call.get("name", ""))
    args: dict[str, Any] = dict(call["args"]) if isinstance(call.get("args"), Mapping) else {}
    if name == "run_shell_command":
        tool = ToolCall(call_id, "Bash", {"command": str(args.get("command", ""))})
    elif name == "replace":
        tool = ToolCall(call_id, "Edit", {**args, "file_path": str(args.get("file_path", ""))})
    elif name in ("write_file", "read_file"):
        path = args.get("file_path", args.get("absolute_path", ""))
        tool = ToolCall(call_id, "Write" if name == "write_file" else "Read", {**args, "file_path": str(path)})
    else:
        tool = ToolCall(call_id, name, args)
    text = _output(call.get("result"))
    code = _EXIT.search(text)
    if name == "run_shell_command" and text.startswith("Output: "):
        kept = [line for line in text.removeprefix("Output: ").splitlines() if not _FRAME.match(line)]
        text = "\n".join(kept).removeprefix("(empty)").strip()
    error = True if call.get("status") == "error" else (int(code.group(1)) != 0 if code else None)
    return tool, ToolResult(call_id, text, error)


def parse_gemini(records: list[Mapping[str, Any]], skipped: int) -> Parsed:
    messages, session = _messages(records)
    events: list[Event] = []
    for m in messages.values():
        ts = str(m.get("timestamp") or "") or None
        text = _text(m.get("content"))
        if m.get("type") == "user":
            text = _SESSION_CONTEXT.sub("", text)
        if m.get("type") == "user" and text.strip():
            events.append(UserText(text, ts))
        elif m.get("type") == "gemini":
            if text.strip():
                events.append(AssistantText(text, ts))
            for call in m.get("toolCalls") or []:
                if isinstance(call, Mapping):
                    events += _call(call)
    return Parsed("gemini", tuple(events), session, skipped=skipped)
