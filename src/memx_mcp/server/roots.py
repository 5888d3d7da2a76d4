"""The client's workspace, from MCP roots: clients such as Claude Desktop start the server in a folder that
says nothing about the project (``/`` on macOS); those that offer roots say which folders the user works
in. The first ``file://`` root is taken as the working folder, asked once and again after the client's
``notifications/roots/list_changed``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio

log = logging.getLogger("memx_mcp.server.app")
ASK_SECONDS = 5.0  # a client that offers roots but does not answer must not hold a tool call


def folder_of(uri: str) -> Path | None:
    """The local folder a ``file://`` root names, or None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    return path if path.is_dir() else None


class ClientRoots:
    """What the client said about its roots: unknown until asked, then kept until it says they changed."""

    def __init__(self) -> None:
        self.stale = True
        self.folder: Path | None = None

    def changed(self) -> None:
        self.stale = True

    async def current(self, ctx: Any) -> Path | None:
        """The client's first local root, asking it when what we know is stale (None: it offers none)."""
        if not self.stale:
            return self.folder
        self.stale = False
        try:
            capabilities = ctx.client_capabilities
            if capabilities is None or getattr(capabilities, "roots", None) is None:
                self.folder = None
                return None
            with anyio.fail_after(ASK_SECONDS):
                answer = await ctx.session.list_roots()
        except Exception as exc:  # no roots is no error: the working directory still stands
            log.warning("could not read the client's roots: %s", exc)
            self.folder = None
            return None
        folders = [f for f in (folder_of(str(r.uri)) for r in answer.roots) if f is not None]
        self.folder = folders[0] if folders else None
        return self.folder
