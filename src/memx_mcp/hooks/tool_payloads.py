"""The tool hooks of each client: its payload read into one ``ToolEvent``, and the fix or warning memx hands
back written the way that client adds it to the model's context.

Where each shape comes from (see ``docs/notes/moment.md``):

- Claude Code: ``PreToolUse`` / ``PostToolUse`` / ``PostToolUseFailure`` (``tool_name``, ``tool_input``,
  ``tool_response``; the failure carries ``error``, "Exit code N" then the output). Plain stdout is not
  added for these events: only ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``.
- Codex: ``PreToolUse`` / ``PostToolUse`` for ``Bash`` (``tool_input.command``; ``tool_response`` the
  exec output, "Process exited with code N") and ``apply_patch`` (the patch in ``tool_input.command``);
  output ``hookSpecificOutput.additionalContext`` (codex-rs/hooks schema and tests).
- Gemini CLI: ``BeforeTool`` / ``AfterTool`` (``tool_response.llmContent`` with "Exit Code: N",
  ``tool_response.error``); only ``AfterTool`` can add context (``hookSpecificOutput.additionalContext``);
  stdout must be pure JSON, so "{}" when there is nothing.
- Cursor: ``preToolUse``, ``postToolUse`` (``tool_output`` a JSON string ``{"output", "exitCode"}``),
  ``postToolUseFailure`` (``error_message``); context goes back as a top-level ``additional_context``;
  ``preToolUse`` cannot add any, so Cursor's file warnings come after a read of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..domain.tool_events import Phase, ToolEvent, ToolKind, to_wire

MAX_OUTPUT_CHARS = 20_000  # the head and tail of a tool's output: where errors are
_EXIT = re.compile(r"(?im)^\s*(?:exit code:?|process exited with code|exit status)\s*(-?\d+)\b")
_PATCH_FILE = re.compile(r"(?m)^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$")

_SHELL = {"bash", "shell", "run_shell_command", "exec_command", "local_shell", "run_terminal_cmd"}
_EDIT = {
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "apply_patch",
    "replace",
    "write_file",
    "strreplace",
    "search_replace",
    "edit_file",
    "delete",
    "delete_file",
}
_READ = {"read", "read_file", "read_many_files", "notebookread"}


def tool_kind(name: str) -> ToolKind:
    low = name.lower()
    if low in _SHELL:
        return "shell"
    if low in _EDIT:
        return "edit"
    if low in _READ:
        return "read"
    return "other"


def _text(value: Any) -> str:
    """A tool's output as text, whatever shape the client gives it."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        keys = ("error", "stderr", "stdout", "output", "aggregated_output", "llmContent", "content", "returnDisplay")
        parts = [_text(value[k]) for k in keys if value.get(k)]
        return "\n".join(p for p in parts if p)
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return str(value)


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return text[:half] + "\n…\n" + text[-half:]


def _exit_code(value: Any, text: str) -> int | None:
    if isinstance(value, Mapping):
        for key in ("exit_code", "exitCode", "returncode"):
            if isinstance(value.get(key), int):
                return int(value[key])
    found = _EXIT.search(text)
    return int(found.group(1)) if found else None


def _paths(tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for key in ("file_path", "path", "notebook_path", "target_file", "absolute_path"):
        if isinstance(tool_input.get(key), str) and tool_input[key]:
            found.append(str(tool_input[key]))
    for key in ("file_paths", "paths", "files"):
        if isinstance(tool_input.get(key), list):
            found += [str(p) for p in tool_input[key] if isinstance(p, str)]
    patch = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        found += _PATCH_FILE.findall(patch)
    return tuple(dict.fromkeys(found))


def _input(payload: Mapping[str, Any]) -> dict[str, Any]:
    raw = payload.get("tool_input")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = {"command": raw}
    return dict(raw) if isinstance(raw, Mapping) else {}


def _event(
    client: str, payload: Mapping[str, Any], phase: Phase, output: Any, failed: bool | None, session: str = ""
) -> ToolEvent:
    name = str(payload.get("tool_name") or "")
    kind = tool_kind(name)
    tool_input = _input(payload)
    text = _clip(_text(output))
    code = _exit_code(output, text)
    command = tool_input.get("command") if kind == "shell" else None
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    if failed is None:
        failed = code is not None and code != 0
    return ToolEvent(
        client=client,
        session_id=session or str(payload.get("session_id") or ""),
        cwd=str(payload.get("cwd") or ""),
        phase=phase,
        tool=kind,
        command=str(command) if command else None,
        exit_code=code,
        output=text,
        paths=_paths(tool_input) if kind in ("edit", "read") else (),
        failed=bool(failed) and phase == "after",
    )


# -- each client: its events, how to read them, how to answer ------------------------------------------


def _claude(payload: Mapping[str, Any]) -> ToolEvent | None:
    event = payload.get("hook_event_name")
    if event == "PreToolUse":
        return _event("claude-code", payload, "before", None, False)
    if event == "PostToolUse":
        return _event("claude-code", payload, "after", payload.get("tool_response"), False)
    if event == "PostToolUseFailure":
        if payload.get("is_interrupt"):
            return None  # the user stopped it: nothing failed
        return _event("claude-code", payload, "after", payload.get("error"), True)
    return None


def _codex(payload: Mapping[str, Any]) -> ToolEvent | None:
    event = payload.get("hook_event_name")
    if event == "PreToolUse":
        return _event("codex", payload, "before", None, False)
    if event == "PostToolUse":
        return _event("codex", payload, "after", payload.get("tool_response"), None)
    return None


def _gemini(payload: Mapping[str, Any]) -> ToolEvent | None:
    event = payload.get("hook_event_name")
    if event == "BeforeTool":
        return _event("gemini", payload, "before", None, False)
    if event == "AfterTool":
        response = payload.get("tool_response")
        error = response.get("error") if isinstance(response, Mapping) else None
        found = _event("gemini", payload, "after", response, True if error else None)
        return found
    return None


def _cursor_output(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _cursor(payload: Mapping[str, Any]) -> ToolEvent | None:
    event = payload.get("hook_event_name")
    session = str(payload.get("conversation_id") or payload.get("session_id") or "")
    roots = payload.get("workspace_roots")
    if not payload.get("cwd") and isinstance(roots, list) and roots:
        payload = {**payload, "cwd": str(roots[0])}
    if event == "preToolUse":
        return _event("cursor", payload, "before", None, False, session)
    if event == "postToolUse":
        return _event("cursor", payload, "after", _cursor_output(payload.get("tool_output")), None, session)
    if event == "postToolUseFailure":
        return _event("cursor", payload, "after", payload.get("error_message") or payload.get("error"), True, session)
    return None


def _hook_specific(event: str, text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def _claude_out(event: str, text: str) -> str:
    return _hook_specific(event, text) if text else ""


def _gemini_out(event: str, text: str) -> str:
    return _hook_specific(event, text) if text and event == "AfterTool" else "{}"


def _cursor_out(event: str, text: str) -> str:
    return json.dumps({"additional_context": text}) if text and event != "preToolUse" else "{}"


@dataclass(frozen=True)
class ToolHooks:
    """What memx knows of one client's tool hooks: reading a payload, writing an answer (``text`` may be
    '' for nothing; the answer is what the hook prints), and whether its before-hook can add context."""

    read: Callable[[Mapping[str, Any]], ToolEvent | None]
    write: Callable[[str, str], str]
    context_before: bool


TOOL_HOOKS: dict[str, ToolHooks] = {
    "claude-code": ToolHooks(_claude, _claude_out, True),
    "codex": ToolHooks(_codex, _claude_out, True),
    "gemini": ToolHooks(_gemini, _gemini_out, False),
    "cursor": ToolHooks(_cursor, _cursor_out, False),
}


def read_event(client: str, payload: Mapping[str, Any]) -> ToolEvent | None:
    """``payload`` as a ToolEvent, or None when it is no tool event of ``client`` memx reads."""
    hooks = TOOL_HOOKS.get(client)
    return hooks.read(payload) if hooks else None


def worth_asking(event: ToolEvent) -> bool:
    """Whether memx could have something for this call at all: a command (after it failed: a fix; before
    it runs or after it worked: a bullet may warn about that exact command), an edit of a file before it
    is made, a read of one after it was read (``usecases/moment.need_of`` answers nothing else)."""
    if event.tool == "shell":
        return bool(event.command) and (event.phase == "after" or not event.failed)
    if event.tool == "edit":
        return event.phase == "before" and bool(event.paths)
    return event.tool == "read" and event.phase == "after" and bool(event.paths)


def answerable(event: ToolEvent, hooks: ToolHooks) -> bool:
    """Whether to ask memx at all: worth asking, and the client can add what comes back at this phase."""
    return worth_asking(event) and (event.phase == "after" or hooks.context_before)


def answer_tool_call(
    client: str, payload: Mapping[str, Any], ask: Callable[[ToolEvent, ToolHooks], str], log: Callable[[str], None]
) -> str:
    """What the hook of ``client`` prints for this tool call, ``ask`` giving memx's note for an answerable
    event ('' for none); a failure is logged through ``log`` and fails open. Never raises."""
    hooks = TOOL_HOOKS.get(client)
    if hooks is None:
        return ""
    event_name = str(payload.get("hook_event_name", ""))
    try:
        event = hooks.read(payload)
        text = ask(event, hooks) if event is not None and answerable(event, hooks) else ""
    except Exception as exc:  # fail open: a hook never fails its client
        log(f"{client} {event_name} failed open: {type(exc).__name__}: {exc}")
        text = ""
    return hooks.write(event_name, text)


# one tool name of each kind, for ``routes`` (any name of the kind reads the same)
_SAMPLE_TOOL = {"shell": "bash", "edit": "edit", "read": "read"}


def tool_routes(client: str, event_name: str) -> dict[str, Any] | None:
    """For the hook process (``quick.py``), what it may decide alone about ``client``'s ``event_name`` before
    asking the helper: the tool kinds memx could answer there (any other: the empty answer at once), and that
    empty answer. None: not a tool event memx reads for this client."""
    hooks = TOOL_HOOKS.get(client)
    if hooks is None:
        return None
    kinds = []
    for kind, name in _SAMPLE_TOOL.items():
        sample = {"hook_event_name": event_name, "tool_name": name, "tool_input": {"command": "x", "file_path": "x"}}
        event = hooks.read(sample)
        if event is not None and event.tool == kind and answerable(event, hooks):
            kinds.append(kind)
    return {"kinds": kinds, "empty": hooks.write(event_name, "")}


def tool_kinds() -> dict[str, ToolKind]:
    """Every tool name memx reads as a shell, edit or read tool (lower case), with its kind."""
    return {**dict.fromkeys(_SHELL, "shell"), **dict.fromkeys(_EDIT, "edit"), **dict.fromkeys(_READ, "read")}


def run_tool_hook(client: str, payload: Mapping[str, Any], settings: Settings, wait: float = 3.0) -> str:
    """What the hook of ``client`` prints for this tool call ('' or the client's empty answer when memx has
    nothing). Answered by the warm helper; a missing helper is started, waited for only after a failure
    or before an edit (a successful command is not worth the wait). Never raises."""

    def log(line: str) -> None:
        from .logs import logger

        logger(settings).warning(line)

    return answer_tool_call(client, payload, lambda event, _hooks: _ask(settings, event, wait), log)


def _ask(settings: Settings, event: ToolEvent, wait: float) -> str:
    import time

    from . import asking as helper

    request = {"moment": to_wire(event), "cwd": event.cwd}
    text = helper.ask(settings, request, timeout=wait)
    if text is not None:
        return text
    needed = event.failed or event.tool == "edit"
    if not needed or helper.helper_error(settings):
        if helper.helper_error(settings) is None:
            helper.start(settings)  # ready for the next call
        return ""
    helper.start(settings)
    deadline = time.monotonic() + max(wait, settings.hook_helper_wait)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        text = helper.ask(settings, request, timeout=max(0.5, deadline - time.monotonic()))
        if text is not None:
            return text
        if helper.helper_error(settings):
            break
    return ""
