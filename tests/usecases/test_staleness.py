"""Before injection (issue 27): a bullet naming a file deleted from a real git repository is not injected
and is marked stale; a person's confirm brings it back for good."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.git import GitRepositories
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder
from memx_mcp.usecases.injection import inject, prompt_context, session_context

from ..conftest import MODEL, Clock

DEPLOY = "Deploy with `scripts/deploy.sh --prod`: it reads DEPLOY_ENV, so export DEPLOY_ENV=prod first"
DEBUG = "Run src/app.py with --debug to see every SQL statement the ORM sends"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_a_bullet_naming_a_deleted_file_is_not_injected_and_is_marked_stale(
    tmp_path: Path, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    repo = tmp_path / "shop"
    (repo / "scripts").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "scripts" / "deploy.sh").write_text("#!/bin/sh\n")
    (repo / "src" / "app.py").write_text("print('hi')\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "first")
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    store = LanceStore(settings.home / "store", MODEL, 384)
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=repo, repositories=GitRepositories())
    for fact in (DEPLOY, DEBUG, "Use pnpm in this repository, never npm"):
        memory.remember(fact)
    text, _ = session_context(memory.deps, budget=800)
    assert DEPLOY in text and DEBUG in text

    git(repo, "rm", "-q", "scripts/deploy.sh")  # staged: gone from the tree already
    text, _ = session_context(memory.deps, budget=800)
    assert DEPLOY not in text
    git(repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "no more deploy script")
    text, _ = session_context(memory.deps, budget=800)
    assert DEPLOY not in text and DEBUG in text
    (stale,) = [b for b in memory.deps.store.all_bullets() if b.content == DEPLOY]
    assert "stale" in stale.tags
    asked, _ = prompt_context(memory.deps, "how do I deploy with deploy.sh --prod", set(), 400, 0.0)
    assert DEPLOY not in asked
    assert DEPLOY not in inject(memory.deps, {"hook_event_name": "UserPromptSubmit", "prompt": "deploy.sh --prod"})

    confirmed = memory.confirm(stale.id)
    assert "memx:confirmed" in confirmed.tags and "stale" not in confirmed.tags
    text, _ = session_context(memory.deps, budget=800)
    assert DEPLOY in text  # a person said it still holds: trusted from now on


LESSON = "Run scripts/lint.sh before every push: CI rejects what it flags #confirmed"


def _repo_with_lint_script(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "lint.sh").write_text("#!/bin/sh\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "first")
    return repo


def _delete_lint_script(repo: Path) -> None:
    git(repo, "rm", "-q", "scripts/lint.sh")
    git(repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "no lint script")


def test_a_lesson_carrying_confirmed_as_a_hashtag_or_a_tag_is_still_held_back_once_its_file_is_gone(
    tmp_path: Path, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    repo = _repo_with_lint_script(tmp_path)
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    store = LanceStore(settings.home / "store", MODEL, 384)
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=repo, repositories=GitRepositories())
    # the doors a lesson reaches the store by: a hashtag in its text (what the Reflector keeps), tags an MCP
    # client or a model sends with remember, a record imported from a file
    told = memory.remember(LESSON, tags=["confirmed", "＃Confirmed", "STALE", "memx:confirmed", "lint"]).bullet
    record = {"content": "Run scripts/lint.sh --fix to apply what it can fix", "tags": ["confirmed"]}
    memory.import_records([json.dumps(record)])
    stored = memory.deps.store.all_bullets()
    reserved = {"confirmed", "stale", "＃Confirmed", "memx:confirmed"}
    assert len(stored) == 2 and all(not set(b.tags) & reserved for b in stored)
    assert "lint" in told.tags
    text, _ = session_context(memory.deps, budget=800)
    assert LESSON in text

    _delete_lint_script(repo)
    text, _ = session_context(memory.deps, budget=800)
    assert "scripts/lint.sh" not in text  # both held back as stale: no text switched the check off
    assert all("stale" in b.tags for b in memory.deps.store.all_bullets())
    memory.edit(told.id, tags=["memx:confirmed", "confirmed", "lint"])  # an edit's tags cannot confirm either
    assert "scripts/lint.sh" not in session_context(memory.deps, budget=800)[0]
    assert "memx:confirmed" in memory.confirm(told.id).tags  # the person's confirm action is what confirms
    assert LESSON in session_context(memory.deps, budget=800)[0]


def test_a_confirmed_tag_an_older_store_took_from_a_lesson_s_hashtag_is_not_trusted(
    tmp_path: Path, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    repo = _repo_with_lint_script(tmp_path)
    settings = Settings(home=tmp_path / "home", llm_backend="none")
    store = LanceStore(settings.home / "store", MODEL, 384)
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=repo, repositories=GitRepositories())
    learned = memory.remember(LESSON).bullet
    # as the code before issue 31 stored it: the hashtag became the tag `confirmed`
    store.upsert([learned.with_changes(tags=(*learned.tags, "confirmed"))])
    assert "confirmed" in memory.deps.store.get([learned.id])[0].tags
    _delete_lint_script(repo)
    assert LESSON not in session_context(memory.deps, budget=800)[0]


def test_a_lesson_merged_into_a_confirmed_bullet_does_not_carry_the_confirmation_to_new_words(
    tmp_path: Path, embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    settings = Settings(home=tmp_path / "home", llm_backend="none", merge_strategy="merge_content")
    store = LanceStore(settings.home / "store", MODEL, 384)
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=tmp_path, repositories=GitRepositories())
    first = memory.remember(DEPLOY).bullet
    assert "memx:confirmed" in memory.confirm(first.id).tags
    again = memory.remember(DEPLOY + " The script also deletes scripts/old_release.sh when it is done.")
    assert again.action == "merged" and again.bullet.id == first.id and again.bullet.content != DEPLOY
    assert "memx:confirmed" not in store.get([first.id])[0].tags
