from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memx_mcp.domain.errors import InvalidScopeError
from memx_mcp.domain.scopes import Scope, detect_scope, parse_scope, safe_name


def test_long_forms_round_trip() -> None:
    for text in ("global", "project:api", "project:api/workspace:feat-auth"):
        assert str(parse_scope(text)) == text


def test_short_workspace_form_uses_the_current_project() -> None:
    assert parse_scope("workspace:feat-auth", Scope("api", "main")) == Scope("api", "feat-auth")


def test_short_workspace_form_without_a_project_is_refused() -> None:
    with pytest.raises(InvalidScopeError):
        parse_scope("workspace:x", Scope())


@pytest.mark.parametrize("bad", ["proj:x", "project:", "project:a b", "project:x/branch:y", "project:x/workspace:"])
def test_malformed_scopes_are_refused_with_a_message(bad: str) -> None:
    with pytest.raises(InvalidScopeError, match="scope"):
        parse_scope(bad)


def test_upper_scopes_are_visible_from_lower_ones_never_the_reverse() -> None:
    ws = Scope("api", "feat")
    assert ws.visible() == ("project:api/workspace:feat", "project:api", "global")
    assert Scope("api").visible() == ("project:api", "global")
    assert Scope().visible() == ("global",)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    git(
        path,
        "-c",
        "user.email=t@example.invalid",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    return path


def test_a_git_repository_gives_project_and_branch_workspace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop-api", branch="feat/login")
    assert detect_scope(repo) == Scope("shop-api", "feat-login")


def test_the_origin_remote_names_the_project(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    git(repo, "remote", "add", "origin", "git@example.com:team/payments.git")
    assert detect_scope(repo).project == "payments"


def test_a_subfolder_belongs_to_its_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "tool")
    (repo / "src" / "deep").mkdir(parents=True)
    assert detect_scope(repo / "src" / "deep") == Scope("tool", "main")


def test_a_linked_worktree_is_a_workspace_of_the_main_project(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    git(repo, "worktree", "add", "-q", "-b", "hotfix", str(tmp_path / "app-hotfix"))
    assert detect_scope(tmp_path / "app-hotfix") == Scope("app", "hotfix")


def test_outside_a_repository_the_scope_is_global(tmp_path: Path) -> None:
    assert detect_scope(tmp_path) == Scope()


@pytest.mark.parametrize(
    "bad", ["project:a\n/workspace:b", "project:..", "project:a..b", "project:.", "project:x/workspace:.."]
)
def test_names_with_a_newline_or_dot_dot_are_refused(bad: str) -> None:
    with pytest.raises(InvalidScopeError, match="invalid scope name"):
        parse_scope(bad)


def test_full_width_letters_name_the_same_scope_as_their_ascii_letters() -> None:
    assert parse_scope("project:\uff41\uff50\uff49") == parse_scope("project:api") == Scope("api")
    with pytest.raises(InvalidScopeError):
        Scope("\uff41\uff50\uff49")
    assert safe_name("\uff46\uff4f\uff4f..bar") == "foo.bar" and safe_name("..") == "unnamed"
