"""``memx hook claude-code``: Claude Code runs it with the hook JSON on stdin.

``SessionEnd`` and ``PreCompact``: reflect the turns of the transcript not reflected before, into the
scope of the session's working directory. ``SessionStart`` and ``UserPromptSubmit``: print the context to
inject (see ``injection.py``), answered by the warm helper (``helper.py``), which the first such call
starts. ``PreToolUse``, ``PostToolUse``, ``PostToolUseFailure``: the fix or warning for that tool call
(``tool_payloads.py``, ``usecases/moment.py``), as JSON ``hookSpecificOutput``. It always exits 0 and
logs to ``MEMX_HOME/logs/hook.log``."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import IO, Any

from ..config import Settings
from .logs import MAX_STDIN, logger

HANDLED = ("SessionEnd", "PreCompact")
CONTEXT = ("SessionStart", "UserPromptSubmit")
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
HELPER_WAIT = 8.0  # seconds the first context hook waits for the helper it started (model load)


def _context(settings: Settings, payload: dict[str, Any], log: logging.Logger) -> str:
    from . import helper

    # a helper listens before its model has loaded: a SessionStart needs none, a prompt waits for it
    wait = HELPER_WAIT if payload.get("hook_event_name") == "UserPromptSubmit" else 3.0
    text = helper.ask(settings, payload, timeout=wait)
    if text is not None:
        return text
    error = helper.helper_error(settings)
    if error is None:
        helper.start(settings)
        deadline = time.monotonic() + HELPER_WAIT
        while time.monotonic() < deadline:
            time.sleep(0.05)
            text = helper.ask(settings, payload, timeout=max(0.5, deadline - time.monotonic()))
            if text is not None:
                return text
            error = helper.helper_error(settings)
            if error:
                break
    log.warning("%s: no context (%s)", payload.get("hook_event_name"), error or "helper not ready in time")
    return ""


def _print(event: str, text: str, as_json: bool, out: IO[str]) -> None:
    if as_json:
        out.write(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}) + "\n")
    else:
        out.write(text + "\n")


def run(settings: Settings, stdin: IO[str] | None = None, as_json: bool = False, stdout: IO[str] | None = None) -> int:
    """Handle one hook call. Whatever happens, return 0."""
    from .sessions import is_child

    if is_child():  # a model call memx started fires hooks too: nothing of it is read or injected
        return 0
    log = logger(settings)
    try:
        payload: Any = json.loads((stdin or sys.stdin).read(MAX_STDIN) or "{}")
        if not isinstance(payload, dict):
            raise ValueError("hook input is not a JSON object")
        event = str(payload.get("hook_event_name", ""))
        if event in TOOL_EVENTS:  # the moment of need: a fix after a failure, a warning before an edit
            from .tool_payloads import run_tool_hook

            answer = run_tool_hook("claude-code", payload, settings)
            if answer:
                (stdout or sys.stdout).write(answer + "\n")
            return 0
        if event in CONTEXT:
            text = _context(settings, payload, log)
            if text:
                _print(event, text, as_json, stdout or sys.stdout)
            return 0
        if event not in HANDLED:
            log.info("ignored event %r", event)
            return 0
        raw_path = str(payload.get("transcript_path") or "")
        path = Path(raw_path).expanduser()
        if not raw_path or not path.is_file():  # `claude mcp list` ends sessions that never had a transcript
            log.info("%s: no transcript to reflect (%s)", event, raw_path or "none given")
            return 0
        session = str(payload.get("session_id", ""))
        from .queue import QueuedSession
        from .sessions import reflect_session

        key = f"session:{session}" if session else None
        reflect_session(settings, QueuedSession(event, path, key, str(payload.get("cwd", ""))), log)
    except Exception as exc:  # fail open: the client must never see an error from memx
        log.warning("hook failed open: %s: %s", type(exc).__name__, exc)
    return 0
