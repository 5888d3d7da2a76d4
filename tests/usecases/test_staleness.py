"""Before injection (issue 27): a bullet naming a file deleted from a real git repository is not injected
and is marked stale; a person's confirm brings it back for good."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
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
    memory = Memory(settings, store, ReadyEmbedder(embedder), clock=clock, cwd=repo)
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
    assert "confirmed" in confirmed.tags and "stale" not in confirmed.tags
    text, _ = session_context(memory.deps, budget=800)
    assert DEPLOY in text  # a person said it still holds: trusted from now on
