"""`memx doctor` starts what the clients are configured to start, as they would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from ..helpers import env_for, script


def _memx(tmp_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**env_for(tmp_path / "data"), "HOME": str(home), "USERPROFILE": str(home)}
    return subprocess.run(
        [*script("memx"), *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False
    )


def _checks(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_doctor_fails_a_client_entry_whose_command_cannot_start_and_says_how_to_fix_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    broken = {"mcpServers": {"memx": {"command": str(tmp_path / "gone" / "memx-mcp"), "args": []}}}
    (home / ".cursor" / "mcp.json").write_text(json.dumps(broken))
    (home / ".claude").mkdir()
    hook = {"type": "command", "command": f"{tmp_path / 'gone' / 'memx'} hook claude-code || exit 0"}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [hook]}]}}))
    done = _memx(tmp_path, home, "doctor", "--json")
    assert done.returncode == 1
    checks = _checks(done)
    server, hooks = checks["Cursor server"], checks["Claude Code hook"]
    assert server["status"] == "FAIL" and "does not start" in server["detail"]
    assert "memx install cursor" in server["fix"]
    assert hooks["status"] == "FAIL" and "exited 127" in hooks["detail"]


def test_doctor_passes_what_memx_install_wrote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert _memx(tmp_path, home, "install", "claude-code").returncode == 0
    done = _memx(tmp_path, home, "doctor", "--json")
    checks = _checks(done)
    assert checks["Claude Code server"]["status"] == "OK", checks["Claude Code server"]
    assert "tools" in checks["Claude Code server"]["detail"]
    assert checks["Claude Code hook"]["status"] == "OK", checks["Claude Code hook"]
    assert done.returncode == 0, done.stdout


def test_doctor_names_the_model_auto_would_pick_and_why(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text("{}")  # logged in to Claude Code
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "claude").chmod(0o755)
    base = {**env_for(tmp_path / "data"), "HOME": str(home), "USERPROFILE": str(home)}
    base.pop("ANTHROPIC_API_KEY", None)

    def reflector(**env: str) -> str:
        done = subprocess.run([*script("memx"), "doctor", "--json"], capture_output=True, text=True, cwd=tmp_path,
                              env={**base, **env}, timeout=300, check=False)  # fmt: skip
        return str(_checks(done)["reflector"]["detail"])

    found = reflector(MEMX_LLM_BACKEND="auto", MEMX_CLI_PATHS=f"claude={bin_dir / 'claude'}")
    assert "backend claude-cli," in found and "reads each finished session whole" in found and "logged in" in found
    assert "model claude-haiku-4-5 at Claude Code's own account" in found
    keyed = reflector(MEMX_LLM_BACKEND="auto", ANTHROPIC_API_KEY="sk-ant-test")
    assert "backend anthropic" in keyed and "ANTHROPIC_API_KEY is set" in keyed
    assert "model claude-haiku-4-5 at https://api.anthropic.com" in keyed
    routed = reflector(MEMX_LLM_BACKEND="auto", ANTHROPIC_API_KEY="sk-ant-test", MEMX_LLM_MODEL="claude-sonnet-4-5",
                       ANTHROPIC_BASE_URL="http://127.0.0.1:9/gateway")  # fmt: skip
    assert "model claude-sonnet-4-5 at http://127.0.0.1:9/gateway (ANTHROPIC_BASE_URL)" in routed
    local = reflector(MEMX_LLM_BACKEND="openai", MEMX_OPENAI_BASE_URL="http://127.0.0.1:11434/v1",
                      MEMX_OPENAI_MODEL="qwen3:4b")  # fmt: skip
    assert "backend openai, model qwen3:4b at http://127.0.0.1:11434/v1" in local
    none = reflector(MEMX_LLM_BACKEND="auto", PATH="/usr/bin:/bin")
    assert "rules only, the quiet floor" in none and "no ANTHROPIC_API_KEY" in none
