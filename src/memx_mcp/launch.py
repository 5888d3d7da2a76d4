"""The ``memx-mcp`` script: stop quietly on SIGINT or SIGTERM from the first instant. Clients stop a server
they only health-checked at once, often while it is still importing; without this, Python prints a long
traceback and the client logs that its signal failed. ``server.main`` replaces the handler with one that
first writes what the open store still holds."""

from __future__ import annotations

import os
import signal


def _leave(signum: int, _: object) -> None:
    os._exit(0)


def server() -> None:
    signal.signal(signal.SIGINT, _leave)
    signal.signal(signal.SIGTERM, _leave)
    from .server.app import main

    main()
