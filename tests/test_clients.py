"""`memx install | uninstall` for Claude Desktop, Claude Code and Cursor, on each platform's layout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.clients import Places, configure, configured, desktop_config, with_hooks
from memx_mcp.errors import InvalidInputError

from .helpers import env_for, script


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
    assert "mcpServers" not in read(p.home / ".claude.json")


def test_claude_code_context_hooks_can_be_switched_off_and_on_again(tmp_path: Path) -> None:
    p = places(tmp_path)
    configure("claude-code", "project", p, session_start=False, prompt=False)
    hooks = read(p.project / ".claude" / "settings.json")["hooks"]
    assert set(hooks) == {"SessionEnd", "PreCompact"}
    assert "memx" in read(p.project / ".mcp.json")["mcpServers"]
    configure("claude-code", "project", p, reflect=False)
    assert set(read(p.project / ".claude" / "settings.json")["hooks"]) == {"SessionStart", "UserPromptSubmit"}


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
