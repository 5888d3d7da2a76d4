"""`memx install | uninstall` of the end-of-session hooks of Cursor (hooks.json), Gemini CLI (settings.json
hooks) and Codex CLI (the notify program in config.toml), beside the server entries: the user's other
entries kept, re-install idempotent, uninstall restoring the file; the real `memx` script on a temporary
HOME, and each platform's layout in process; `memx doctor` sees and runs them."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.cli.client_check import probe_hook
from memx_mcp.cli.clients import FAIL_OPEN, Launcher, Places, configure, configured_entries
from memx_mcp.domain.errors import InvalidInputError

from ..helpers import env_for, script

INSTALLED = Launcher("installed", ("/opt/venv/bin/memx-mcp",), ("/opt/venv/bin/memx",))


def memx(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    env = {
        **env_for(tmp_path / "data"),
        "HOME": str(home),
        "USERPROFILE": str(home),
        "CODEX_HOME": str(home / ".codex"),
    }
    return subprocess.run(
        [*script("memx"), *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False
    )


def read(path: Path) -> Any:
    return json.loads(path.read_text())


CURSOR_HOOKS = {
    "version": 1,
    "hooks": {"stop": [{"command": "./hooks/audit.sh"}], "afterFileEdit": [{"command": "fmt"}]},
}
CURSOR_MCP = {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}}}


def test_cursor_install_adds_stop_and_session_end_beside_the_users_hooks_and_uninstall_restores(tmp_path: Path) -> None:
    folder = tmp_path / "home" / ".cursor"
    folder.mkdir(parents=True)
    (folder / "hooks.json").write_text(json.dumps(CURSOR_HOOKS))
    (folder / "mcp.json").write_text(json.dumps(CURSOR_MCP))
    assert memx(tmp_path, "install", "cursor").returncode == 0
    hooks = read(folder / "hooks.json")
    assert hooks["version"] == 1 and hooks["hooks"]["afterFileEdit"] == [{"command": "fmt"}]
    stop, end = hooks["hooks"]["stop"], hooks["hooks"]["sessionEnd"]
    assert stop[0] == {"command": "./hooks/audit.sh"} and len(stop) == 2 and len(end) == 1
    command = stop[1]["command"]
    assert command == end[0]["command"] and command.endswith(" hook cursor" + FAIL_OPEN)
    assert "docs" in read(folder / "mcp.json")["mcpServers"] and "memx" in read(folder / "mcp.json")["mcpServers"]
    again = memx(tmp_path, "install", "cursor")
    assert again.stdout.count("already up to date") == 2, again.stdout
    assert memx(tmp_path, "uninstall", "cursor").returncode == 0
    assert read(folder / "hooks.json") == CURSOR_HOOKS and read(folder / "mcp.json") == CURSOR_MCP


def test_cursor_without_reflection_gets_no_hooks_file_and_a_reinstall_with_it_adds_them(tmp_path: Path) -> None:
    only_end = ("--no-session-start", "--no-prompt", "--no-tool-hooks")
    assert memx(tmp_path, "install", "cursor", "--no-reflect", *only_end).returncode == 0
    folder = tmp_path / "home" / ".cursor"
    assert not (folder / "hooks.json").exists() and "memx" in read(folder / "mcp.json")["mcpServers"]
    assert memx(tmp_path, "install", "cursor", *only_end).returncode == 0
    assert set(read(folder / "hooks.json")["hooks"]) == {"stop", "sessionEnd"}
    assert memx(tmp_path, "install", "cursor", "--no-reflect", *only_end).returncode == 0
    assert not (folder / "hooks.json").exists()  # created by install, gone again
    assert memx(tmp_path, "uninstall", "cursor").returncode == 0
    assert not (folder / "mcp.json").exists()


GEMINI = {
    "theme": "GitHub",
    "mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}},
    "hooks": {
        "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
    },
}


def test_gemini_install_writes_the_server_and_its_session_end_hooks_in_one_file_and_uninstall_restores(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home" / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(GEMINI))
    done = memx(tmp_path, "install", "gemini")
    assert done.returncode == 0 and len(list(path.parent.glob("*.memx-backup-*"))) == 1  # one write, one backup
    data = read(path)
    assert data["theme"] == "GitHub" and data["hooks"]["BeforeTool"][0] == GEMINI["hooks"]["BeforeTool"][0]
    assert set(data["mcpServers"]) == {"docs", "memx"}
    for event in ("SessionEnd", "PreCompress"):
        (group,) = data["hooks"][event]
        (hook,) = group["hooks"]
        assert hook["type"] == "command" and hook["name"] == "memx" and hook["timeout"] == 60_000  # milliseconds
        assert hook["command"].endswith(" hook gemini" + FAIL_OPEN)
    assert "already up to date" in memx(tmp_path, "install", "gemini").stdout
    assert memx(tmp_path, "install", "gemini", "--no-reflect").returncode == 0
    assert "SessionEnd" not in read(path)["hooks"] and "memx" in read(path)["mcpServers"]
    assert memx(tmp_path, "uninstall", "gemini").returncode == 0
    assert read(path) == GEMINI


CODEX = """# my codex settings
model = "gpt-5.1-codex"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
"""


def test_codex_install_adds_the_notify_program_and_uninstall_restores_the_text(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CODEX)
    assert memx(tmp_path, "install", "codex").returncode == 0
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["notify"][-2:] == ["hook", "codex"] and data["notify"][0] == data["mcp_servers"]["memx"]["command"][:-4]
    assert data["model"] == "gpt-5.1-codex" and data["mcp_servers"]["docs"]["command"] == "npx"
    assert text.index("notify = ") < text.index("[mcp_servers.docs]")  # a root key, before every table
    assert "already up to date" in memx(tmp_path, "install", "codex").stdout
    assert memx(tmp_path, "uninstall", "codex").returncode == 0
    assert path.read_text() == CODEX


def test_codex_install_refuses_to_replace_the_users_notify_and_installs_the_server_alone_without_reflection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    mine = 'notify = ["python3", "/home/me/notify.py"]\n' + CODEX
    path.write_text(mine)
    refused = memx(tmp_path, "install", "codex")
    assert refused.returncode == 1 and "already sets notify" in refused.stderr and "--no-reflect" in refused.stderr
    assert path.read_text() == mine and not list(path.parent.glob("*.memx-backup-*"))
    assert memx(tmp_path, "install", "codex", "--no-reflect").returncode == 0
    data = tomllib.loads(path.read_text())
    assert data["notify"] == ["python3", "/home/me/notify.py"] and "memx" in data["mcp_servers"]
    assert memx(tmp_path, "uninstall", "codex").returncode == 0
    assert path.read_text() == mine


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
@pytest.mark.parametrize("scope", ["user", "project"])
def test_each_platform_and_scope_keeps_the_hooks_where_the_client_reads_them(
    tmp_path: Path, platform: str, scope: str
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "proj").mkdir()
    p = Places(tmp_path / "home", tmp_path / "proj", platform, {"CODEX_HOME": str(tmp_path / "codex-home")})
    base = p.home if scope == "user" else p.project
    launch = Launcher("installed", ("memx-mcp",), ("memx",), on_path=True)
    for client in ("cursor", "gemini", "codex"):
        configure(client, scope, p, launch=launch, session_start=False, prompt=False, tool_hooks=False)
    codex = (tmp_path / "codex-home" if scope == "user" else p.project / ".codex") / "config.toml"
    assert tomllib.loads(codex.read_text())["notify"] == ["memx", "hook", "codex"]
    hooks = {c.client: c for c in configured_entries(p) if c.what == "hook"}
    assert hooks["cursor"].path == base / ".cursor" / "hooks.json" and hooks["cursor"].events == ("stop", "sessionEnd")
    assert hooks["gemini"].path == base / ".gemini" / "settings.json"
    assert hooks["gemini"].events == ("SessionEnd", "PreCompress")
    assert hooks["codex"].path == codex and hooks["codex"].command == ("memx", "hook", "codex")
    for client in ("cursor", "gemini", "codex"):
        configure(client, scope, p, install=False)
    assert not [c for c in configured_entries(p)] and not list(tmp_path.rglob("hooks.json"))
    assert not codex.exists()


def test_a_memx_notify_the_user_reformatted_over_several_lines_is_not_guessed_at(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    p = Places(tmp_path / "home", tmp_path, "linux", {})
    path = tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    text = 'notify = [\n  "memx",\n  "hook",\n  "codex",\n]\n'
    path.write_text(text)
    with pytest.raises(InvalidInputError, match="not on one line"):
        configure("codex", "user", p, launch=INSTALLED)
    assert path.read_text() == text


def test_doctor_runs_each_installed_end_hook_and_fails_one_that_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMX_HOME", str(tmp_path / "data"))
    (tmp_path / "home").mkdir()
    p = Places(tmp_path / "home", tmp_path, env={"CODEX_HOME": str(tmp_path / "home" / ".codex")})
    memx_cli = tuple(script("memx"))
    launch = Launcher("installed", ("memx-mcp",), memx_cli)
    for client in ("cursor", "gemini", "codex"):
        configure(client, "user", p, launch=launch, session_start=False, prompt=False, tool_hooks=False)
    hooks = [c for c in configured_entries(p) if c.what == "hook"]
    assert sorted(c.client for c in hooks) == ["codex", "cursor", "gemini"]
    for entry in hooks:
        probe = probe_hook(entry, tmp_path)
        assert probe.ok, (entry, probe)
    log = (tmp_path / "data" / "logs" / "hook.log").read_text()
    assert log.count("ignored event") == 5  # once per event hooked, a payload memx ignores: nothing reflected
    gone = Launcher("installed", ("memx-mcp",), (str(tmp_path / "gone" / "memx"),))
    configure("cursor", "user", p, launch=gone, session_start=False, prompt=False, tool_hooks=False)
    configure("codex", "user", p, launch=gone, session_start=False, prompt=False, tool_hooks=False)
    broken = {c.client: probe_hook(c, tmp_path) for c in configured_entries(p) if c.what == "hook"}
    assert not broken["cursor"].ok and "exited 127" in broken["cursor"].detail
    assert not broken["codex"].ok and "cannot run" in broken["codex"].detail
    assert broken["gemini"].ok


def test_a_project_notify_that_would_hide_the_users_own_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "proj").mkdir()
    p = Places(tmp_path / "home", tmp_path / "proj", "linux", {"CODEX_HOME": str(tmp_path / "home" / ".codex")})
    user = tmp_path / "home" / ".codex" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('notify = ["python3", "/home/me/notify.py"]\n')
    launch = Launcher("installed", ("memx-mcp",), ("memx",), on_path=True)
    with pytest.raises(InvalidInputError, match="would replace in this project"):
        configure("codex", "project", p, launch=launch)
    assert not (p.project / ".codex").exists()
    done = configure("codex", "project", p, launch=launch, reflect=False)[0]
    assert "notify" not in tomllib.loads(done.path.read_text())


@pytest.mark.parametrize(
    "text", ['# mine\nmodel = "x"\n[a]\nb = 1\n', 'model = "x"\n\n[a]\nb = 1\n', "[a]\nb = 1\n", ""]
)
def test_uninstall_gives_back_the_codex_text_as_it_was(tmp_path: Path, text: str) -> None:
    (tmp_path / "home").mkdir()
    p = Places(tmp_path / "home", tmp_path, "linux", {})
    path = tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    if text:
        path.write_text(text)
    configure("codex", "user", p, launch=INSTALLED)
    assert tomllib.loads(path.read_text())["notify"] == ["/opt/venv/bin/memx", "hook", "codex"]
    configure("codex", "user", p, install=False)
    assert (path.read_text() if path.exists() else "") == text
