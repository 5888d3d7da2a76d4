"""Reflecting into the store, the Claude Code hook and its installation."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from memx_mcp.adapters.git import GitRepositories
from memx_mcp.config import Settings
from memx_mcp.domain.errors import InvalidInputError
from memx_mcp.domain.models import Status
from memx_mcp.hooks import claude_code, queue
from memx_mcp.hooks.logs import logger
from memx_mcp.hooks.sessions import reflect_now
from memx_mcp.memory import Memory
from memx_mcp.usecases.reflect import allowed_path, read_transcript, reflect, transcript_file

from ..helpers import env_for, script

DATA = Path(__file__).parents[2] / "benchmarks" / "data" / "transcripts"
SESSION = DATA / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"


def test_reflecting_the_same_session_twice_adds_nothing_the_second_time(memory: Memory) -> None:
    first = reflect(memory.deps, read_transcript(SESSION), path=SESSION, mode="rules")
    assert first.stored and all(s.action != "merged" for s in first.stored)
    count = memory.stats().active
    second = reflect(memory.deps, read_transcript(SESSION), path=SESSION, mode="rules")
    assert second.start_step == first.report.steps and second.stored == []
    assert memory.stats().active == count


def test_a_dry_run_stores_nothing_and_reports_section_type_score_rule_and_step(memory: Memory) -> None:
    result = reflect(memory.deps, read_transcript(SESSION), path=SESSION, mode="rules", dry_run=True)
    assert result.report.bullets and memory.stats().total == 0
    b = result.report.bullets[0]
    assert b.section and b.knowledge_type and b.score > 0 and b.rule.endswith("Rule") and b.step >= 0


def test_without_state_the_curator_still_merges_a_repeat(memory: Memory) -> None:
    text = read_transcript(SESSION)
    reflect(memory.deps, text, mode="rules", session_key="a")
    again = reflect(memory.deps, text, mode="rules", session_key="b")
    # a bullet waiting for review (here: a config line with a masked secret value) is added as it is and
    # curated when approved; every other one merges into its repeat
    trusted = [s for s in again.stored if s.bullet.status is not Status.PENDING]
    assert trusted and all(s.action == "merged" for s in trusted)
    assert all(s.action == "inserted" for s in again.stored if s.bullet.status is Status.PENDING)


def test_a_secret_in_a_transcript_never_reaches_the_store(memory: Memory, settings: Settings) -> None:
    secret = "sk-ant-api03-Q8vN2kLx7Rt5Yw3Zp1Mc9Bd4Fg6Hj0Ks"
    text = (
        f"User: the deploy failed with Error: 401 unauthorized\nAssistant: fixed it by exporting "
        f"ANTHROPIC_API_KEY={secret} in .env, works now."
    )
    result = reflect(memory.deps, text, mode="rules")
    assert result.stored
    leaked = [p for p in settings.home.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaked == []


def test_a_password_seen_in_a_url_is_masked_where_a_bullet_repeats_it_bare(memory: Memory) -> None:
    text = (
        "User: psql postgres://admin:Qz8-horse-Battery@db/app fails with Error: password authentication failed\n"
        "Assistant: fixed it by resetting the role to Qz8-horse-Battery again, works now."
    )
    result = reflect(memory.deps, text, mode="rules", dry_run=True)
    assert result.report.bullets
    assert not any("Qz8-horse-Battery" in b.content for b in result.report.bullets)
    assert any("[REDACTED:url_credentials]" in b.content for b in result.report.bullets)


@pytest.mark.parametrize("bad", ["/etc/passwd", "/root/../etc/shadow", "~/notes.jsonl", "/tmp/session.jsonl"])
def test_reflect_paths_outside_allowed_folders_are_refused(bad: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="only from the clients' session folders"):
        allowed_path(bad, tmp_path, GitRepositories())


@pytest.mark.parametrize(
    "name", [".ssh/id_ed25519", ".aws/credentials", ".config/gcloud/creds.json", ".netrc", "app/.env", "app/.env.prod"]
)
def test_credential_files_are_never_read_even_when_named_on_the_command_line(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="never reads credential files"):
        transcript_file(tmp_path / name, tmp_path)


def test_the_project_repository_is_a_transcript_root_but_never_the_root_or_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "notes").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes" / "s.txt").write_text("User: hi")
    assert allowed_path(str(repo / "notes" / "s.txt"), repo, GitRepositories()) == (repo / "notes" / "s.txt").resolve()
    monkeypatch.setenv("HOME", str(repo))  # a dotfiles repository in the home folder
    with pytest.raises(InvalidInputError, match="session folders"):
        allowed_path(str(repo / "notes" / "s.txt"), repo, GitRepositories())


def test_a_transcript_claiming_another_sessions_id_does_not_mark_that_session(memory: Memory, tmp_path: Path) -> None:
    victim = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
    text = "\n".join(
        json.dumps({"type": t, "sessionId": victim, "message": {"role": t, "content": c}})
        for t, c in (("user", "the tests are slow"), ("assistant", "Run pytest -n auto to use every core."))
    )
    elsewhere = tmp_path / "other.jsonl"
    elsewhere.write_text(text)
    reflect(memory.deps, text, mode="rules")
    reflect(memory.deps, text, path=elsewhere, mode="rules")
    assert memory.store.reflected_upto(f"session:{victim}") == 0
    named = tmp_path / f"{victim}.jsonl"  # as Claude Code names its files: the id is the file's
    named.write_text(text)
    reflect(memory.deps, text, path=named, mode="rules")
    assert memory.store.reflected_upto(f"session:{victim}") == 2


def test_binary_and_missing_transcripts_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(InvalidInputError, match="binary"):
        read_transcript(tmp_path / "x.bin")
    with pytest.raises(InvalidInputError, match="no such file"):
        read_transcript(tmp_path / "missing.jsonl")
    (tmp_path / "latin1.txt").write_bytes("café: pytest -x".encode("latin-1"))
    with pytest.raises(InvalidInputError, match="not UTF-8 text"):
        read_transcript(tmp_path / "latin1.txt")
    with pytest.raises(InvalidInputError, match="NUL"):
        transcript_file("a\x00b.jsonl", tmp_path)


def hook_input(tmp_path: Path, **extra: str) -> str:
    shutil.copy(SESSION, tmp_path / "s.jsonl")
    payload = {
        "session_id": "s-1",
        "transcript_path": str(tmp_path / "s.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionEnd",
        "reason": "exit",
        **extra,
    }
    return json.dumps(payload)


def read_by_the_worker(settings: Settings, line: str) -> str:
    """The hook log once ``line`` is in it: a session this long (2.8 MB) goes to the worker, which this
    process runs (or the detached one the hook started, whichever takes the lock)."""
    log = settings.home / "logs" / "hook.log"
    deadline = time.monotonic() + 120
    while line not in log.read_text() and time.monotonic() < deadline:
        queue.work(settings, logger(settings), reflect_now)
        time.sleep(0.1)
    return log.read_text()


def test_the_session_end_hook_reflects_only_new_turns_and_logs(settings: Settings, tmp_path: Path) -> None:
    assert claude_code.run(settings, io.StringIO(hook_input(tmp_path))) == 0
    log = read_by_the_worker(settings, "SessionEnd session=s-1 steps")
    # 257 steps: the compaction summary record (isCompactSummary) is not a step (not the user's words)
    assert "SessionEnd session=s-1 steps 0→257" in log and "added=" in log
    assert claude_code.run(settings, io.StringIO(hook_input(tmp_path, hook_event_name="PreCompact"))) == 0
    log = read_by_the_worker(settings, "PreCompact session=s-1 steps")
    assert "PreCompact session=s-1 steps 257→257" in log and "added=0" in log


@pytest.mark.parametrize(
    "stdin", ["", "not json", "[1,2]", '{"hook_event_name": "SessionEnd", "transcript_path": "/nope"}']
)
def test_the_hook_fails_open(settings: Settings, stdin: str) -> None:
    assert claude_code.run(settings, io.StringIO(stdin)) == 0


def test_the_hook_command_exits_zero_even_when_the_store_is_unreadable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "store").write_text("not a folder")
    done = subprocess.run(
        [*script("memx"), "hook", "claude-code"],
        input=hook_input(tmp_path),
        text=True,
        capture_output=True,
        env=env_for(home),
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == ""
    settings = Settings(home=home, llm_backend="none")
    log = read_by_the_worker(settings, "queued session s-1 failed")  # a long session: the worker says it
    assert "StoreDamaged" in log or "store" in log.split("queued session s-1 failed", 1)[1], log


@pytest.mark.parametrize("bad", [{"MEMX_SECRET_PATTERNS": "ticket=ACME-("}, {"MEMX_MAX_RESULTS": "many"}])
def test_the_hook_command_exits_zero_even_with_a_bad_setting(tmp_path: Path, bad: dict[str, str]) -> None:
    done = subprocess.run(
        [*script("memx"), "hook", "claude-code"],
        input=hook_input(tmp_path),
        text=True,
        capture_output=True,
        env=env_for(tmp_path / "home", **bad),
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert "memx: error:" in done.stderr  # said, but the client is not blocked


def test_memx_reflect_dry_run_json_and_memx_sanitize(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [*script("memx"), "--home", str(home), "reflect", str(SESSION), "--dry-run", "--json", "--mode", "rules"],
        capture_output=True,
        text=True,
        env=env_for(home),
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (out,) = json.loads(done.stdout)
    assert out["dry_run"] and out["bullets"]
    assert {"section", "knowledge_type", "score", "rule", "step"} <= set(out["bullets"][0])
    masked = subprocess.run(
        [*script("memx"), "sanitize"],
        input="db: password=hunter2hunter2 ok\n",
        capture_output=True,
        text=True,
        env=env_for(home),
        timeout=60,
    )
    assert masked.stdout == "db: password=[REDACTED:secret_assignment] ok\n"


@pytest.mark.parametrize("payload", [{}, {"transcript_path": ""}, {"transcript_path": "/nonexistent/t.jsonl"}])
def test_a_session_end_without_a_transcript_is_no_failure(settings: Settings, payload: dict[str, str]) -> None:
    # `claude mcp list` fires SessionEnd for sessions that never wrote a transcript
    event = json.dumps({"hook_event_name": "SessionEnd", "session_id": "health-check", **payload})
    assert claude_code.run(settings, io.StringIO(event)) == 0
    log = (settings.home / "logs" / "hook.log").read_text()
    assert "no transcript to reflect" in log and "failed open" not in log
