"""Windsurf: memx's server in ``~/.codeium/windsurf/mcp_config.json`` (user scope only); no hooks memx uses."""

from __future__ import annotations

from .edits import server_file, user_only
from .model import Client, ConfigFile, Scope
from .places import Places


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    user_only("Windsurf", scope)
    return (server_file(places.home / ".codeium" / "windsurf" / "mcp_config.json"),)


CLIENT = Client("windsurf", "Windsurf", files)
