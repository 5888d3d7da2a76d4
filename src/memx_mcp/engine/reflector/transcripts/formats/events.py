"""What a session format parser yields: the same four kinds of event the Claude Code parser feeds its
builder (a person's text, the assistant's text, a tool call, a tool result), in order. ``transcript``
replays them into steps, so every format ends up as the same ``Step`` objects and the rules work on all.

Tool names are normalised to Claude Code's where the meaning is the same: a shell command is ``Bash``
with ``{"command": ...}``, a file edit is ``Edit`` with ``file_path`` / ``old_string`` / ``new_string``,
a file read is ``Read`` with ``file_path``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class UserText:
    text: str
    ts: str | None = None


@dataclass(frozen=True)
class AssistantText:
    text: str
    ts: str | None = None


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    ts: str | None = None


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    content: str
    is_error: bool | None = None  # None: not told by the format, judged from the text


Event = UserText | AssistantText | ToolCall | ToolResult


@dataclass(frozen=True)
class Parsed:
    format: str
    events: tuple[Event, ...]
    session_id: str = ""
    cwd: str = ""
    skipped: int = 0
    # what the reader says about the session beyond its steps: a thread it did not read (a memory-
    # consolidation thread), tool calls recorded without their results, the client's own messages set aside
    notes: tuple[str, ...] = ()
    results_recorded: bool = True  # False: the format keeps no tool results; no call's outcome is known


def patch_edit(patch: str) -> dict[str, str]:
    """An ``apply_patch`` body (``*** Update File: x`` … ``-old`` / ``+new``) as Edit arguments."""
    path, old, new = "", [], []
    for line in patch.splitlines():
        if line.startswith(("*** Update File: ", "*** Add File: ", "*** Delete File: ")):
            path = path or line.split(": ", 1)[1].strip()
        elif line.startswith("-") and not line.startswith("---"):
            old.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            new.append(line[1:])
    return {"file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}
