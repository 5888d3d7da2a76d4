"""What git says of a folder (``ports.Repositories``): the repository it is in, and the facts its project's
identity and workspace are decided from (``domain/scopes.py``). Each question is one short ``git`` run
(2 s at most); git missing, failing or slow reads as "no repository" or "not known", never as an error."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..domain.scopes import Checkout, Scope, main_checkout, naming_remote, needs_history, scope_of

TIMEOUT = 2.0  # seconds one git question may take


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


class GitRepositories:
    """Runs ``git`` in the folder asked about."""

    def root(self, folder: Path) -> Path | None:
        top = _git(folder, "rev-parse", "--show-toplevel") if folder.is_dir() else None
        return Path(top) if top else None

    def checkout(self, folder: Path) -> Checkout | None:
        if not folder.is_dir():
            return None
        top = _git(folder, "rev-parse", "--show-toplevel")
        if top is None:
            return None
        common = _git(folder, "rev-parse", "--path-format=absolute", "--git-common-dir") or ""
        remote = naming_remote((_git(folder, "remote") or "").split())
        url = (_git(folder, "remote", "get-url", remote) or "") if remote else ""
        first = place = ""
        if needs_history(url):  # no remote names a place: the first commit does, else the folder
            roots = (_git(folder, "rev-list", "--max-parents=0", "HEAD") or "").split()
            first = roots[-1] if roots else ""  # the oldest, where a merge brought in a second history
            place = "" if first else str(Path(main_checkout(top, common)).resolve())
        branch = _git(folder, "rev-parse", "--abbrev-ref", "HEAD") or ""
        return Checkout(top, common, url, first, branch, place)


def detect_scope(folder: Path) -> Scope:
    """The scope of ``folder`` as memx detects it where it runs (``domain.scopes.scope_of``)."""
    return scope_of(GitRepositories().checkout(folder))
