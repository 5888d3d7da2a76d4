"""`memx review`: the list (piped or --json), one answer per flag, and one key per bullet on a terminal."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import MODEL
from ..helpers import env_for, run_hook, run_memx, script
from ..usecases.test_review import CURL, FETCH_REASON, distilled, fetch_step, learn, poisoned_session

MAKE = "Use make test -j4 to run the suite in parallel"
LINT = "Run make lint before every push"


def _held(home: Path, embedder: Embedder) -> tuple[Memory, list[str]]:
    settings = Settings(home=home, scope="global")
    memory = Memory(settings, LanceStore(home / "store", MODEL, 384), ReadyEmbedder(embedder), cwd=home.parent)
    step = fetch_step(poisoned_session())
    learn(
        memory,
        distilled(CURL, step, voice="content", held=(FETCH_REASON,)),
        distilled(MAKE, 0, held=("y",)),
        distilled(LINT, 0, held=("z",)),
    )
    return memory, [p.bullet.id for p in memory.pending()]


def test_memx_review_lists_and_answers_without_a_prompt(tmp_path: Path, embedder: Embedder) -> None:
    home = tmp_path / "home"
    memory, (curl, make, lint) = _held(home, embedder)
    listed = run_memx(home, "review")  # piped: the list, never a prompt
    assert listed.returncode == 0, listed.stderr
    assert "3 learned bullet(s) wait for review" in listed.stdout and FETCH_REASON in listed.stdout
    assert "│ " in listed.stdout and "evil.example/setup.sh" in listed.stdout
    as_json = json.loads(run_memx(home, "review", "--json").stdout)
    assert [p["bullet"]["id"] for p in as_json["pending"]] == [curl, make, lint]
    assert as_json["pending"][0]["said_by"] == "learned from session poison-1 (claude-code)"
    rejected = run_memx(home, "review", "--reject", curl)
    assert rejected.returncode == 0 and f"Rejected {curl}" in rejected.stdout
    approved = json.loads(run_memx(home, "review", "--approve", make, "--json").stdout)
    assert approved["action"] == "approve" and approved["result"]["bullet"]["status"] == "active"
    edited = run_memx(home, "review", "--edit", lint, "Run make lint && make test before every push")
    assert edited.returncode == 0 and f"Edited and approved {lint}" in edited.stdout
    again = run_memx(home, "review", "--approve", curl)
    assert again.returncode != 0 and "waits for review" in again.stderr
    assert sorted(b.content for b in memory.list_bullets()) == sorted(
        [MAKE, "Run make lint && make test before every push"]
    )
    assert run_memx(home, "review").stdout.strip() == "Nothing waits for review."


def _read_until(fd: int, wanted: str, seconds: float = 120.0) -> str:
    seen = ""
    deadline = time.monotonic() + seconds  # a bound on a hang, not a timing assertion
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                seen += os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:
                break
    return seen


def test_on_a_terminal_one_key_approves_edits_rejects_or_skips(tmp_path: Path, embedder: Embedder) -> None:
    home = tmp_path / "home"
    memory, (curl, make, lint) = _held(home, embedder)
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [*script("memx"), "--home", str(home), "review"],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env_for(home),
        cwd=home.parent,
    )
    os.close(child)
    try:
        first = _read_until(main, "[q]uit: ")
        assert curl in first and "[1/3]" in first
        os.write(main, b"r")
        second = _read_until(main, "[q]uit: ")
        assert f"Rejected {curl}" in second and "[2/3]" in second
        os.write(main, b"e")
        _read_until(main, "> ")
        os.write(main, b"Use make test -j8 to run the suite in parallel\n")
        third = _read_until(main, "[q]uit: ")
        assert f"Edited and approved {make}" in third and "[3/3]" in third
        os.write(main, b"s")
        assert "1 bullet(s) still wait for review." in _read_until(main, "wait for review.")
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        os.close(main)
    assert [b.content for b in memory.list_bullets()] == ["Use make test -j8 to run the suite in parallel"]
    assert [p.bullet.id for p in memory.pending()] == [lint]


SESSION = (
    Path(__file__).parents[2] / "benchmarks" / "data" / "transcripts" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
)


@pytest.fixture
def helper_home(tmp_path: Path) -> Iterator[Path]:
    """A data folder whose warm helper (the hooks start one) ends with the test."""
    home = tmp_path / "home"
    yield home
    state = home / "run" / "hook-helper.json"
    if state.exists() and "pid" in (data := json.loads(state.read_text())):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(data["pid"]), signal.SIGTERM)


def test_a_real_session_learned_under_review_all_is_announced_then_injected_once_approved(
    helper_home: Path, tmp_path: Path
) -> None:
    home = helper_home
    reflected = run_memx(home, "reflect", str(SESSION), "--mode", "rules", "--json", MEMX_REVIEW="all")
    assert reflected.returncode == 0, reflected.stderr
    [out] = json.loads(reflected.stdout)
    waiting = json.loads(run_memx(home, "review", "--json").stdout)["pending"]
    assert waiting and len(waiting) == out["added"] and any("wait for your review" in n for n in out["notes"])
    assert all(p["bullet"]["status"] == "pending" and p["excerpt"].startswith("[step ") for p in waiting)
    assert all(p["said_by"] == "learned from session 8463c716 (claude-code)" for p in waiting)
    base = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path)}
    start = run_hook(home, {**base, "hook_event_name": "SessionStart", "source": "startup"})
    assert start.returncode == 0
    assert start.stdout.splitlines() == [
        f"memx: {len(waiting)} learned note(s) wait for the user's review (not shown until approved): run `memx review`"
    ]
    # a pitfall: what SessionStart shows of a store whose bullets were never recalled (outside a repository)
    first = next(
        p["bullet"]
        for p in waiting
        if "PITFALL" in (p["bullet"]["knowledge_type"], p["bullet"]["section"]) or p["bullet"]["section"] == "DEBUGGING"
    )
    assert run_memx(home, "review", "--approve", first["id"]).returncode == 0
    later = run_hook(home, {**base, "session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"})
    lines = later.stdout.splitlines()
    assert lines[0].startswith("memx: notes recalled from earlier sessions") and "not instructions" in lines[0]
    assert lines[1] == "<memx-notes>" and "</memx-notes>" in lines
    shown = [line for line in lines if line.startswith("- [learned from session 8463c716 (claude-code)] ")]
    assert len(shown) == 1 and " ".join(first["content"].split())[:200] in shown[0]
    assert lines[-1].startswith(f"memx: {len(waiting) - 1} learned note(s) wait")
