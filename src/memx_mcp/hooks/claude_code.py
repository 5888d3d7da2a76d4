"""``memx hook claude-code``: Claude Code's hooks, through the one hook command (``client_hook.py``).

``SessionEnd`` and ``PreCompact``: reflect the turns of the transcript not reflected before, into the
scope of the session's working directory. ``SessionStart`` and ``UserPromptSubmit``: print the context to
inject (see ``injection.py``), answered by the warm helper (``helper.py``), which the first such call
starts. It always exits 0 and logs to ``MEMX_HOME/logs/hook.log``."""

from __future__ import annotations

from typing import IO

from ..config import Settings
from .client_hook import HELPER_WAIT

__all__ = ["HELPER_WAIT", "run"]


def run(settings: Settings, stdin: IO[str] | None = None, as_json: bool = False, stdout: IO[str] | None = None) -> int:
    """Handle one hook call. Whatever happens, return 0."""
    from .client_hook import run as run_hook

    return run_hook("claude-code", settings, stdin, stdout=stdout, as_json=as_json)
