"""The scope memx detects in each of a set of real git repositories, and how many `git` runs it took: run it
on two trees and diff the output to show that a change kept every project identity (round 6, git moved out
of the domain: docs/notes/r6-scopes.md).

    python benchmarks/scope_probe.py /tmp/probe > new.json
    git archive OLD | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python benchmarks/scope_probe.py /tmp/probe > old.json
    diff old.json new.json

The commits are made with fixed dates and messages, so the same FOLDER gives the same first commits on
every run (a repository without a commit is placed by its folder: use the same FOLDER for both).

The repositories (made afresh in FOLDER): one commit and no remote, no commit, an ssh remote, two remotes
(neither origin, one with a password), a clone of a local repository, a linked worktree on a branch, a
detached worktree, a detached HEAD, a name with '@', a subfolder, a symbolic link to a repository, a plain
folder, a missing one; then any folders named after FOLDER (this machine's own checkouts, say)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

calls: list[object] = []
_run = subprocess.run


def _counting(*args, **kwargs):  # type: ignore[no-untyped-def]
    calls.append(args[0] if args else kwargs.get("args"))
    return _run(*args, **kwargs)


FIXED = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, **FIXED}
    _run(
        ["git", "-c", "user.email=t@e.invalid", "-c", "user.name=t", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )


def repo(path: Path, branch: str = "main", commit: bool = True) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    if commit:
        git(path, "commit", "-q", "--allow-empty", "-m", path.name)  # two repositories, two first commits
    return path


def make(root: Path) -> list[Path]:
    shutil.rmtree(root, ignore_errors=True)
    plain = repo(root / "plain")
    repo(root / "nocommit", commit=False)
    git(repo(root / "remote", "dev"), "remote", "add", "origin", "git@github.com:Acme/API.git")
    two = repo(root / "tworemotes")
    git(two, "remote", "add", "zeta", "https://gitlab.com/g/sub/zz.git")
    git(two, "remote", "add", "alpha", "https://alice:pw@github.com/o/alpha")
    git(root, "clone", "-q", str(plain), "clone-of-local")
    git(plain, "worktree", "add", "-q", str(root / "plain-wt"), "-b", "feat/x")
    git(root / "remote", "worktree", "add", "-q", "--detach", str(root / "remote-detached"))
    git(plain, "checkout", "-q", "--detach")
    repo(root / "me@work")
    (repo(root / "deep") / "a" / "b").mkdir(parents=True)
    (root / "linked-nocommit").symlink_to(root / "nocommit")
    (root / "notrepo").mkdir()
    return [*sorted(root.iterdir()), root / "deep" / "a" / "b", root / "missing"]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    folders = make(root) + [Path(a) for a in sys.argv[2:]]
    subprocess.run = _counting  # type: ignore[assignment]
    try:
        from memx_mcp.adapters.git import detect_scope
    except ImportError:  # a tree from before round 6: git ran in the domain
        from memx_mcp.domain.scopes import detect_scope  # type: ignore[attr-defined,no-redef]
    found = {}
    for folder in folders:
        calls.clear()
        scope = detect_scope(folder)
        found[str(folder)] = {"scope": str(scope), "git_runs": len(calls)}
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
