"""Markdown exports of Claude Code sessions ("# Claude Code Session Export", written by export tools such as
cctrace) and similar chat exports with ``## User`` / ``## Assistant`` headings or ``**Human:**`` markers.

A turn opens with a heading that names the speaker (``### 👤 User``, ``## Human``, ``### 🤖 Assistant
(model)``) or a bold ``**User:**`` line. Tool calls are ``🔧 **Tool Use: NAME** (ID: …)`` with a JSON fence
of their input, or ``- tool call: **NAME** {json}``; their results are ``📊 **Tool Result:**`` fences (or
``- tool result (error): …``) in the next user turn, taken in order. Reasoning ``<details>`` are skipped.
Some exporters write a message's content blocks as they are (``## ASSISTANT (date)`` then
``[{'type': 'tool_use', 'id': …, 'name': 'Bash', 'input': {…}}]``, as JSON or as a Python list): those are
read as the tool calls, results, texts and reasoning they hold."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText

# A heading that is only a speaker (with an emoji, a model in brackets or a number): "## Claude Code Chat
# History" inside a pasted tool result is not a turn.
_HEADING = re.compile(
    r"^#{1,4}[ \t]*(?:[^\w\s#]+[ \t]*)?(User|Human|You|Prompt|Assistant|Claude|AI|Response)"
    r"[ \t]*(?:\([^)\n]*\)|\d+|:)?[ \t]*$",
    re.I | re.M,
)
_BOLD = re.compile(r"^\*\*(User|Human|Assistant|Claude)\s*:\*\*\s?", re.I | re.M)
_USERS = frozenset({"user", "human", "you", "prompt"})
_SESSION = re.compile(r"^\*\*Session ID:\*\*\s*`?([\w-]+)`?", re.M)
_PROJECT = re.compile(r"^\*\*Project(?: Path)?:\*\*\s*`?([^`\n]+)`?", re.M)
_TOOL_USE = re.compile(
    r"^\W*\*\*Tool Use:\s*(?P<name>[\w.:-]+)\*\*(?:\s*\(ID:\s*(?P<id>[\w-]+)\))?[^\n]*\n+```\w*\n"
    r"(?P<args>(?:(?!^\W*\*\*Tool ).)*?)^```",
    re.M | re.S,
)
# A result's fence may hold fences of its own (pasted markdown): it ends at the fence that closes the turn
# or comes just before the next tool marker.
_TOOL_RESULT = re.compile(
    r"^\W*\*\*Tool (?P<kind>Result|Error)(?P<err>\s*\((?:Error|error)\))?:?\*\*:?[^\n]*\n+```\w*\n"
    r"(?P<out>(?:(?!^\W*\*\*Tool ).)*?)^```[ \t]*(?=\s*\Z|\s*\n\W*\*\*Tool )",
    re.M | re.S,
)
_LIST_CALL = re.compile(r"^- tool call:\s*\*\*(?P<name>[\w.:-]+)\*\*\s*(?P<args>\{.*\})?\s*$", re.M)
_LIST_RESULT = re.compile(r"^- tool result(?P<err>\s*\(error\))?:\s?(?P<out>.*?)(?=^- tool |^#|\Z)", re.M | re.S)
_ITALIC_CALL = re.compile(r"^\*(?P<verb>Used|Ran|Read|Edited|Wrote|Searched)\s+(?P<what>.+?)\*\s*$", re.M)
_REASONING = re.compile(
    r"<details>\s*<summary>[^<]*(?:Reasoning|Thinking)[^<]*</summary>(?:(?!<details>).)*?</details>", re.S | re.I
)
_TRAILER = re.compile(r"(?:\s*(?:---|\*\*\[[^\]\n]*\]\*\*))+\s*\Z")  # the separator before the next turn
_NOISE_LINE = re.compile(r"^(?:---|\*\*\[[^\]]+\]\*\*|> \d{1,2}/\d{1,2}/\d{4}.*)\s*$")


_RAW_BLOCKS = re.compile(r"^\s*\[\s*\{\s*[\"'](?:type|tool_use_id)[\"']\s*:", re.S)
RAW_LIMIT = (
    2_000_000  # characters of one message read as raw blocks (a literal that size parses in well under a second)
)


def _raw_blocks(body: str) -> list[Mapping[str, Any]] | None:
    """A message whose whole body is its content blocks, as JSON or as a Python literal; None otherwise."""
    text = body.strip()
    if not _RAW_BLOCKS.match(text) or len(text) > RAW_LIMIT:
        return None
    for load in (json.loads, ast.literal_eval):  # literal_eval reads literals only: nothing in it runs
        try:
            value = load(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list) and all(isinstance(b, Mapping) for b in value):
            return value
    return None


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_block_text(c) for c in content)
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""


def is_session_export(text: str) -> bool:
    head = text[:50000]
    if re.search(r"^#\s*Claude Code Session Export\b", head[:4000], re.M | re.I):
        return True
    roles = {m.group(1).lower() in _USERS for m in _HEADING.finditer(head)}
    roles |= {m.group(1).lower() in _USERS for m in _BOLD.finditer(head)}
    return roles == {True, False}


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {"input": raw.strip()}
    return value if isinstance(value, dict) else {"input": value}


class _Reader:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.pending: list[str] = []
        self.calls = 0
        self.last_user = False

    def call(self, name: str, args: dict[str, Any], call_id: Any = None) -> None:
        self.calls += 1
        call_id = str(call_id) if call_id else f"export-{self.calls}"
        self.pending.append(call_id)
        self.events.append(ToolCall(call_id, name, args))

    def result(self, text: str, error: bool | None) -> None:
        if self.pending:
            self.events.append(ToolResult(self.pending.pop(0), text.strip(), error))

    def blocks(self, user: bool, blocks: list[Mapping[str, Any]]) -> None:
        """A message's raw content blocks: texts, tool calls and their results (by id), reasoning skipped."""
        for b in blocks:
            kind = b.get("type")
            if kind == "text" and str(b.get("text", "")).strip():
                text = str(b["text"]).strip()
                self.events.append(UserText(text) if user else AssistantText(text))
            elif kind == "tool_use":
                args = b.get("input")
                self.call(str(b.get("name") or "tool"), dict(args) if isinstance(args, Mapping) else {}, b.get("id"))
            elif kind == "tool_result" or "tool_use_id" in b:
                call_id = str(b.get("tool_use_id") or "")
                if call_id in self.pending:
                    self.pending.remove(call_id)
                error = b.get("is_error")
                text = _block_text(b.get("content")).strip()
                self.events.append(ToolResult(call_id, text, error if isinstance(error, bool) else None))

    def turn(self, user: bool, body: str) -> None:
        raw = _raw_blocks(_TRAILER.sub("", body))
        if raw is not None:
            self.last_user = user
            self.blocks(user, raw)
            return
        body = _TRAILER.sub("", _REASONING.sub("", body))
        if not user and self.last_user:
            self.pending.clear()  # a new round of calls: an earlier call whose result was not found keeps none
        self.last_user = user

        def use(m: re.Match[str]) -> str:
            self.call(m.group("name"), _args(m.group("args")), m.group("id"))
            return ""

        def listed(m: re.Match[str]) -> str:
            self.call(m.group("name"), _args(m.group("args") or "{}"))
            return ""

        def italic(m: re.Match[str]) -> str:
            verb, what = m.group("verb"), m.group("what").strip().strip("`")
            if verb == "Ran":
                self.call("Bash", {"command": what})
            elif verb == "Read":
                self.call("Read", {"file_path": what})
            elif verb in ("Edited", "Wrote"):
                self.call("Edit" if verb == "Edited" else "Write", {"file_path": what})
            else:
                self.call(what, {})
            return ""

        def result(m: re.Match[str]) -> str:
            error = m.group("kind") == "Error" or bool(m.group("err"))
            self.result(m.group("out"), True if error else None)
            return ""

        def list_result(m: re.Match[str]) -> str:
            self.result(m.group("out"), True if m.group("err") else None)
            return ""

        rest = _TOOL_USE.sub(use, body)
        rest = _LIST_CALL.sub(listed, rest)
        rest = _ITALIC_CALL.sub(italic, rest)
        rest = _TOOL_RESULT.sub(result, rest)
        rest = _LIST_RESULT.sub(list_result, rest)
        text = "\n".join(ln for ln in rest.splitlines() if not _NOISE_LINE.match(ln.strip())).strip()
        if text:
            self.events.append(UserText(text) if user else AssistantText(text))


def parse_session_export(text: str) -> Parsed:
    reader = _Reader()
    marks = sorted([*_HEADING.finditer(text), *_BOLD.finditer(text)], key=lambda m: m.start())
    for n, m in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
        reader.turn(m.group(1).lower() in _USERS, text[m.end() : end])
    session, project = _SESSION.search(text[:4000]), _PROJECT.search(text[:4000])
    return Parsed(
        "claude-export",
        tuple(reader.events),
        session.group(1) if session else "",
        project.group(1).strip() if project else "",
    )
