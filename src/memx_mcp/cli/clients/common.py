"""What every part of ``memx install`` shares: the clients, the names memx writes, and where a machine
keeps things (``Places``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "zed", "codex", "gemini")
TITLES = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "windsurf": "Windsurf",
    "zed": "Zed",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
}
SERVER_NAME = "memx"
MARKER = "hook claude-code"
FAIL_OPEN = " || exit 0"  # a hook whose command cannot start still exits 0 (sh and cmd alike)
REFLECT_EVENTS = ("SessionEnd", "PreCompact")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
HOOK_EVENTS = REFLECT_EVENTS + CONTEXT_EVENTS

# What memx writes into each kind of file: the key its servers live under, or TOML, or Claude Code hooks.
Kind = Literal["mcpServers", "servers", "context_servers", "toml", "hooks", "approval", "cursor_hooks"]
# The clients other than Claude Code whose sessions memx reflects at their end, with the events it hooks
# (Codex: its notify program, run at the end of each turn).
END_HOOKS = {"cursor": ("stop", "sessionEnd"), "codex": ("notify",), "gemini": ("SessionEnd", "PreCompress")}


@dataclass(frozen=True)
class Places:
    """Where things live for one machine: tests pass a temporary home and another platform."""

    home: Path
    project: Path
    platform: str = sys.platform
    env: Mapping[str, str] | None = None

    def var(self, name: str) -> str | None:
        return (os.environ if self.env is None else self.env).get(name)

    def config_base(self) -> Path:
        """Where per-user application settings live: Application Support, %APPDATA% or XDG."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        if self.platform.startswith("win"):
            appdata = self.var("APPDATA")
            return Path(appdata) if appdata else self.home / "AppData" / "Roaming"
        xdg = self.var("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"
