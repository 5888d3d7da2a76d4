"""The light way of ``memx hook CLIENT``: what a hook process does on every tool call, prompt and session
start while the warm helper runs. It imports nothing of memx but this package's root, ``channel.py`` and
``wire.py`` (no settings, no client registry, no pydantic, not even ``json``, ``re`` or OpenSSL), reads the
payload, and:

- a tool call memx can never answer (a read before it runs, an edit after it is made, a search, a web
  fetch …: the kinds the helper's state file lists per client and event, ``client_hook.routes``) gets the
  client's empty answer at once, without a connection;
- any other tool call, prompt or session start is piped to the helper, which reads and answers it with the
  whole way's own code (``client_hook.answer``) and sends back exactly what the hook prints.

Anything else takes the whole way (``client_hook.run``), with the payload already read handed over: no
helper (or one of another version, which the whole way retires), a session's end, an event or client the
helper does not route, a payload that is no JSON object, a Codex notification, an unknown option. So the
whole way keeps starting the helper, reflecting sessions and logging what it ignores, as before.

Nothing changes in what is handed back or how: the helper masks, frames and counts as it did, the channel
is the same verified one, the recursion marker stops a hook before it reads anything, and a helper that
took a call but did not answer in time fails open (the client's empty answer, a line in the hook log)."""

from __future__ import annotations

import io
import os
import sys

from .. import __version__
from . import channel, wire

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on every hook call
if TYPE_CHECKING:
    from typing import Any

CHILD_MARKER = "MEMX_REFLECTING"  # config.CHILD_MARKER, without importing the settings
MAX_STDIN = 1_000_000  # logs.MAX_STDIN
# How long a call waits for the helper's answer: what the whole way allowed in all (its first ask, then its
# asking again until its deadline), sent once here. A prompt may wait for the helper's model to load
# (client_hook.context: 8 s, then 8 s more); a session start needs no model (3 s, then 8 s); a tool call 3 s
# (tool_payloads.run_tool_hook), a failed command or an edit 3 s, then 8 s more.
PROMPT_WAIT = 16.0
START_WAIT = 11.0
TOOL_WAIT = 3.0
NEEDED_TOOL_WAIT = 11.0
HELPER_WAIT = 8.0  # settings.hook_helper_wait's default, which the waits above are made of


def _helper_wait() -> float:
    """``MEMX_HOOK_HELPER_WAIT`` as the settings read it from the environment (a bad value: the default)."""
    try:
        wait = float(os.environ.get("MEMX_HOOK_HELPER_WAIT", HELPER_WAIT))
    except ValueError:
        return HELPER_WAIT
    return wait if 0 < wait < 3600 else HELPER_WAIT


def hook_call(argv: list[str]) -> tuple[str | None, str, bool] | None:
    """``(home, client, as_json)`` when ``argv`` is ``[--home DIR] hook CLIENT [--json]`` in any order argparse
    takes; None for anything else (the whole way parses it and says what is wrong)."""
    home: str | None = None
    as_json = False
    words: list[str] = []
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        if word == "--json":
            as_json = True
        elif word == "--home" and rest:
            home = rest.pop(0)
        elif word.startswith("--home="):
            home = word.removeprefix("--home=")
        elif word.startswith("-"):
            return None
        else:
            words.append(word)
    if len(words) != 2 or words[0] != "hook" or words[1] == "worker":
        return None  # a positional argument more (Codex's notification), or no hook at all
    return home, words[1], as_json


def default_home() -> str:
    """``config.default_home``, without importing the settings."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return os.path.join(base, "memx")
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Application Support", "memx")
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "memx")


def data_folder(given: str | None) -> str:
    """The data folder as ``config.load_settings`` finds it: ``--home``, else ``MEMX_HOME``, else the default."""
    chosen = os.path.expanduser(given) if given else None
    if chosen is None and os.environ.get("MEMX_HOME"):
        chosen = os.path.expanduser(os.environ["MEMX_HOME"])
    return os.path.abspath(chosen or default_home())


def run(argv: list[str]) -> int | None:
    """The hook's exit code when the light way handled the call; None: take the whole way (with stdin as
    it was, or holding the payload this already read)."""
    call = hook_call(argv)
    if call is None:
        return None
    if os.environ.get(CHILD_MARKER):  # a model call memx started: nothing of it is read or injected
        return 0
    try:
        return _run(*call)
    except Exception:  # a bug or an odd machine here must not cost the call: the whole way takes it
        return None


def _run(given: str | None, name: str, as_json: bool) -> int | None:
    home = data_folder(given)
    state = channel.read_state(home)
    if state is None or "token" not in state:
        return None  # the whole way starts a helper, or says why it could not start
    if state.get("version") != __version__ or state.get("protocol") != channel.PROTOCOL:
        return None  # the whole way retires a helper of another version
    routes, kinds = state.get("routes"), state.get("tool_kinds")
    events = routes.get(name) if isinstance(routes, dict) else None
    if not isinstance(events, dict) or not isinstance(kinds, dict):
        return None  # a client the helper does not route
    os.umask(0o077)  # as the whole way: what memx writes is its owner's only
    try:
        raw = sys.stdin.read(MAX_STDIN)
    except Exception as exc:  # not text in stdin's encoding: the whole way meets the same error and logs it
        sys.stdin = _Unreadable(exc)
        return None
    try:
        code = _answer(state, events, kinds, name, raw, home, as_json)
    except Exception:  # a bug here must not cost the call: the whole way reads it again
        code = None
    if code is None:
        sys.stdin = io.StringIO(raw)
    return code


class _Unreadable:
    """Stdin as the light way left it: reading it fails as it failed there."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def read(self, size: int = -1) -> str:
        raise self.error


def _answer(
    state: dict[str, Any], events: dict[str, Any], kinds: dict[str, Any], name: str, raw: str, home: str, as_json: bool
) -> int | None:
    try:
        payload = wire.loads(raw or "{}")
    except ValueError:
        return None  # the whole way logs it and fails open
    if not isinstance(payload, dict):
        return None
    event = payload.get("hook_event_name")
    route = events.get(event) if isinstance(event, str) else None
    if event and not isinstance(route, dict):
        return None  # a session's end, or an event memx ignores (the whole way logs it)
    route = route or {}  # no event named (Copilot CLI names it by the hook that runs): the helper reads it
    empty = str(route.get("empty", ""))
    kind = kinds.get(str(payload.get("tool_name") or "").lower(), "other")
    if "kinds" in route and kind not in route["kinds"]:
        return _print(empty, home)
    moment = route.get("moment")
    more = _helper_wait() - HELPER_WAIT  # MEMX_HOOK_HELPER_WAIT lengthens (or shortens) what waits for the model
    if "kinds" in route:
        wait = NEEDED_TOOL_WAIT + more if moment == "tool_failure" or kind == "edit" else TOOL_WAIT
    else:
        wait = START_WAIT + more if moment == "session_start" else PROMPT_WAIT + 2 * more
    request = {
        "client": name,
        "payload": payload,
        "json": as_json,
        "home": os.path.expanduser("~"),
        "cwd": os.getcwd(),
    }
    try:
        answer = channel.exchange(state, {"hook": request}, wait)
    except channel.AnswerLost as exc:
        _log(home, f"{name} {event or 'hook'}: no answer from the warm helper in time ({exc}); failed open")
        return _print(empty, home)
    if answer is None or "print" not in answer:
        return None  # nothing was sent, or the helper does not answer this call: the whole way
    return _print(str(answer["print"]), home)


def _print(out: str, home: str) -> int:
    if not out:
        return 0
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # as the whole way: the reader is gone; nothing more to say
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), sys.stdout.fileno())
        return 141
    except Exception as exc:  # the answer was taken: never asked twice, failed open as the whole way does
        _log(home, f"hook failed open: {type(exc).__name__}: {exc}")
    return 0


def _log(home: str, line: str) -> None:
    from pathlib import Path

    from .logs import logger_at

    logger_at(Path(home)).warning(line)
