"""A new user inside a git repository on a branch: what they remember arrives, in the hook and in recall."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memx_mcp.adapters.git import detect_scope
from memx_mcp.domain.scopes import Scope

from ..helpers import env_for, script

FACTS = [
    "Run the suite with pytest -n auto (pytest-xdist) to make the tests faster",
    "The staging deploy needs AWS_PROFILE=staging exported before make deploy",
    "Format with ruff format, never black: CI checks ruff format --check",
]


def _git_repo_on_a_branch(folder: Path) -> Path:
    repo = folder / "shop"
    repo.mkdir()
    for args in (["init", "-q", "-b", "feature-login"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True)
    return repo


def _memx(repo: Path, home: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [*script("memx"), *args],
        cwd=repo,
        env=env_for(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_workspace_owns_its_project_bullets_but_not_global_ones() -> None:
    here = Scope("shop", "feature-login")
    assert here.owns("project:shop") and here.owns("project:shop/workspace:feature-login")
    assert not here.owns("global") and not here.owns("project:other")
    assert here.boost("project:shop/workspace:feature-login", 1.3, 1.15) == 1.3
    assert here.boost("project:shop", 1.3, 1.15) == 1.15
    assert here.boost("global", 1.3, 1.15) == 1.0
    assert Scope().owns("global")  # outside any repository, global bullets are the ones of here
    assert Scope("shop").boost("project:shop", 1.3, 1.15) == 1.3  # on a project scope its bullets are its own


def test_on_a_branch_the_session_start_hook_prints_what_was_remembered_and_recall_boosts_it(tmp_path: Path) -> None:
    repo, home = _git_repo_on_a_branch(tmp_path), tmp_path / "memx"
    for fact in FACTS:
        _memx(repo, home, "remember", fact)
    payload = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(repo), "source": "startup"}
    printed = _memx(repo, home, "hook", "claude-code", stdin=json.dumps(payload))
    shop = f"project:{detect_scope(repo).project}"  # shop@commit-…: a repository without a remote
    assert shop.startswith("project:shop@commit-")
    assert f"{shop}/workspace:feature-login" in printed.splitlines()[0]
    for fact in FACTS:
        assert fact in printed
    found = json.loads(_memx(repo, home, "recall", "make the tests run faster", "--json"))
    assert found["scope"] == f"{shop}/workspace:feature-login"
    top = found["results"][0]
    assert top["scope"] == shop and "pytest-xdist" in top["content"]
    assert top["score"]["scope"] == 1.15
    assert found["scope_why"].startswith(
        f"{shop}/workspace:feature-login: from the git repository at the working directory {repo}"
    )
    told = json.loads(_memx(repo, home, "remember", "Run make seed before the checkout tests", "--json"))
    assert told["bullet"]["scope"] == shop and told["scope_why"].startswith(f"{shop}: new bullets go")


def test_the_readme_example_prompt_gets_its_bullet_and_chatter_gets_nothing(tmp_path: Path) -> None:
    repo, home = _git_repo_on_a_branch(tmp_path), tmp_path / "memx"
    _memx(repo, home, "remember", "Use pytest -n auto (pytest-xdist) to run the suite in parallel")
    base = {"hook_event_name": "UserPromptSubmit", "session_id": "s2", "cwd": str(repo)}
    asked = _memx(
        repo, home, "hook", "claude-code", stdin=json.dumps({**base, "prompt": "how do I make the tests run faster?"})
    )
    assert "pytest-xdist" in asked
    for chatter in ("thanks, looks good", "write a haiku about autumn"):
        assert _memx(repo, home, "hook", "claude-code", stdin=json.dumps({**base, "prompt": chatter})) == ""
