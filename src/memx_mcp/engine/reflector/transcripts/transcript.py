"""Transcript parsing: Claude Code session JSONL, JSON message lists (Anthropic and OpenAI shapes), the
formats of ``reflector.formats`` (Codex CLI JSONL, Aider, SpecStory, session-export markdown) and plain
text with speaker markers, all into one ordered list of steps."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ....domain.errors import InvalidInputError
from . import formats

Role = Literal["user", "assistant", "tool"]
MAX_RESULT_CHARS = 4000
MAX_TEXT_CHARS = 8000

# Tool results whose text says the call failed, for formats that carry no error flag.
ERROR_TEXT = re.compile(
    r"^(?:Traceback \(most recent call last\)|Exit code [1-9]\d*|fatal:|error(?:\[\w+\])?:|Error:|ERROR\b|"
    r"npm ERR!|FAILED\b|E\s{3})|command not found|No such file or directory|\w+(?:Error|Exception): |"
    r"错误|报错|エラー",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Step:
    """One thing that happened: a person's message, the assistant's text, or a tool call with its result."""

    index: int
    turn: int
    role: Role
    text: str = ""
    tool: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    timestamp: datetime | None = None

    @property
    def texts(self) -> list[str]:
        """Every text of the step that a bullet can quote: its own text, its string inputs, its result."""
        inputs = [v for v in self.tool_input.values() if isinstance(v, str)]
        return [t for t in (self.text, *inputs, self.result) if t]

    @property
    def command(self) -> str:
        """The shell command of a Bash-like call, else its main target (a file path, a pattern)."""
        for key in ("command", "cmd", "file_path", "path", "pattern", "url"):
            value = self.tool_input.get(key)
            if isinstance(value, str):
                return value
        return ""


@dataclass(frozen=True)
class Transcript:
    format: str
    steps: tuple[Step, ...]
    session_id: str = ""
    cwd: str = ""
    skipped_lines: int = 0

    @property
    def text(self) -> str:
        """All the texts of all the steps (JSON escapes undone), one per line."""
        return "\n".join(t for s in self.steps for t in s.texts)


def _ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _block_text(content: Any) -> str:
    """The text of a tool result or message content, whatever its shape."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_block_text(c) for c in content)
    if isinstance(content, Mapping):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if "content" in content:
            return _block_text(content["content"])
    return ""


# What Cursor's shell wrapper prints around every command in some sandboxes: about the wrapper, never about
# the command (its output is intact), so it is neither an error nor an error's signature.
_WRAPPER_NOISE = re.compile(
    r"(?m)^.*(?:cannot create temp file for here-document|dump_bash_state: command not found).*(?:\n|$)"
)
_NOISE = re.compile(r"^\s*(?:<(?:command-|local-command|system-reminder|bash-)|\[Request interrupted)")


class _Builder:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.pending: dict[str, int] = {}
        self.turn = 0

    def user_text(self, text: str, ts: datetime | None) -> None:
        if text.strip() and not _NOISE.match(text):
            self.turn += 1
            self._add(Step(len(self.steps), self.turn, "user", text=text[:MAX_TEXT_CHARS], timestamp=ts))

    def assistant_text(self, text: str, ts: datetime | None) -> None:
        if text.strip() and not _NOISE.match(text):
            self._add(Step(len(self.steps), self.turn, "assistant", text=text[:MAX_TEXT_CHARS], timestamp=ts))

    def tool_call(self, call_id: str, name: str, args: Mapping[str, Any], ts: datetime | None) -> None:
        self.pending[call_id] = len(self.steps)
        self._add(Step(len(self.steps), self.turn, "tool", tool=name, tool_input=dict(args), timestamp=ts))

    def tool_result(self, call_id: str, content: Any, is_error: bool | None) -> None:
        text = _WRAPPER_NOISE.sub("", _block_text(content))[:MAX_RESULT_CHARS]
        error = bool(is_error) if is_error is not None else bool(ERROR_TEXT.search(text[:600]))
        where = self.pending.pop(call_id, None)
        if where is None:
            return
        s = self.steps[where]
        self.steps[where] = Step(s.index, s.turn, s.role, s.text, s.tool, s.tool_input, text, error, s.timestamp)

    def _add(self, step: Step) -> None:
        self.steps.append(step)


def _claude_code(records: Iterable[Mapping[str, Any]], skipped: int) -> Transcript:
    b = _Builder()
    session, cwd = "", ""
    for r in records:
        kind = r.get("type")
        if kind not in ("user", "assistant") or not isinstance(r.get("message"), Mapping):
            continue  # progress, file-history-snapshot, system, queue-operation …
        session = session or str(r.get("sessionId") or "")
        cwd = cwd or str(r.get("cwd") or "")
        ts = _ts(r.get("timestamp"))
        content = r["message"].get("content")
        if isinstance(content, str):
            (b.user_text if kind == "user" else b.assistant_text)(content, ts)
            continue
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                (b.user_text if kind == "user" else b.assistant_text)(str(block.get("text", "")), ts)
            elif btype == "tool_use":
                b.tool_call(str(block.get("id")), str(block.get("name", "")), block.get("input") or {}, ts)
            elif btype == "tool_result":
                b.tool_result(str(block.get("tool_use_id")), block.get("content"), block.get("is_error"))
    return Transcript("claude-code", tuple(b.steps), session, cwd, skipped)


def _messages(messages: Iterable[Any]) -> Transcript:
    b = _Builder()
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        content = m.get("content")
        if role == "tool":  # OpenAI tool answer
            b.tool_result(str(m.get("tool_call_id")), content, None)
            continue
        add_text = b.user_text if role in ("user", "human") else b.assistant_text
        if role not in ("user", "human", "assistant"):
            continue
        if isinstance(content, str):
            add_text(content, None)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                b.tool_call(str(block.get("id")), str(block.get("name", "")), block.get("input") or {}, None)
            elif isinstance(block, Mapping) and block.get("type") == "tool_result":
                b.tool_result(str(block.get("tool_use_id")), block.get("content"), block.get("is_error"))
            elif isinstance(block, Mapping) and block.get("type") == "text":
                add_text(str(block.get("text", "")), None)
        for call in m.get("tool_calls") or []:  # OpenAI assistant tool calls
            fn = call.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (TypeError, ValueError):
                args = {"arguments": str(fn.get("arguments"))}
            b.tool_call(str(call.get("id")), str(fn.get("name", "")), args if isinstance(args, dict) else {}, None)
    return Transcript("messages", tuple(b.steps))


_SPEAKER = re.compile(
    r"^\s*(?:\*\*)?(user|human|me|you|assistant|ai|claude|model|用户|用戶|助手|ユーザー|アシスタント)(?:\*\*)?\s*[:：]\s?",
    re.IGNORECASE,
)
_USERS = {"user", "human", "me", "you", "用户", "用戶", "ユーザー"}


def _plain(text: str) -> Transcript:
    b = _Builder()
    speaker: str | None = None
    buffer: list[str] = []

    def flush() -> None:
        if speaker is not None and buffer:
            body = "\n".join(buffer).strip()
            (b.user_text if speaker in _USERS else b.assistant_text)(body, None)

    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if m:
            flush()
            speaker, buffer = m.group(1).lower(), [line[m.end() :]]
        else:
            buffer.append(line)
    if speaker is None:  # no markers at all: one user message
        speaker, buffer = "user", [text]
    flush()
    return Transcript("text", tuple(b.steps))


def _replay(parsed: formats.Parsed) -> Transcript:
    """Another format's events, through the same builder as Claude Code's records."""
    b = _Builder()
    for e in parsed.events:
        if isinstance(e, formats.UserText):
            b.user_text(e.text, _ts(e.ts))
        elif isinstance(e, formats.AssistantText):
            b.assistant_text(e.text, _ts(e.ts))
        elif isinstance(e, formats.ToolCall):
            b.tool_call(e.call_id, e.name, e.args, _ts(e.ts))
        else:
            b.tool_result(e.call_id, e.content, e.is_error)
    return Transcript(parsed.format, tuple(b.steps), parsed.session_id, parsed.cwd, parsed.skipped)


def parse_transcript(text: str) -> Transcript:
    """Detect the format and parse. Malformed JSONL lines are skipped and counted, never fatal."""
    if "\x00" in text[:65536]:
        raise InvalidInputError("the transcript looks binary (NUL bytes); give a JSONL, JSON or text transcript")
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped[:2_000_000].strip()):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
            whole = formats.parse_records([data], 0)  # an older Gemini CLI chat is one object like this
            return _replay(whole) if whole is not None else _messages(data["messages"])
        if isinstance(data, list):
            return _messages(data)
    if stripped.startswith("{"):
        records, skipped = [], 0
        for line in stripped.splitlines():
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                skipped += 1
                continue
            if isinstance(value, Mapping):
                records.append(value)
            else:
                skipped += 1
        other = formats.parse_records(records, skipped)  # before Claude Code: Gemini's records are "user" too
        if other is not None:
            return _replay(other)
        if records and any(r.get("type") in ("user", "assistant") for r in records):
            return _claude_code(records, skipped)
        if records and all("role" in r for r in records):
            return _messages(records)
    markdown = formats.parse_markdown(text)
    return _replay(markdown) if markdown is not None else _plain(text)
