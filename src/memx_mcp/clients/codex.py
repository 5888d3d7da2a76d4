"""Codex CLI (openai/codex docs/config.md, codex-rs/hooks): the server in ``config.toml``
(``[mcp_servers.memx]``, ``$CODEX_HOME`` or the project's ``.codex/``), edited as text; the end of each turn
through its ``notify`` program (the notification JSON as the last argument, ``{"type": "agent-turn-complete",
"thread-id", "cwd", …}``); context through hooks in ``hooks.json`` beside it (Claude Code's shape: event →
groups → hooks; ``SessionStart`` and ``UserPromptSubmit`` add ``hookSpecificOutput.additionalContext``;
``PreToolUse``/``PostToolUse``). The ``hooks`` feature is stable and on by default in the Codex installable
today (0.171; ``codex_hooks``, the flag older versions needed, is now reported as deprecated, so memx does not
set it; an install of an earlier memx that set it, marked ``# memx``, has that line taken out). Codex runs a
hook only once the user has trusted it (``/hooks`` in Codex, which records its hash under ``[hooks.state]``),
or for one run with ``--dangerously-bypass-hook-trust``. The rollouts are
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`` (older ones ``.jsonl.zst``)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..domain.errors import InvalidInputError
from .edits import (
    found_json,
    grouped_hooks_in,
    is_memx_notify,
    toml_server_in,
    with_grouped_hooks,
    with_toml_feature,
    with_toml_notify,
    with_toml_server,
)
from .model import (
    Client,
    ConfigFile,
    Found,
    Hook,
    HookEvent,
    Scope,
    Sessions,
    Wiring,
    read_claude_shaped,
    text_of,
)
from .places import Places

NAME = "codex"
FLAG = "codex_hooks"
_COMMON = {"session_id": "memx-doctor", "cwd": "", "transcript_path": None, "model": "gpt-5"}
_START = {"hook_event_name": "SessionStart", "source": "startup", **_COMMON}
_PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "memx doctor", **_COMMON}
HOOKS = (
    Hook("notify", "session_end", sample={"type": "memx-doctor-probe", "thread-id": "memx-doctor"}),
    Hook(
        "SessionStart",
        "session_start",
        "hook_specific",
        {"hook_event_name": "SessionStart", "source": "startup", **_COMMON},
    ),
    Hook(
        "UserPromptSubmit",
        "prompt",
        "hook_specific",
        {"hook_event_name": "UserPromptSubmit", "prompt": "memx doctor", **_COMMON},
    ),
    Hook("PreToolUse", "before_tool", "hook_specific"),
    Hook("PostToolUse", "after_tool", "hook_specific"),
)
JSON_EVENTS = tuple(h.event for h in HOOKS if h.event != "notify")


def codex_home(places: Places) -> Path:
    custom = places.var("CODEX_HOME")
    return Path(custom).expanduser() if custom else places.home / ".codex"


def transcript(thread: str, home: Path) -> Path | None:
    """The rollout file of ``thread``: the newest of its name under sessions/ (or archived_sessions/)."""
    if not re.fullmatch(r"[A-Za-z0-9-]+", thread):  # it becomes part of a file pattern
        return None
    found = [
        p
        for sub in ("sessions", "archived_sessions")
        for pattern in (f"**/rollout-*{thread}.jsonl", f"**/rollout-*{thread}.jsonl.zst")
        for p in (home / sub).glob(pattern)
        if p.is_file()
    ]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _refuse_over_users_notify(user_config: Path) -> None:
    """A project's notify replaces the user's own in that project (Codex merges its config layers, the
    project's last): refused as the user file's own would be."""
    try:
        notify: Any = tomllib.loads(user_config.read_text(encoding="utf-8")).get("notify")
    except (OSError, tomllib.TOMLDecodeError):
        return
    if notify is not None and not is_memx_notify(notify):
        raise InvalidInputError(
            f"{user_config} sets notify = {json.dumps(notify)}, which a project's notify would replace in this "
            "project; memx will not, nothing was changed. Run `memx install codex --scope project --no-reflect`"
        )


def _config(places: Places, scope: Scope) -> ConfigFile:
    folder = codex_home(places) if scope == "user" else places.project / ".codex"

    def change(text: Any, wiring: Wiring, path: Path) -> Any:
        notify = list(wiring.argv) if wiring.install and "notify" in wiring.events else None
        if notify is not None and scope == "project":
            _refuse_over_users_notify(codex_home(places) / "config.toml")
        text = with_toml_server(str(text), wiring.server if wiring.install else None, path)
        text = with_toml_notify(text, notify, path)
        return with_toml_feature(text, FLAG, False, path)  # an earlier install's flag line, taken out

    def find(text: Any) -> Found:
        try:
            notify: Any = tomllib.loads(str(text)).get("notify")
        except tomllib.TOMLDecodeError:
            notify = None
        words = tuple(str(w) for w in notify) if is_memx_notify(notify) else ()
        return Found(toml_server_in(str(text)), {" ".join(words): ("notify",)} if words else {}, words)

    return ConfigFile(folder / "config.toml", "toml", change, find)


def _hooks(data: Any, wiring: Wiring, path: Path) -> Any:
    events = tuple(e for e in wiring.events if e in JSON_EVENTS)
    return with_grouped_hooks(
        data, NAME, events, JSON_EVENTS, path, lambda _e: {"type": "command", "command": wiring.hook}
    )


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    folder = codex_home(places) if scope == "user" else places.project / ".codex"

    def find(data: Any) -> Found:
        return found_json(data, None, lambda d: grouped_hooks_in(d, NAME, JSON_EVENTS))

    return (_config(places, scope), ConfigFile(folder / "hooks.json", "json", _hooks, find))


def read(payload: Mapping[str, Any], places: Places) -> HookEvent:
    """A hook's JSON (stdin) or the notify program's notification (its argument)."""
    if "hook_event_name" not in payload:
        kind = text_of(payload.get("type"))
        thread = text_of(payload.get("thread-id"))
        return HookEvent(
            NAME,
            kind,
            "session_end" if kind == "agent-turn-complete" else None,
            session_id=thread,
            cwd=text_of(payload.get("cwd")),
            transcript=transcript(thread, codex_home(places)) if thread else None,
            payload=payload,
        )
    return read_claude_shaped(NAME, HOOKS, payload)


CLIENT = Client(
    NAME,
    "Codex CLI",
    files,
    HOOKS,
    read,
    payload_in="argument",
    notes="trust memx's hooks once in Codex (/hooks) before they run",
    sessions=Sessions(
        lambda p: (codex_home(p) / "sessions", codex_home(p) / "archived_sessions"),
        ("**/rollout-*.jsonl", "**/rollout-*.jsonl.zst"),
        "codex",
    ),
    headless="codex-cli",
)
