"""``memx hook CLIENT``: one command for every client's hooks, the client looked up in the registry
(``clients/``). The payload (stdin; Codex's notify: its last argument) is read by the client's module into
one ``HookEvent``; then by its moment:

- session start, prompt: the context the warm helper answers (``helper.py``, ``usecases/injection.py``),
  printed as the client must print it to add it to the model's context;
- session end: the turns of its transcript not reflected before (``sessions.py``), or queued for the worker;
- a tool call (before, after, failed): handed to the moment-of-need function (``tool_moment`` below).

It always exits 0 and logs to ``MEMX_HOME/logs/hook.log``; inside a model call memx started it returns at once.

This is the whole way, which a hook takes when no warm helper runs (it starts one). With a helper running,
the hook process only pipes its payload to it (``quick.py``) and the helper answers with ``answer`` below, the
same reading and rendering; ``routes`` tells that light path which events it may settle alone."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..clients import CONTEXT_MOMENTS, TOOL_MOMENTS, Client, HookEvent, Places, client, clients
from ..config import Settings
from .logs import MAX_STDIN, logger

if TYPE_CHECKING:
    from ..memory import Memory

HELPER_WAIT = 8.0  # the default of settings.hook_helper_wait: how long a hook waits for the helper it started


def context(settings: Settings, request: dict[str, Any], log: logging.Logger) -> str:
    """The helper's context for a session start or a prompt ("" when it cannot answer in time)."""
    from . import asking as helper

    # a helper listens before its model has loaded: a SessionStart needs none, a prompt waits for it
    wait = settings.hook_helper_wait if request.get("hook_event_name") == "UserPromptSubmit" else 3.0
    text = helper.ask(settings, request, timeout=wait)
    if text is not None:
        return text
    error = helper.helper_error(settings)
    if error is None:
        helper.start(settings)
        deadline = time.monotonic() + settings.hook_helper_wait
        while time.monotonic() < deadline:
            time.sleep(0.05)
            text = helper.ask(settings, request, timeout=max(0.5, deadline - time.monotonic()))
            if text is not None:
                return text
            error = helper.helper_error(settings)
            if error:
                break
    log.warning("%s: no context (%s)", request.get("hook_event_name"), error or "helper not ready in time")
    return ""


def tool_moment(settings: Settings, event: HookEvent, log: logging.Logger) -> str:
    """What to print after (or before) a tool call: the lesson that applies, in the client's shape
    (``hooks.tool_payloads``: the payload read into a ToolEvent, answered by the warm helper)."""
    from .tool_payloads import TOOL_HOOKS, run_tool_hook

    if event.client not in TOOL_HOOKS:
        log.debug("%s %s: no moment-of-need reader for this client", event.client, event.event)
        return ""
    return _line(run_tool_hook(event.client, _tool_payload(event), settings))


def _tool_payload(event: HookEvent) -> dict[str, Any]:
    return {**event.payload, "hook_event_name": event.payload.get("hook_event_name") or event.event}


def _line(answer: str) -> str:
    return answer + "\n" if answer and not answer.endswith("\n") else answer


def _context_out(known: Client, event: HookEvent, text: str, as_json: bool) -> str:
    """What a context hook prints: ``text`` in the client's shape (JSON where ``as_json`` asks for it)."""
    hook = known.hook(event.event)
    if as_json and text and hook is not None and hook.output == "plain":
        from ..clients.model import render

        return render("hook_specific", event.event, text)
    return known.say(event.event, text)


def answer(
    name: str, payload: dict[str, Any], places: Places, as_json: bool, memory: Memory, log: logging.Logger
) -> str | None:
    """What the hook of ``name`` prints for ``payload``, answered inside the warm helper on its open
    ``memory``: the same reading and rendering as ``run``. None: not a context or tool moment (a session's
    end, an event memx ignores, a client it does not know): the hook process then takes the whole way."""
    from ..domain.errors import InvalidInputError

    try:
        known = client(name)
    except InvalidInputError:
        return None
    event = known.read(payload, places) if known.read else None
    if event is None or event.moment is None or event.moment not in (*CONTEXT_MOMENTS, *TOOL_MOMENTS):
        return None

    def at(cwd: str) -> None:  # as the helper always set it: "" is the helper's own folder
        where = Path(str(cwd))
        memory.set_cwd(where if str(where) and where.is_dir() else Path.home())

    if event.moment in CONTEXT_MOMENTS:
        request = event.as_context_request()
        try:
            at(event.cwd)
            text = memory.inject(request)
        except Exception as exc:  # fail open, as the helper always did: the hook prints nothing
            log.warning("hook helper failed open: %s: %s", type(exc).__name__, exc)
            text = ""
        return _context_out(known, event, text, as_json)
    from .tool_payloads import TOOL_HOOKS, answer_tool_call

    if event.client not in TOOL_HOOKS:
        return ""

    def moment(tool_event: Any, _hooks: Any) -> str:
        try:
            at(tool_event.cwd)
            return str(memory.moment(tool_event))
        except Exception as exc:
            log.warning("hook helper failed open: %s: %s", type(exc).__name__, exc)
            return ""

    return _line(answer_tool_call(event.client, _tool_payload(event), moment, log.warning))


def routes() -> dict[str, dict[str, Any]]:
    """What a hook process may decide before it asks the helper (``quick.py``), from the registry: for each
    client, its context events (``{"moment": …}``) and its tool events (the tool kinds memx could answer,
    and the empty answer to print for any other). An event not named here takes the whole way."""
    from .tool_payloads import tool_routes

    table: dict[str, dict[str, Any]] = {}
    for known in clients():
        events: dict[str, Any] = {}
        for hook in known.hooks:
            if hook.moment in CONTEXT_MOMENTS:
                events[hook.event] = {"moment": hook.moment}
            elif hook.moment in TOOL_MOMENTS:
                tool = tool_routes(known.name, hook.event)
                found = tool or {"kinds": [], "empty": ""}  # no reader: the whole way prints nothing either
                events[hook.event] = {"moment": hook.moment, "kinds": found["kinds"], "empty": _line(found["empty"])}
        if events:
            table[known.name] = events
    return table


def _payload(raw: str) -> dict[str, Any]:
    payload: Any = json.loads(raw or "{}")
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def _reflect(settings: Settings, event: HookEvent, log: logging.Logger) -> None:
    from .queue import QueuedSession
    from .sessions import reflect_session

    claude = event.client == "claude-code"  # its keys and log lines predate the other clients'
    label = event.event if claude else f"{event.client} {event.event}"
    if event.transcript is None:
        session = event.session_id[:12] or "none given"
        log.info("%s: no transcript to reflect (session %s)", label, session)
        return
    key = (
        (f"session:{event.session_id}" if claude else f"session:{event.client}:{event.session_id}")
        if event.session_id
        else None
    )
    reflect_session(settings, QueuedSession(label, event.transcript, key, event.cwd), log)


def run(
    name: str,
    settings: Settings,
    stdin: IO[str] | None = None,
    argument: str | None = None,
    stdout: IO[str] | None = None,
    as_json: bool = False,
) -> int:
    """Handle one call of ``name``'s hook. Whatever happens, return 0. ``as_json``: context as JSON
    ``hookSpecificOutput`` even where the client reads plain text (``memx hook claude-code --json``)."""
    from .sessions import is_child

    if is_child():  # a model call memx started fires hooks too: nothing of it is read or injected
        return 0
    log = logger(settings)
    try:
        known = client(name)
        raw = argument if argument is not None else (stdin or sys.stdin).read(MAX_STDIN)
        event = known.read(_payload(raw), Places(Path.home(), Path.cwd())) if known.read else None
        if event is None or event.moment is None:
            log.info("%s: ignored event %r", name, event.event if event else "")
            return 0
        out = ""
        if event.moment in CONTEXT_MOMENTS:
            text = context(settings, event.as_context_request(), log)
            out = _context_out(known, event, text, as_json)
        elif event.moment in TOOL_MOMENTS:
            out = tool_moment(settings, event, log)
        else:
            _reflect(settings, event, log)
        if out:
            (stdout or sys.stdout).write(out)
    except Exception as exc:  # fail open: the client must never see an error from memx
        log.warning("%s hook failed open: %s: %s", name, type(exc).__name__, exc)
    return 0
