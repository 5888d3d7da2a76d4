"""The user's path in Gemini CLI's and Codex CLI's own programs: `memx install gemini` then `gemini mcp
list` shows memx connected; `memx install codex` then `codex mcp list` shows memx enabled, its `notify`
beside it. Needs the two CLIs from npm (`npm i @google/gemini-cli @openai/codex`, about 500 MB, so `.ci/run`
does not install them; `MEMX_TEST_GEMINI` and `MEMX_TEST_CODEX` name the binaries); skipped without them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import env_for

GEMINI = os.environ.get("MEMX_TEST_GEMINI") or shutil.which("gemini")
CODEX = os.environ.get("MEMX_TEST_CODEX") or shutil.which("codex")


def _user(tmp_path: Path, cli: str) -> tuple[Path, dict[str, str]]:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    env = {k: v for k, v in env_for(tmp_path / "data").items() if k not in ("VIRTUAL_ENV", "CODEX_HOME")}
    path = os.pathsep.join([str(Path(sys.executable).parent), str(Path(cli).parent), "/usr/bin", "/bin"])
    return proj, {**env, "HOME": str(home), "PATH": path}


def _run(argv: list[str], proj: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=proj, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.skipif(not GEMINI, reason="Gemini CLI is not installed (npm i @google/gemini-cli)")
def test_gemini_cli_connects_to_memx_after_memx_install_gemini(tmp_path: Path) -> None:
    proj, env = _user(tmp_path, str(GEMINI))
    memx = str(Path(sys.executable).parent / "memx")
    _run([memx, "install", "gemini"], proj, env)
    # Gemini starts no server in a folder the user has not trusted: trust it as its own dialog would
    trusted = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(proj): "TRUST_FOLDER"}))
    listed = _run([str(GEMINI), "mcp", "list"], proj, env)
    assert "memx" in listed and "Connected" in listed, listed


@pytest.mark.skipif(not CODEX, reason="Codex CLI is not installed (npm i @openai/codex)")
def test_codex_cli_reads_memx_and_its_notify_after_memx_install_codex(tmp_path: Path) -> None:
    proj, env = _user(tmp_path, str(CODEX))
    memx = str(Path(sys.executable).parent / "memx")
    _run([memx, "install", "codex"], proj, env)
    listed = _run([str(CODEX), "mcp", "list"], proj, env)
    row = next(line for line in listed.splitlines() if line.startswith("memx"))
    assert "memx-mcp" in row and "enabled" in row, listed
