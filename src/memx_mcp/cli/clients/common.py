"""What every part of ``memx install`` shares: the names memx writes, and where a machine keeps things
(``Places``, from the client registry)."""

from __future__ import annotations

from typing import Literal

from ...clients import Places
from ...clients.edits import FAIL_OPEN, SERVER_NAME

__all__ = ["FAIL_OPEN", "MARKER", "SERVER_NAME", "Kind", "Places"]

MARKER = "hook claude-code"
Kind = Literal["mcpServers", "servers", "context_servers", "toml", "hooks", "approval", "cursor_hooks"]
