"""The user's path of issue 27 with real parts: Claude Code's own CLI from npm is the user's client AND the
model memx asks (its headless mode), both pointed at a loopback Messages API; an OpenAI-compatible server on
loopback is the other backend. A real SessionEnd hook queues the session, the detached worker reflects it
once, no recursive session starts, and the hook does not wait for the model. Claude Code's tests need its
CLI (`.ci/run` installs it; `MEMX_TEST_CLAUDE` names the binary) and are skipped without it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.adapters.git import detect_scope

from .engine.reflector.test_pipeline import EPISODE
from .engine.reflector.test_session_mode import FIX
from .helpers import env_for, run_memx, script
from .messages_api import MessagesAPI
from .openai_api import ChatCompletionsAPI

CLAUDE = os.environ.get("MEMX_TEST_CLAUDE") or shutil.which("claude")
PREFERENCE = "Please always use pnpm in this repo, never npm."
WINDOW = re.compile(r"Part \d+ of \d+ of one coding session")


class UserAndModel(MessagesAPI):
    """Claude Code's own turns get plain text; memx's window prompt gets the user's stated preference as a
    lesson citing the step it is on, answered only after ``delay`` seconds (so a hook that waited for the
    model would be seen waiting)."""

    def __init__(self, delay: float) -> None:
        super().__init__("session")
        self.window_delay = delay
        self.windows: list[float] = []  # when each window prompt arrived
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        system = json.dumps(body.get("system", ""))
        if "You curate a long-term memory" in system:  # memx's call, not the title Claude Code writes for it
            with self.lock:
                self.windows.append(time.monotonic())
        return super().answer(body)

    def _session_answer(self, prompt: str) -> str:
        if not WINDOW.search(prompt):
            return super()._session_answer(prompt)
        time.sleep(self.window_delay)
        found = re.search(r"^\[(\d+)\] user: " + re.escape(PREFERENCE), prompt, re.M)
        if not found:
            return json.dumps({"lessons": []})
        lesson = {
            "lesson": "In this repository use pnpm, never npm: the user asked to always use pnpm.",
            "kind": "preference",
            "outcome": "success",
            "problem_steps": [int(found.group(1))],
            "cites": ["always use pnpm"],
            "section": "PREFERENCES",
            "knowledge_type": "PREFERENCE",
            "score": 75,
        }
        return json.dumps({"lessons": [lesson]})


def wait_for(predicate: Any, seconds: float = 180.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def hook_log(data: Path) -> str:
    log = data / "logs" / "hook.log"
    return log.read_text(encoding="utf-8") if log.is_file() else ""


def stored(data: Path, scope: str = "global") -> list[dict[str, Any]]:
    done = run_memx(data, "list", "--json", "--scope", scope)
    listed = json.loads(done.stdout or "{}")
    return list(listed.get("bullets", [])) if isinstance(listed, dict) else []


@pytest.mark.skipif(not CLAUDE, reason="Claude Code's CLI is not installed (npm i @anthropic-ai/claude-code)")
def test_claude_code_is_the_model_a_real_session_end_hook_asks_once_and_never_recursively(tmp_path: Path) -> None:
    home, data, proj = tmp_path / "home", tmp_path / "data", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    proj.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(proj)], check=True)
    memx = " ".join(script("memx"))
    hooks = {"SessionEnd": [{"hooks": [{"type": "command", "command": f"{memx} hook claude-code"}]}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    api = UserAndModel(delay=4.0)
    with api.running():
        env = env_for(
            data,
            HOME=str(home),
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-ant-loopback-0000",
            MEMX_LLM_BACKEND="claude-cli",
            MEMX_CLI_PATHS=f"claude={CLAUDE}",
        )
        user = subprocess.run(
            [str(CLAUDE), "-p", PREFERENCE], cwd=proj, env=env, capture_output=True, text=True, timeout=180
        )
        user_done = time.monotonic()
        assert user.returncode == 0, user.stdout + user.stderr
        assert wait_for(lambda: "mode=session" in hook_log(data)), hook_log(data)
        time.sleep(2.0)  # anything a recursive session would start has time to show
        sessions = {h.get("x-claude-code-session-id") for h in api.headers}
    log = hook_log(data)
    assert log.count("queued for the detached worker") == 1 and log.count("mode=session") == 1, log
    assert len(api.windows) == 1  # the session was read once, in one window
    assert len(sessions) == 2  # the user's session and memx's one model call: no session it started itself
    assert api.windows[0] + api.window_delay > user_done  # the hook never waited for the model
    (bullet,) = stored(data, str(detect_scope(proj).project_scope()))  # the scope of the session's repository
    assert "pnpm" in bullet["content"] and re.search(r"steps \d+ · claude-code$", bullet["origin"])
    assert not list((home / ".claude" / "projects").rglob("*.jsonl"))[1:]  # only the user's session is saved


def test_an_openai_compatible_server_is_the_model_of_a_real_session_end_hook(tmp_path: Path) -> None:
    data = tmp_path / "data"
    transcript = tmp_path / "s-9.jsonl"
    transcript.write_text(EPISODE)
    with ChatCompletionsAPI(lessons=[FIX]).running() as api:
        payload = {"session_id": "s-9", "transcript_path": str(transcript), "cwd": str(tmp_path),
                   "hook_event_name": "SessionEnd", "reason": "exit"}  # fmt: skip
        env = env_for(data, MEMX_LLM_BACKEND="openai", MEMX_OPENAI_BASE_URL=api.url, MEMX_OPENAI_MODEL="qwen",
                      MEMX_SCOPE="global")  # fmt: skip
        done = subprocess.run([*script("memx"), "hook", "claude-code"], input=json.dumps(payload), env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stdout == ""
        assert wait_for(lambda: "mode=session" in hook_log(data)), hook_log(data)
    assert len(api.requests) == 1 and api.requests[0]["path"] == "/v1/chat/completions"
    (bullet,) = stored(data)
    origin = "session:s-9 · steps 0,2 · claude-code"
    assert bullet["content"] == FIX["lesson"] and bullet["origin"] == origin
    assert f"from {origin}" in run_memx(data, "show", bullet["id"]).stdout  # and the page's detail, MCP's recall
    recalled = json.loads(run_memx(data, "recall", "asset build fails", "--scope", "global", "--json").stdout)
    assert recalled["results"][0]["origin"] == origin


def test_a_rate_limited_session_stays_queued_and_the_worker_does_not_loop(tmp_path: Path) -> None:
    data = tmp_path / "data"
    transcript = tmp_path / "s-7.jsonl"
    transcript.write_text(EPISODE)
    with ChatCompletionsAPI(behaviour="limited").running() as api:
        payload = {"session_id": "s-7", "transcript_path": str(transcript), "cwd": str(tmp_path),
                   "hook_event_name": "SessionEnd"}  # fmt: skip
        env = env_for(data, MEMX_LLM_BACKEND="openai", MEMX_OPENAI_BASE_URL=api.url, MEMX_OPENAI_MODEL="qwen")
        subprocess.run(
            [*script("memx"), "hook", "claude-code"], input=json.dumps(payload), env=env, text=True, timeout=60
        )
        assert wait_for(lambda: "rate limited" in hook_log(data)), hook_log(data)
        subprocess.run([*script("memx"), "hook", "worker"], env=env, timeout=120)  # not due yet: asks nothing
    assert len(api.requests) == 1
    (queued,) = (data / "queue").glob("*.json")
    job = json.loads(queued.read_text())
    assert job["attempts"] == 1 and job["due"] > time.time() + 60  # the server's retry-after: 90 s
    assert stored(data) == []


@pytest.mark.skipif(not CLAUDE, reason="Claude Code's CLI is not installed (npm i @anthropic-ai/claude-code)")
def test_a_rate_limit_said_through_claude_code_leaves_the_session_for_later(tmp_path: Path) -> None:
    data, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    transcript = tmp_path / "s-5.jsonl"
    transcript.write_text(EPISODE)
    with MessagesAPI("limited").running() as api:
        env = env_for(data, HOME=str(home), ANTHROPIC_BASE_URL=api.url, ANTHROPIC_AUTH_TOKEN="loopback",
                      MEMX_LLM_BACKEND="claude-cli", MEMX_CLI_PATHS=f"claude={CLAUDE}", MEMX_SCOPE="global")  # fmt: skip
        done = subprocess.run([*script("memx"), "reflect", str(transcript), "--json"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (out,) = json.loads(done.stdout)
    assert any("left for later: claude-cli: API Error" in n and "429" in n for n in out["notes"]), out["notes"]
    assert out["added"] == 0 and stored(data) == []
    assert len(api.requests) <= 2  # one call, at most one retry: memx falls back or queues, Claude Code does not loop


class SlowFirst(ChatCompletionsAPI):
    """Answers the first call only after ``started`` is set and ``release`` is: the test adds turns to the
    session and fires its next hook while the worker waits on this reading."""

    def __init__(self) -> None:
        super().__init__(lessons=[FIX])
        self.started, self.release = threading.Event(), threading.Event()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if not self.started.is_set():
            self.started.set()
            self.release.wait(60)
        return super().answer(body)


def test_a_session_queued_again_while_the_worker_reads_it_is_read_again_for_its_new_turns(tmp_path: Path) -> None:
    """PreCompact then SessionEnd with real hooks and the detached worker: the worker used to delete the
    newer job, and the turns after the first reading were never read."""
    data = tmp_path / "data"
    transcript = tmp_path / "s-8.jsonl"
    transcript.write_text(EPISODE)
    api = SlowFirst()
    with api.running():
        env = env_for(data, MEMX_LLM_BACKEND="openai", MEMX_OPENAI_BASE_URL=api.url, MEMX_OPENAI_MODEL="qwen",
                      MEMX_SCOPE="global")  # fmt: skip

        def hook(event: str) -> None:
            payload = {"session_id": "s-8", "transcript_path": str(transcript), "cwd": str(tmp_path),
                       "hook_event_name": event}  # fmt: skip
            done = subprocess.run([*script("memx"), "hook", "claude-code"], input=json.dumps(payload), env=env,
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
            assert done.returncode == 0

        hook("PreCompact")
        assert api.started.wait(120), hook_log(data)  # the worker is reading the first part
        new_turn = {"type": "user", "message": {"role": "user", "content": "NEW-TURN: also run make lint first"}}
        with transcript.open("a") as f:
            f.write("\n" + json.dumps(new_turn) + "\n")
        hook("SessionEnd")  # its own worker finds the first one holding the lock
        api.release.set()
        assert wait_for(lambda: hook_log(data).count("mode=session") == 2), hook_log(data)
    first, second = (str(r["messages"][-1]["content"]) for r in api.requests)
    assert "NEW-TURN" not in first and "NEW-TURN" in second  # read again, for the turn written meanwhile
    assert "steps 3→4" in hook_log(data)  # only the new turn, the first three already read
    assert list((data / "queue").glob("*.json")) == [] and list((data / "queue").glob("*.reading")) == []
    assert [b["content"] for b in stored(data)] == [FIX["lesson"]]
