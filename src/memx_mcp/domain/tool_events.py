"""One tool call of a coding client, as every client's hook payload is read into it: which client and
session, the call's phase (``before`` it runs or ``after``), what kind of tool it is, and what it did. The
moment-of-need use case (``usecases/moment.py``) reads nothing else of a payload."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

Phase = Literal["before", "after"]
ToolKind = Literal["shell", "edit", "read", "other"]
MAX_WIRE_OUTPUT = 20_008  # a hook sends at most 20,000 characters of a tool's output


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


def to_wire(event: ToolEvent) -> dict[str, Any]:
    return asdict(event)


def from_wire(data: Mapping[str, Any]) -> ToolEvent:
    """A ToolEvent sent to the warm helper, checked field by field (a bad one raises ValueError)."""
    phase, tool = data.get("phase"), data.get("tool")
    if phase not in ("before", "after") or tool not in ("shell", "edit", "read", "other"):
        raise ValueError("not a tool event")
    code = data.get("exit_code")
    paths = data.get("paths") or ()
    return ToolEvent(
        client=str(data.get("client", "")),
        session_id=str(data.get("session_id", "")),
        cwd=str(data.get("cwd", "")),
        phase=phase,
        tool=tool,
        command=str(data["command"]) if data.get("command") else None,
        exit_code=int(code) if isinstance(code, int) else None,
        output=str(data.get("output", ""))[:MAX_WIRE_OUTPUT],
        paths=tuple(str(p) for p in paths if isinstance(p, str)),
        failed=bool(data.get("failed")),
    )
