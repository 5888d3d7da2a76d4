"""The user's path in Claude Code's own CLI: `memx install claude-code`, then `claude mcp list` shows memx
connected, for each way memx can be installed and for both scopes. Needs Claude Code's CLI from npm
(`.ci/run` installs it; `MEMX_TEST_CLAUDE` names the binary); skipped without it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from .helpers import env_for

REPO = Path(__file__).resolve().parents[1]
CLAUDE = os.environ.get("MEMX_TEST_CLAUDE") or shutil.which("claude")
pytestmark = pytest.mark.skipif(
    not CLAUDE, reason="Claude Code's CLI is not installed (npm i @anthropic-ai/claude-code)"
)


def _env(tmp_path: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in env_for(tmp_path / "data").items() if k != "VIRTUAL_ENV"}
    env.pop("MEMX_HOME")  # the default data folder under the fresh HOME, as a new user has
    path = os.pathsep.join([str(bin_dir), str(Path(str(CLAUDE)).parent), "/usr/bin", "/bin"])
    return {**env, "HOME": str(tmp_path / "home"), "USERPROFILE": str(tmp_path / "home"), "PATH": path, **extra}


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    (tmp_path / "home").mkdir()
    return proj


def _install(memx: list[str], proj: Path, env: dict[str, str], scope: str) -> subprocess.CompletedProcess[str]:
    command = [*memx, "install", "claude-code", "--scope", scope]
    return subprocess.run(command, cwd=proj, env=env, capture_output=True, text=True, timeout=300, check=False)


def _install_and_list(memx: list[str], proj: Path, env: dict[str, str], scope: str) -> str:
    done = _install(memx, proj, env, scope)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run(
        [str(CLAUDE), "mcp", "list"], cwd=proj, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    return listed.stdout + listed.stderr


@pytest.fixture(scope="module")
def wheel_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _wheel_venv(tmp_path_factory.mktemp("wheel"))


def _wheel_venv(tmp_path: Path) -> Path:
    """memx installed from this checkout as a wheel would be (`pip install .`), in a virtual environment of its
    own; its dependencies are read from the test's environment instead of being downloaded again."""
    target = tmp_path / "wheel-venv"
    venv.create(target, with_pip=True)
    py = target / ("Scripts" if sys.platform.startswith("win") else "bin") / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [str(py), "-m", "pip", "install", "-q", "--no-deps", str(REPO)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    return py.parent


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_code_connects_to_memx_from_the_editable_install(tmp_path: Path, scope: str) -> None:
    proj, bin_dir = _project(tmp_path), Path(sys.executable).parent
    out = _install_and_list([str(bin_dir / "memx")], proj, _env(tmp_path, bin_dir), scope)
    assert "memx" in out and "✔ Connected" in out, out


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_code_connects_to_memx_installed_as_a_wheel(tmp_path: Path, scope: str, wheel_bin: Path) -> None:
    proj, bin_dir = _project(tmp_path), wheel_bin
    out = _install_and_list([str(bin_dir / "memx")], proj, _env(tmp_path, bin_dir), scope)
    assert "memx" in out and "✔ Connected" in out, out


UV = shutil.which("uvx")


@pytest.fixture(scope="module")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("uv-cache")


def _uvx_env(tmp_path: Path, cache: Path) -> dict[str, str]:
    env = _env(tmp_path, Path(str(UV)).parent, UV_CACHE_DIR=str(cache), UV_PYTHON_DOWNLOADS="never")
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.skipif(not UV, reason="uv is not installed")
def test_claude_code_connects_to_memx_run_through_uvx_from_a_checkout(tmp_path: Path, uv_cache: Path) -> None:
    proj = _project(tmp_path)
    out = _install_and_list([str(UV), "--from", str(REPO), "memx"], proj, _uvx_env(tmp_path, uv_cache), "user")
    assert "uvx --from" in out and "✔ Connected" in out, out


@pytest.mark.skipif(not UV, reason="uv is not installed")
def test_a_project_file_names_the_checkout_relatively_or_memx_refuses_with_the_reason(
    tmp_path: Path, uv_cache: Path
) -> None:
    proj, env = _project(tmp_path), _uvx_env(tmp_path, uv_cache)
    refused = _install([str(UV), "--from", str(REPO), "memx"], proj, env, "project")
    assert refused.returncode == 1 and "outside this project" in refused.stderr
    assert not (proj / ".mcp.json").exists()
    inside = tmp_path / "memx-checkout"  # the project is a checkout of memx itself: `uvx --from .` travels with it
    subprocess.run(["git", "clone", "-q", str(REPO), str(inside)], check=True, timeout=120)
    out = _install_and_list([str(UV), "--from", ".", "memx"], inside, env, "project")
    assert "uvx --from . memx-mcp" in out and "✔ Connected" in out, out
