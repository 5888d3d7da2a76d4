"""``memx hook cursor|codex|gemini``: reflect a session of another client when it (or its turn) ends, as
``memx hook claude-code`` does at Claude Code's SessionEnd. Always exits 0; logs to the hook log.

What each client sends, from its documentation:

- Cursor (cursor.com/docs/agent/hooks): JSON on stdin with ``hook_event_name`` (``stop`` at the end of
  each agent loop, ``sessionEnd`` when the conversation ends), ``conversation_id``, ``workspace_roots``
  and ``transcript_path``, which the CLI leaves null; then the transcript is found where Cursor keeps it,
  ``~/.cursor/projects/<workspace path, each run of other characters as "-">/agent-transcripts/``
  ``<id>.jsonl`` (or ``<id>/<id>.jsonl``).
- Codex CLI (openai/codex docs/config.md, ``notify``): the JSON is the program's last argument,
  ``{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd", …}``; the thread's rollout is
  ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``.
- Gemini CLI (google-gemini/gemini-cli docs/hooks/reference.md): JSON on stdin with ``session_id``,
  ``transcript_path``, ``cwd`` and ``hook_event_name`` (``SessionEnd``, ``PreCompress``)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ..config import Settings
from .logs import MAX_STDIN, logger

EVENTS = {
    "cursor": ("stop", "sessionEnd"),
    "codex": ("agent-turn-complete",),
    "gemini": ("SessionEnd", "PreCompress"),
}


def cursor_slugs(workspace: str) -> list[str]:
    """Cursor's folder names for a workspace: the path without its leading separator, the other characters
    than letters and digits as "-" (one each, or one a run: Windows paths were seen both ways)."""
    bare = workspace.lstrip("/\\")
    return list(dict.fromkeys(re.sub(pattern, "-", bare) for pattern in (r"[^A-Za-z0-9]", r"[^A-Za-z0-9]+")))


def cursor_transcript(payload: Mapping[str, Any], home: Path) -> Path | None:
    given = payload.get("transcript_path")
    if isinstance(given, str) and given and Path(given).expanduser().is_file():
        return Path(given).expanduser()
    conversation = str(payload.get("conversation_id") or payload.get("session_id") or "")
    roots = payload.get("workspace_roots") or []
    if not re.fullmatch(r"[A-Za-z0-9-]+", conversation) or not isinstance(roots, list):
        return None
    for root in (str(r) for r in roots):
        for slug in cursor_slugs(root):
            folder = home / ".cursor" / "projects" / slug / "agent-transcripts"
            for candidate in (folder / f"{conversation}.jsonl", folder / conversation / f"{conversation}.jsonl"):
                if candidate.is_file():
                    return candidate
    return None


def codex_transcript(thread: str, codex_home: Path) -> Path | None:
    """The rollout file of ``thread``: the newest of its name under sessions/ (or archived_sessions/), plain
    or compressed (``.jsonl.zst``)."""
    from .sessions import codex_rollouts

    found = codex_rollouts(codex_home, thread)
    return found[0] if found else None


def _codex_home() -> Path:
    import os

    custom = os.environ.get("CODEX_HOME")
    return Path(custom).expanduser() if custom else Path.home() / ".codex"


def _read(client: str, stdin: IO[str] | None, argument: str | None) -> dict[str, Any]:
    raw = argument if client == "codex" else (stdin or sys.stdin).read(MAX_STDIN)
    payload: Any = json.loads(raw or "{}")
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def _session(client: str, payload: Mapping[str, Any]) -> tuple[str, str, Path | None, str]:
    """The event, session id, transcript file (None: not found) and working directory of ``payload``."""
    if client == "codex":
        thread = str(payload.get("thread-id") or "")
        path = codex_transcript(thread, _codex_home()) if thread else None
        return str(payload.get("type", "")), thread, path, str(payload.get("cwd") or "")
    if client == "cursor":
        roots = payload.get("workspace_roots") or []
        cwd = str(roots[0]) if isinstance(roots, list) and roots else ""
        session = str(payload.get("conversation_id") or payload.get("session_id") or "")
        return str(payload.get("hook_event_name", "")), session, cursor_transcript(payload, Path.home()), cwd
    given = str(payload.get("transcript_path") or "")
    path = Path(given).expanduser() if given and Path(given).expanduser().is_file() else None
    session = str(payload.get("session_id") or "")
    return str(payload.get("hook_event_name", "")), session, path, str(payload.get("cwd") or "")


def run(client: str, settings: Settings, stdin: IO[str] | None = None, argument: str | None = None) -> int:
    """Handle one call of ``client``'s hook (Codex: ``argument`` is the notification). Returns 0 always."""
    from .sessions import is_child

    if is_child():  # a model call memx started (codex exec, gemini -p) ends too: it is not a session to read
        return 0
    log = logger(settings)
    try:
        payload = _read(client, stdin, argument)
        event, session, path, cwd = _session(client, payload)
        if event not in EVENTS[client]:
            log.info("%s: ignored event %r", client, event)
            return 0
        if path is None:
            log.info("%s %s: no transcript to reflect (session %s)", client, event, session[:12] or "none given")
            return 0
        from .queue import QueuedSession
        from .sessions import reflect_session

        key = f"session:{client}:{session}" if session else None
        reflect_session(settings, QueuedSession(f"{client} {event}", path, key, cwd), log)
    except Exception as exc:  # fail open: the client must never see an error from memx
        log.warning("%s hook failed open: %s: %s", client, type(exc).__name__, exc)
    return 0


def work(settings: Settings) -> int:
    """``memx hook worker``: read the queued sessions (``queue.py``), detached from any hook. Returns 0."""
    from . import queue
    from .sessions import is_child, reflect_now

    if is_child():
        return 0
    log = logger(settings)
    try:
        queue.work(settings, log, reflect_now)
    except Exception as exc:  # said in the log, never silent
        log.warning("the worker stopped: %s: %s", type(exc).__name__, exc)
    return 0
