"""`memx install | uninstall` for Claude Desktop, Claude Code and Cursor, on each platform's layout."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.cli.clients import (
    Launcher,
    Places,
    configure,
    configured,
    configured_entries,
    desktop_config,
    entry_for,
    ephemeral,
    launcher,
    with_hooks,
)
from memx_mcp.domain.errors import InvalidInputError

from ..helpers import env_for, script


def places(tmp_path: Path, platform: str = "linux", **env: str) -> Places:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Places(tmp_path / "home", tmp_path / "proj", platform, env)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("darwin", {}, "home/Library/Application Support/Claude/claude_desktop_config.json"),
        ("win32", {"APPDATA": "{tmp}/home/AppData/Roaming"}, "home/AppData/Roaming/Claude/claude_desktop_config.json"),
        ("win32", {}, "home/AppData/Roaming/Claude/claude_desktop_config.json"),
        ("linux", {}, "home/.config/Claude/claude_desktop_config.json"),
        ("linux", {"XDG_CONFIG_HOME": "{tmp}/xdg"}, "xdg/Claude/claude_desktop_config.json"),
    ],
)
def test_claude_desktop_config_is_found_where_each_platform_keeps_it(
    tmp_path: Path, platform: str, env: dict[str, str], expected: str
) -> None:
    p = places(tmp_path, platform, **{k: v.format(tmp=tmp_path) for k, v in env.items()})
    assert desktop_config(p) == tmp_path / expected


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_claude_desktop_install_keeps_other_servers_backs_up_and_is_idempotent(tmp_path: Path, platform: str) -> None:
    p = places(tmp_path, platform)
    path = desktop_config(p)
    path.parent.mkdir(parents=True)
    original = {"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}
    path.write_text(json.dumps(original))
    (preview,) = configure("claude-desktop", "user", p, dry_run=True)
    assert preview.changed and '"memx"' in preview.diff and read(path) == original
    (done,) = configure("claude-desktop", "user", p)
    data = read(path)
    assert data["theme"] == "dark" and data["mcpServers"]["other"] == {"command": "other-server"}
    assert data["mcpServers"]["memx"]["command"]
    assert done.backup is not None and read(done.backup) == original
    assert not configure("claude-desktop", "user", p)[0].changed
    configure("claude-desktop", "user", p, install=False)
    assert read(path) == original


def test_claude_code_user_scope_writes_the_server_and_all_four_hooks(tmp_path: Path) -> None:
    p = places(tmp_path)
    settings = p.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {"model": "opus", "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "say bye"}]}]}}
    settings.write_text(json.dumps(original))
    results = configure("claude-code", "user", p)
    assert [r.path for r in results] == [p.home / ".claude.json", settings]
    assert "memx" in read(p.home / ".claude.json")["mcpServers"]
    hooks = read(settings)["hooks"]
    assert next(h["command"] for g in hooks["SessionEnd"] for h in g["hooks"]) == "say bye"
    for event in ("SessionEnd", "PreCompact", "SessionStart", "UserPromptSubmit"):
        assert "hook claude-code" in json.dumps(hooks[event]), event
    assert not any(r.changed for r in configure("claude-code", "user", p))
    assert set(configured(p)) == {"claude-code"}
    configure("claude-code", "user", p, install=False)
    assert read(settings) == original
    assert not (p.home / ".claude.json").exists()  # install created it: uninstall takes it away again


def test_claude_code_context_hooks_can_be_switched_off_and_on_again(tmp_path: Path) -> None:
    p = places(tmp_path)
    configure("claude-code", "project", p, session_start=False, prompt=False, tool_hooks=False)
    hooks = read(p.project / ".claude" / "settings.json")["hooks"]
    assert set(hooks) == {"SessionEnd", "PreCompact"}
    assert "memx" in read(p.project / ".mcp.json")["mcpServers"]
    configure("claude-code", "project", p, reflect=False, tool_hooks=False)
    assert set(read(p.project / ".claude" / "settings.json")["hooks"]) == {"SessionStart", "UserPromptSubmit"}
    configure("claude-code", "project", p, reflect=False, session_start=False, prompt=False)
    tools = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}
    assert set(read(p.project / ".claude" / "settings.json")["hooks"]) == tools


def test_cursor_user_and_project_files(tmp_path: Path) -> None:
    p = places(tmp_path)
    configure("cursor", "user", p)
    configure("cursor", "project", p)
    assert "memx" in read(p.home / ".cursor" / "mcp.json")["mcpServers"]
    assert "memx" in read(p.project / ".cursor" / "mcp.json")["mcpServers"]


def test_bad_requests_and_broken_files_change_nothing(tmp_path: Path) -> None:
    p = places(tmp_path)
    with pytest.raises(InvalidInputError, match="no project configuration"):
        configure("claude-desktop", "project", p)
    broken = p.home / ".cursor" / "mcp.json"
    broken.parent.mkdir()
    broken.write_text("{broken")
    with pytest.raises(InvalidInputError, match="not valid JSON"):
        configure("cursor", "user", p)
    assert broken.read_text() == "{broken"
    broken.write_text('{"mcpServers": []}')
    with pytest.raises(InvalidInputError, match="not an object"):
        configure("cursor", "user", p)
    with pytest.raises(InvalidInputError, match="not an object"):
        with_hooks({"hooks": []}, "memx hook claude-code", (), broken)


def test_memx_install_dry_run_shows_the_exact_change_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    done = subprocess.run(
        [*script("memx"), "install", "claude-code", "--dry-run", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env_for(tmp_path / "data"), "HOME": str(home), "USERPROFILE": str(home)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [f["path"] for f in out["files"]] == [str(home / ".claude.json"), str(home / ".claude" / "settings.json")]
    assert all(f["changed"] and f["dry_run"] and f["diff"].count("+") > 3 for f in out["files"])
    assert not list(home.iterdir())
    text = subprocess.run(
        [*script("memx"), "install", "cursor"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env_for(tmp_path / "data"), "HOME": str(home), "USERPROFILE": str(home)},
        timeout=60,
    )
    assert text.returncode == 0 and "memx doctor" in text.stdout
    assert "memx" in read(home / ".cursor" / "mcp.json")["mcpServers"]


# -- the command written, per kind of installation -----------------------------------------------------

INSTALLED = Launcher("installed", ("/opt/venv/bin/memx-mcp",), ("/opt/venv/bin/memx",))


def _venv(tmp_path: Path, where: str) -> Path:
    bin_dir = tmp_path / where / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "memx", "memx-mcp"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir / "python"


def test_an_installed_copy_is_started_by_its_absolute_path(tmp_path: Path) -> None:
    python = _venv(tmp_path, "venv")
    p = places(tmp_path, PATH="/usr/bin")
    launch = launcher(p, str(python))
    assert launch.kind == "installed" and launch.server == (str(python.parent / "memx-mcp"),)
    assert not launch.on_path
    entry = entry_for(launch, p)
    assert entry.hook == f"{python.parent / 'memx'} hook claude-code || exit 0"  # fails open if it cannot start


def test_a_copy_inside_uvs_cache_is_never_written(tmp_path: Path) -> None:
    python = _venv(tmp_path, "cache/uv/archive-v0/abc123")
    custom = _venv(tmp_path, "mycache/envs/x")
    p = places(tmp_path, PATH="/usr/bin", UV_CACHE_DIR=str(tmp_path / "mycache"))
    assert ephemeral(python.parent, p) and ephemeral(custom.parent, p)
    assert launcher(p, str(python)).kind != "installed"
    assert launcher(p, str(custom)).kind != "installed"


def test_a_non_default_data_folder_travels_with_the_entry(tmp_path: Path) -> None:
    p = places(tmp_path)
    configure("claude-code", "user", p, home=tmp_path / "my memx", launch=INSTALLED)
    server = read(p.home / ".claude.json")["mcpServers"]["memx"]
    assert server == {
        "type": "stdio",
        "command": "/opt/venv/bin/memx-mcp",
        "args": [],
        "env": {"MEMX_HOME": str(tmp_path / "my memx")},
    }
    hooks = read(p.home / ".claude" / "settings.json")["hooks"]
    command = hooks["SessionEnd"][0]["hooks"][0]["command"]
    assert command == shlex.join(("/opt/venv/bin/memx", "--home", str(tmp_path / "my memx"), "hook", "claude-code")) + (
        " || exit 0"
    )


def test_project_files_get_no_machine_path_or_a_refusal_that_says_why(tmp_path: Path) -> None:
    p = places(tmp_path)
    with pytest.raises(InvalidInputError, match="not on PATH"):
        configure("claude-code", "project", p, launch=INSTALLED)
    on_path = Launcher("installed", INSTALLED.server, INSTALLED.cli, on_path=True)
    configure("claude-code", "project", p, launch=on_path)
    assert read(p.project / ".mcp.json")["mcpServers"]["memx"]["command"] == "memx-mcp"
    assert "memx hook claude-code || exit 0" in json.dumps(read(p.project / ".claude" / "settings.json"))
    local = p.project / ".claude" / "settings.local.json"  # the user's own approval of the project's server
    assert read(local) == {"enabledMcpjsonServers": ["memx"]}
    configure("claude-code", "project", p, install=False)
    assert not local.exists() and not (p.project / ".mcp.json").exists()
    checkout = Launcher("source", ("uvx", "--from", str(p.project), "memx-mcp"), (), source=p.project)
    configure("cursor", "project", p, launch=checkout)
    assert read(p.project / ".cursor" / "mcp.json")["mcpServers"]["memx"]["args"] == ["--from", ".", "memx-mcp"]
    elsewhere = Launcher("source", ("uvx", "--from", "/src/memx", "memx-mcp"), (), source=Path("/src/memx"))
    with pytest.raises(InvalidInputError, match="outside this project"):
        configure("cursor", "project", p, launch=elsewhere)
    with pytest.raises(InvalidInputError, match="MEMX_HOME"):
        configure("cursor", "project", p, launch=on_path, home=tmp_path / "data")


# -- more clients ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "scope", "platform", "expected", "key"),
    [
        ("vscode", "user", "linux", "home/.config/Code/User/mcp.json", "servers"),
        ("vscode", "user", "darwin", "home/Library/Application Support/Code/User/mcp.json", "servers"),
        ("vscode", "user", "win32", "home/AppData/Roaming/Code/User/mcp.json", "servers"),
        ("vscode", "project", "linux", "proj/.vscode/mcp.json", "servers"),
        ("windsurf", "user", "linux", "home/.codeium/windsurf/mcp_config.json", "mcpServers"),
        ("windsurf", "user", "win32", "home/.codeium/windsurf/mcp_config.json", "mcpServers"),
        ("zed", "user", "linux", "home/.config/zed/settings.json", "context_servers"),
        ("zed", "user", "darwin", "home/.config/zed/settings.json", "context_servers"),
        ("zed", "user", "win32", "home/AppData/Roaming/Zed/settings.json", "context_servers"),
        ("zed", "project", "linux", "proj/.zed/settings.json", "context_servers"),
        ("gemini", "user", "linux", "home/.gemini/settings.json", "mcpServers"),
        ("gemini", "project", "win32", "proj/.gemini/settings.json", "mcpServers"),
    ],
)
def test_json_clients_install_reinstall_and_uninstall_where_each_platform_keeps_them(
    tmp_path: Path, client: str, scope: str, platform: str, expected: str, key: str
) -> None:
    p = places(tmp_path, platform)
    launch = Launcher("installed", INSTALLED.server, INSTALLED.cli, on_path=True)
    path = tmp_path / expected
    path.parent.mkdir(parents=True, exist_ok=True)
    original = {key: {"other": {"command": "other"}}, "theme": "One Dark"}
    path.write_text(json.dumps(original))
    done = configure(client, scope, p, launch=launch)[0]
    assert done.path == path and done.backup is not None
    entry = read(path)[key]["memx"]
    assert entry["command"] == ("memx-mcp" if scope == "project" else "/opt/venv/bin/memx-mcp")
    assert entry.get("type") == ("stdio" if client == "vscode" else None)
    assert read(path)[key]["other"] == {"command": "other"}
    assert not configure(client, scope, p, launch=launch)[0].changed
    assert client in configured(p)
    configure(client, scope, p, install=False)
    assert read(path) == original


def test_a_settings_file_with_comments_is_left_alone_with_a_reason(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = p.home / ".config" / "zed" / "settings.json"
    path.parent.mkdir(parents=True)
    text = '// Zed settings\n{\n  "theme": "One Dark", // mine\n  "url": "http://x//y",\n}\n'
    path.write_text(text)
    with pytest.raises(InvalidInputError, match="has comments"):
        configure("zed", "user", p, launch=INSTALLED)
    assert path.read_text() == text


CODEX = """# my codex settings
model = "o4-mini"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "o4-mini"
"""


def test_codex_toml_gets_one_table_and_keeps_every_other_line(tmp_path: Path) -> None:
    import tomllib

    p = places(tmp_path, CODEX_HOME=str(tmp_path / "codex"))
    path = tmp_path / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX)
    configure("codex", "user", p, launch=INSTALLED, home=tmp_path / "data", reflect=False)  # notify: elsewhere
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["memx"] == {
        "command": "/opt/venv/bin/memx-mcp",
        "args": [],
        "env": {"MEMX_HOME": str(tmp_path / "data")},
    }
    assert data["mcp_servers"]["docs"]["command"] == "npx" and data["profiles"]["fast"]["model"] == "o4-mini"
    assert path.read_text().startswith(CODEX.rstrip())  # the user's lines, as written, comments included
    assert not configure("codex", "user", p, launch=INSTALLED, home=tmp_path / "data", reflect=False)[0].changed
    servers = [c.command for c in configured_entries(p) if c.client == "codex" and c.what == "server"]
    assert servers == [("/opt/venv/bin/memx-mcp",)]
    configure("codex", "user", p, install=False)
    assert path.read_text() == CODEX
    project = configure("codex", "project", p, launch=Launcher("index", ("uvx", "memx-mcp"), ()), reflect=False)[0]
    assert project.path == p.project / ".codex" / "config.toml"
    assert tomllib.loads(project.path.read_text())["mcp_servers"]["memx"]["args"] == ["memx-mcp"]
    configure("codex", "project", p, install=False)
    assert not project.path.exists()  # created by install, gone with uninstall


def test_broken_codex_toml_changes_nothing(tmp_path: Path) -> None:
    p = places(tmp_path)
    path = p.home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    with pytest.raises(InvalidInputError, match="not valid TOML"):
        configure("codex", "user", p, launch=INSTALLED)
    assert path.read_text() == "model = \n"
