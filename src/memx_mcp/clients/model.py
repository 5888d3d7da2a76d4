"""What memx knows about one client, as data and small functions: where its configuration lives and how
memx's entries are written and removed, which hook events it has and how each payload reads into one
normalised event, what its hook must print to add context, where its sessions are stored and which
transcript reader reads them, and its headless CLI (a model backend). One module per client declares a
``Client``; ``registry.py`` registers them, and install, uninstall, doctor and ``memx hook CLIENT`` read
nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .places import Places

# The moments memx acts on, whatever a client calls them.
Moment = Literal["session_start", "prompt", "session_end", "before_tool", "after_tool", "tool_failure"]
CONTEXT_MOMENTS: tuple[Moment, ...] = ("session_start", "prompt")
TOOL_MOMENTS: tuple[Moment, ...] = ("before_tool", "after_tool", "tool_failure")
Scope = Literal["user", "project"]

# How a hook's stdout adds context: plain text (Claude Code's SessionStart and UserPromptSubmit), JSON
# ``hookSpecificOutput.additionalContext`` (Claude Code's other events, Codex, Gemini CLI, VS Code), Cursor's
# ``additional_context``, Copilot CLI's ``additionalContext``, or nothing the client reads.
Output = Literal["plain", "hook_specific", "cursor", "copilot", "none"]


@dataclass(frozen=True)
class Hook:
    """One hook event of a client: its own name, the moment it is, how its output must look, and a
    payload of the client's documented shape (``memx doctor`` feeds it to the hook as the client would)."""

    event: str
    moment: Moment
    output: Output = "none"
    sample: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HookEvent:
    """One hook call read into memx's terms. ``transcript``: the session's file where the payload names
    or locates it (None: none found); ``prompt``: the user's words for a prompt event."""

    client: str
    event: str  # the client's own name of the event
    moment: Moment | None  # None: an event memx does not act on
    session_id: str = ""
    cwd: str = ""
    prompt: str = ""
    source: str = ""  # how a session started (startup, resume, clear …) where the client says
    transcript: Path | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)

    def as_context_request(self) -> dict[str, Any]:
        """The request the warm helper answers (it speaks Claude Code's event names)."""
        name = "SessionStart" if self.moment == "session_start" else "UserPromptSubmit"
        return {"hook_event_name": name, "session_id": self.session_id, "cwd": self.cwd, "prompt": self.prompt}


@dataclass(frozen=True)
class Wiring:
    """What install writes into a file: memx's server entry and hook command, and the hook events chosen
    (none: memx's hooks are taken out). ``install`` False: every entry of memx's is removed."""

    install: bool
    server: Mapping[str, Any]  # command, args (and env): the MCP server entry without a client's "type"
    hook: str  # the shell command of ``memx hook CLIENT``, made to fail open
    argv: tuple[str, ...]  # the same as an argument list, for a client that runs a program (Codex's notify)
    events: tuple[str, ...]  # the client's own names of the events to hook


@dataclass(frozen=True)
class Found:
    """What memx finds of itself in one file: its server entry, and its hooks (command → events)."""

    server: Mapping[str, Any] | None = None
    hooks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    argv: tuple[str, ...] = ()  # a hook the client runs as an argument list rather than through a shell


def _nothing(_data: Any) -> Found:
    return Found()


@dataclass(frozen=True)
class ConfigFile:
    """One file memx writes. ``change`` returns the file's content with memx's entries as ``Wiring``
    says (JSON: an object; TOML: text); ``find`` reads memx's own entries back, for the doctor."""

    path: Path
    syntax: Literal["json", "toml"]
    change: Callable[[Any, Wiring, Path], Any]
    find: Callable[[Any], Found] = _nothing


@dataclass(frozen=True)
class Sessions:
    """Where a client stores its sessions and which pure reader in ``engine/reflector/transcripts/formats/``
    reads them (a module name there, or ``claude-code`` for the Claude Code JSONL that ``transcript.py``
    reads itself)."""

    folders: Callable[[Places], tuple[Path, ...]]
    patterns: tuple[str, ...]
    reader: str


@dataclass(frozen=True)
class Client:
    """Everything memx knows about one client. ``files`` raises ``InvalidInputError`` for a scope the client
    does not have. ``read`` turns a hook's payload (from stdin, or for Codex's notify from its last
    argument, ``payload_in``) into a ``HookEvent``."""

    name: str
    title: str
    files: Callable[[Places, Scope], tuple[ConfigFile, ...]]
    hooks: tuple[Hook, ...] = ()
    read: Callable[[Mapping[str, Any], Places], HookEvent] | None = None
    payload_in: Literal["stdin", "argument"] = "stdin"
    sessions: Sessions | None = None
    headless: str | None = None  # the model backend its CLI gives, if any (a name in domain/backends.py)
    notes: str = ""  # what a user should know (a flag to turn on, an event the client cannot use)

    def hook(self, event: str) -> Hook | None:
        return next((h for h in self.hooks if h.event == event), None)

    def events(self, moments: tuple[Moment, ...]) -> tuple[str, ...]:
        return tuple(h.event for h in self.hooks if h.moment in moments)

    def say(self, event: str, text: str) -> str:
        """What the hook prints for ``event`` to add ``text`` to the model's context ("" for nothing)."""
        hook = self.hook(event)
        if not text or hook is None:
            return ""
        return render(hook.output, event, text)


def render(output: Output, event: str, text: str) -> str:
    if output == "plain":
        return text + "\n"
    if output == "hook_specific":
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}) + "\n"
    if output == "cursor":
        return json.dumps({"additional_context": text}) + "\n"
    if output == "copilot":
        return json.dumps({"additionalContext": text}) + "\n"
    return ""


def accepts(output: Output, event: str, stdout: str) -> str:
    """Why ``stdout`` is not what the client reads for ``event`` ("" when it is): empty is always fine
    (nothing to add); JSON outputs must parse as one object of the right shape, nothing else printed."""
    if not stdout.strip() or output == "plain":
        return ""
    try:
        data = json.loads(stdout)
    except ValueError:
        return f"{event} printed something that is not JSON, which the client rejects: {stdout.strip()[:80]!r}"
    if not isinstance(data, dict):
        return f"{event} printed JSON that is not an object"
    if output == "hook_specific":
        inner = data.get("hookSpecificOutput")
        ok = isinstance(inner, dict) and inner.get("hookEventName") == event
        ok = ok and isinstance(inner.get("additionalContext"), str) if isinstance(inner, dict) else False
        return "" if ok else f"{event} printed JSON without hookSpecificOutput.additionalContext for {event}"
    key = {"cursor": "additional_context", "copilot": "additionalContext"}.get(output)
    if key and not isinstance(data.get(key), str):
        return f"{event} printed JSON without {key}"
    return ""


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def read_claude_shaped(name: str, hooks: tuple[Hook, ...], payload: Mapping[str, Any]) -> HookEvent:
    """A payload in Claude Code's shape (``hook_event_name``, ``session_id``, ``cwd``, ``prompt``, ``source``,
    ``transcript_path``), which Codex's and Gemini CLI's hooks share, read into a HookEvent of ``name``."""
    event = text_of(payload.get("hook_event_name"))
    hook = next((h for h in hooks if h.event == event), None)
    return HookEvent(
        name,
        event,
        hook.moment if hook else None,
        session_id=text_of(payload.get("session_id")),
        cwd=text_of(payload.get("cwd")),
        prompt=text_of(payload.get("prompt")),
        source=text_of(payload.get("source")),
        transcript=existing(text_of(payload.get("transcript_path"))),
        payload=payload,
    )


def existing(path: str) -> Path | None:
    """``path`` as a file that exists, or None."""
    if not path:
        return None
    candidate = Path(path).expanduser()
    return candidate if candidate.is_file() else None
