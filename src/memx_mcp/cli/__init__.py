"""The ``memx`` edge: a person's window on the same Memory, and client set-up."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``memx`` script (``memx_mcp.cli:main``, the name installed scripts and client configurations
    keep)."""
    from .app import main as run

    return run(argv)
