"""Zed: memx's server under ``context_servers`` in its settings (``~/.config/zed`` on macOS too, or the
project's ``.zed/settings.json``); no hooks."""

from __future__ import annotations

from pathlib import Path

from .edits import server_file
from .model import Client, ConfigFile, Scope
from .places import Places


def _settings(places: Places) -> Path:
    if places.platform.startswith("win"):
        return places.config_base() / "Zed" / "settings.json"
    xdg = places.var("XDG_CONFIG_HOME")  # Zed keeps ~/.config/zed on macOS too
    return (Path(xdg) if xdg else places.home / ".config") / "zed" / "settings.json"


def files(places: Places, scope: Scope) -> tuple[ConfigFile, ...]:
    path = _settings(places) if scope == "user" else places.project / ".zed" / "settings.json"
    return (server_file(path, "context_servers"),)


CLIENT = Client("zed", "Zed", files)
