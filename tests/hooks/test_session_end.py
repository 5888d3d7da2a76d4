"""`memx hook cursor | codex | gemini` as each client runs it: the real `memx` script, a temporary HOME
laid out as the client lays out its files, a real store. Each client's transcript of one session stores the
bullet that the Claude Code transcript of the same session stores; the same session again adds nothing; a
payload whose transcript is missing exits 0 and says so in the hook log."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.hooks.sessions import INLINE_RULES_BYTES

from ..helpers import env_for, run_hook, script
from . import sessions

CURSOR_ID = "cdefee2d-2727-4b73-bf77-d9d830f31d2a"
THREAD = "019daa66-5b7b-7b01-b9ce-b527014cc09f"
GEMINI_ID = "6b1f4bd0-42f3-4b2e-9d0e-2c4f6e1e7a55"


def memx_hook(
    tmp_path: Path, client: str, payload: dict[str, Any], store: str = "data"
) -> subprocess.CompletedProcess[str]:
    """The hook as the client starts it: Cursor and Gemini CLI write the JSON to stdin, Codex CLI passes
    it as the notify program's last argument."""
    home = tmp_path / "home"
    env = {**env_for(tmp_path / store), "HOME": str(home), "USERPROFILE": str(home), "CODEX_HOME": str(home / ".codex")}
    argv = [*script("memx"), "hook", client]
    if client == "codex":
        argv.append(json.dumps(payload))
    return subprocess.run(
        argv,
        input="" if client == "codex" else json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )


def stored(tmp_path: Path, store: str = "data") -> list[tuple[str, str]]:
    memory = open_memory(Settings(home=tmp_path / store), cwd=tmp_path, preload=False)
    return sorted((b.content, b.scope) for b in memory.store.all_bullets())


def hook_log(tmp_path: Path, store: str = "data") -> str:
    return (tmp_path / store / "logs" / "hook.log").read_text(encoding="utf-8")


def project(tmp_path: Path) -> Path:
    """A git repository: its bullets go to the project's scope (outside any, to global)."""
    folder = tmp_path / "work" / "shop-api"
    if not folder.exists():
        folder.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    return folder


def cursor_session(tmp_path: Path, root: Path, with_path: bool) -> dict[str, Any]:
    """A stop payload (cursor.com/docs/agent/hooks); Cursor's CLI sends transcript_path null, so then the
    transcript is where Cursor keeps it, under ~/.cursor/projects/<workspace as a slug>/."""
    slug = str(root).lstrip("/").replace("/", "-").replace("_", "-").replace(".", "-")
    where = tmp_path / "home" / ".cursor" / "projects" / slug / "agent-transcripts" / CURSOR_ID / f"{CURSOR_ID}.jsonl"
    sessions.write(where, sessions.cursor())
    return {
        "conversation_id": CURSOR_ID,
        "generation_id": "26b45fb6-bdea-439c-b2dc-5e97ee00ecea",
        "model": "claude-4.5-sonnet",
        "hook_event_name": "stop",
        "cursor_version": "2.0.77",
        "workspace_roots": [str(root)],
        "user_email": None,
        "transcript_path": str(where) if with_path else None,
        "status": "completed",
        "loop_count": 0,
    }


def codex_session(tmp_path: Path, root: Path) -> dict[str, Any]:
    """The notify JSON of openai/codex docs/config.md; the rollout is where Codex writes it."""
    rollout = (
        tmp_path / "home" / ".codex" / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T13-40-00-{THREAD}.jsonl"
    )
    sessions.write(rollout, sessions.codex(THREAD, str(root)))
    return {
        "type": "agent-turn-complete",
        "thread-id": THREAD,
        "turn-id": "12345",
        "cwd": str(root),
        "input-messages": [sessions.PROMPT],
        "last-assistant-message": sessions.ANSWER,
    }


def gemini_session(tmp_path: Path, root: Path) -> dict[str, Any]:
    """A SessionEnd payload (google-gemini/gemini-cli docs/hooks/reference.md); the chat is where Gemini CLI
    saves it, ~/.gemini/tmp/<project hash>/chats/."""
    chat = (
        tmp_path
        / "home"
        / ".gemini"
        / "tmp"
        / ("9f2c" * 16)
        / "chats"
        / f"session-2026-12-01T13-40-{GEMINI_ID[:8]}.jsonl"
    )
    sessions.write(chat, sessions.gemini(GEMINI_ID))
    return {
        "session_id": GEMINI_ID,
        "transcript_path": str(chat),
        "cwd": str(root),
        "hook_event_name": "SessionEnd",
        "timestamp": "2026-12-01T13:45:00.000Z",
        "reason": "exit",
    }


@dataclass(frozen=True)
class Reference:
    root: Path  # the git repository the session ran in
    bullets: list[tuple[str, str]]  # what `memx hook claude-code` stored of it


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """One repository for the module's sessions, and the Claude Code hook's bullets of the session there,
    made once: each test runs its own client's hook into a store of its own and compares."""
    base = tmp_path_factory.mktemp("claude-code")
    return Reference(project(base), claude_code_bullets(base))


def claude_code_bullets(tmp_path: Path) -> list[tuple[str, str]]:
    """What `memx hook claude-code` stores from the same session, in a store of its own."""
    root = project(tmp_path)
    transcript = sessions.write(tmp_path / "claude" / "c-1.jsonl", sessions.claude_code("c-1", str(root)))
    payload = {
        "session_id": "c-1",
        "transcript_path": str(transcript),
        "cwd": str(root),
        "hook_event_name": "SessionEnd",
    }
    assert run_hook(tmp_path / "claude-data", payload).returncode == 0
    return stored(tmp_path, "claude-data")


CASES = {
    "cursor": lambda tmp_path, root: cursor_session(tmp_path, root, with_path=False),
    "cursor-with-path": lambda tmp_path, root: cursor_session(tmp_path, root, with_path=True),
    "codex": codex_session,
    "gemini": gemini_session,
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_hook_stores_what_claude_code_stores_of_the_same_session_and_nothing_twice(
    tmp_path: Path, case: str, reference: Reference
) -> None:
    client = case.split("-")[0]
    expected = reference.bullets
    assert expected and sessions.BULLET in expected[0][0] and expected[0][1].startswith("project:shop-api")
    payload = CASES[case](tmp_path, reference.root)
    first = memx_hook(tmp_path, client, payload)
    assert first.returncode == 0 and first.stdout == "", first.stderr
    assert stored(tmp_path) == expected, hook_log(tmp_path)
    second = memx_hook(tmp_path, client, payload)
    assert second.returncode == 0
    assert stored(tmp_path) == expected
    log = hook_log(tmp_path).splitlines()
    assert "added=1" in log[-2] and "added=0" in log[-1] and "candidates=0" in log[-1], log


@pytest.mark.parametrize("client", ["cursor", "codex", "gemini"])
def test_a_payload_whose_transcript_is_missing_exits_0_and_logs_it(tmp_path: Path, client: str) -> None:
    payload = {
        "cursor": {"hook_event_name": "sessionEnd", "conversation_id": "gone-1", "workspace_roots": [str(tmp_path)]},
        "codex": {"type": "agent-turn-complete", "thread-id": "gone-1", "cwd": str(tmp_path)},
        "gemini": {
            "hook_event_name": "SessionEnd",
            "session_id": "gone-1",
            "transcript_path": str(tmp_path / "no.jsonl"),
        },
    }[client]
    done = memx_hook(tmp_path, client, payload)
    assert done.returncode == 0 and done.stdout == ""
    assert "no transcript to reflect (session gone-1)" in hook_log(tmp_path)
    assert not (tmp_path / "data" / "store").exists()  # nothing opened, nothing stored


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]"])
def test_a_payload_that_is_no_json_object_fails_open(tmp_path: Path, raw: str) -> None:
    home = tmp_path / "home"
    env = {**env_for(tmp_path / "data"), "HOME": str(home)}
    for client in ("cursor", "gemini"):
        done = subprocess.run(
            [*script("memx"), "hook", client],
            input=raw,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0 and done.stdout == ""
    done = subprocess.run(
        [*script("memx"), "hook", "codex", raw], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0
    log = hook_log(tmp_path)
    assert log.count("hook failed open") + log.count("ignored event") == 3


def test_a_session_too_long_to_read_inside_the_hook_goes_to_the_worker(tmp_path: Path, reference: Reference) -> None:
    """A 49 MB transcript kept the rules-mode hook busy 134 s, far past the client's deadline."""
    transcript = tmp_path / "claude" / "c-2.jsonl"
    sessions.write(transcript, sessions.claude_code("c-2", str(reference.root)))
    with transcript.open("a") as f:
        while transcript.stat().st_size <= INLINE_RULES_BYTES:
            f.write(json.dumps({"type": "summary", "summary": "a long session " * 500}) + "\n")
            f.flush()
    payload = {"session_id": "c-2", "transcript_path": str(transcript), "cwd": str(reference.root),
               "hook_event_name": "SessionEnd"}  # fmt: skip
    assert run_hook(tmp_path / "data", payload).returncode == 0
    assert "KB is too long to read inside the hook" in hook_log(tmp_path)  # the hook only queued it
    deadline = time.monotonic() + 120
    while not stored(tmp_path) and time.monotonic() < deadline:  # the detached worker reads it
        time.sleep(0.2)
    assert stored(tmp_path) == reference.bullets, hook_log(tmp_path)
    assert list((tmp_path / "data" / "queue").glob("*.json")) == []
