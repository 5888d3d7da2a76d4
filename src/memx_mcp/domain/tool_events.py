"""One tool call of a coding client, as every client's hook payload is read into it: which client and
session, the call's phase (``before`` it runs or ``after``), what kind of tool it is, and what it did. The
moment-of-need use case (``usecases/moment.py``) reads nothing else of a payload."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Phase = Literal["before", "after"]
ToolKind = Literal["shell", "edit", "read", "other"]


@dataclass(frozen=True)
class ToolEvent:
    """A tool call: ``command`` for a shell call, ``paths`` for a file tool; ``exit_code`` when the client
    says it; ``output`` what the tool printed (or its error message); ``failed`` whether the client or the
    exit code says it failed."""

    client: str
    session_id: str
    cwd: str
    phase: Phase
    tool: ToolKind
    command: str | None
    exit_code: int | None
    output: str
    paths: tuple[str, ...]
    failed: bool
