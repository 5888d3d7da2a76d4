from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memx_mcp.adapters.git import detect_scope
from memx_mcp.domain.errors import InvalidScopeError
from memx_mcp.domain.scopes import Scope, parse_scope, safe_name


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
    """A repository with one commit; its message is its path, so two never share a first commit."""
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
        str(path),
    )
    return path


def root_commit(repo: Path) -> str:
    done = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo, capture_output=True, text=True)
    return done.stdout.split()[-1][:12]


def test_a_git_repository_gives_project_and_branch_workspace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop-api", branch="feat/login")
    assert detect_scope(repo) == Scope(f"shop-api@commit-{root_commit(repo)}", "feat-login")


def test_the_origin_remote_names_the_project_with_its_host_and_owner(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    git(repo, "remote", "add", "origin", "git@example.com:team/payments.git")
    assert detect_scope(repo).project == "payments@example.com/team"
    assert detect_scope(repo).short == "payments"


def test_a_subfolder_belongs_to_its_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "tool")
    (repo / "src" / "deep").mkdir(parents=True)
    assert (
        detect_scope(repo / "src" / "deep") == detect_scope(repo) == Scope(f"tool@commit-{root_commit(repo)}", "main")
    )


def test_a_linked_worktree_is_a_workspace_of_the_main_project(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    git(repo, "worktree", "add", "-q", "-b", "hotfix", str(tmp_path / "app-hotfix"))
    assert detect_scope(tmp_path / "app-hotfix") == Scope(f"app@commit-{root_commit(repo)}", "hotfix")


def test_two_repositories_of_one_name_with_different_remotes_are_two_projects(tmp_path: Path) -> None:
    acme, evil = make_repo(tmp_path / "acme" / "api"), make_repo(tmp_path / "evil" / "api")
    git(acme, "remote", "add", "origin", "https://github.com/acme/api.git")
    git(evil, "remote", "add", "origin", "https://github.com/evil/api.git")
    assert detect_scope(acme).project == "api@github.com/acme"
    assert detect_scope(evil).project == "api@github.com/evil"
    assert detect_scope(acme).project_scope() not in (detect_scope(evil).project_scope(), Scope("api"))


def test_the_ssh_and_https_forms_of_one_remote_are_one_project_and_credentials_never_enter_it(tmp_path: Path) -> None:
    forms = [
        "git@github.com:acme/api.git",
        "ssh://git@github.com:22/acme/api.git",
        "https://x-access-token:ghp_0123456789abcdefghijklmnopqrstuvwxyz@GitHub.com/Acme/API.git/",
        "https://alice:hunter2@github.com/acme/api",
    ]
    found = set()
    for k, url in enumerate(forms):
        repo = make_repo(tmp_path / f"clone{k}" / "api")
        git(repo, "remote", "add", "origin", url)
        scope = detect_scope(repo)
        assert "ghp_" not in str(scope) and "hunter2" not in str(scope) and "alice" not in str(scope)
        found.add(scope.project)
    assert found == {"api@github.com/acme"}


def test_a_repository_without_a_remote_is_named_by_its_first_commit_and_two_such_differ(tmp_path: Path) -> None:
    one, two = make_repo(tmp_path / "a" / "notes"), make_repo(tmp_path / "b" / "notes")
    assert detect_scope(one).project == f"notes@commit-{root_commit(one)}"
    assert detect_scope(one).project != detect_scope(two).project
    git(one, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "more")
    assert detect_scope(one).project == f"notes@commit-{root_commit(one)}"  # stable as history grows


def test_a_remote_that_is_a_local_folder_counts_as_none_so_a_clone_is_its_origin_s_project(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin" / "tool")
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "clone")], check=True, capture_output=True)
    assert detect_scope(tmp_path / "clone").project == detect_scope(origin).project


def test_a_repository_without_a_commit_is_named_by_its_folder(tmp_path: Path) -> None:
    (tmp_path / "a" / "new").mkdir(parents=True)
    (tmp_path / "b" / "new").mkdir(parents=True)
    for folder in (tmp_path / "a" / "new", tmp_path / "b" / "new"):
        git(folder, "init", "-q")
    first, second = detect_scope(tmp_path / "a" / "new"), detect_scope(tmp_path / "b" / "new")
    assert first.project is not None and first.project.startswith("new@path-")
    assert first != second and detect_scope(tmp_path / "a" / "new") == first


def test_a_short_project_name_means_the_current_project_or_the_one_stored_project_of_that_name() -> None:
    here = Scope("api@github.com/acme", "main")
    assert parse_scope("project:api", here) == Scope("api@github.com/acme")
    assert parse_scope("project:api/workspace:x", here) == Scope("api@github.com/acme", "x")
    assert parse_scope("project:api", None, ["project:api@github.com/acme/workspace:m"]) == Scope("api@github.com/acme")
    assert parse_scope("project:web", here) == Scope("web")  # nothing of that name: the name as typed
    both = ["project:api@github.com/acme", "project:api@github.com/evil"]
    with pytest.raises(InvalidScopeError, match="several projects"):
        parse_scope("project:api", None, both)
    assert parse_scope("project:api", here, both) == Scope("api@github.com/acme")
    assert parse_scope("project:api", here, ["project:api"]) == Scope("api")  # a stored name means itself


def test_identity_forms_round_trip_and_a_slash_without_a_place_is_still_refused() -> None:
    for text in ("project:api@github.com/acme", "project:api@gitlab.com/g/sub/workspace:feat-x"):
        assert str(parse_scope(text)) == text
    for bad in ("project:api/main", "project:api@github.com/../x", "project:api@github.com/acme/branch:y"):
        with pytest.raises(InvalidScopeError):
            parse_scope(bad)


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


def test_a_folder_name_with_an_at_sign_still_gives_a_project_whose_short_name_is_its_name(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "me@work")
    scope = detect_scope(repo)
    assert scope.short == "me-work" and scope.project == f"me-work@commit-{root_commit(repo)}"
