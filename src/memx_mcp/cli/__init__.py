"""The ``memx`` edge: a person's window on the same Memory, and client set-up."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on every hook call

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``memx`` script (``memx_mcp.cli:main``, the name installed scripts and client configurations
    keep). ``memx hook CLIENT`` runs on every tool call: it goes the light way first (``hooks/quick.py``: the
    standard library and the warm helper), and only when that cannot answer does the whole CLI load."""
    line = list(sys.argv[1:] if argv is None else argv)
    if "hook" in line:
        from ..hooks import quick

        done = quick.run(line)
        if done is not None:
            return done
    from .app import main as run

    return run(line)
