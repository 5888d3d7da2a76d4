"""Claude Desktop: memx's server in ``claude_desktop_config.json`` (user scope only); no hooks."""

from __future__ import annotations

from pathlib import Path

from .edits import server_file, user_only
from .model import Client, ConfigFile, Scope
from .places import Places


def desktop_config(places: Places) -> Path:
    return places.config_base() / "Claude" / "claude_desktop_config.json"


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    user_only("Claude Desktop", scope)
    return (server_file(desktop_config(places)),)


CLIENT = Client("claude-desktop", "Claude Desktop", files)
