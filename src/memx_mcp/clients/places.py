"""Where a machine keeps things (``Places``): tests pass a temporary home and another platform."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


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
