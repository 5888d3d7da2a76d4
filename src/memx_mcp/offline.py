"""Nothing of the user's leaves the machine: the third-party switches that make it so, thrown before any of
those parties is imported. ``memx_mcp/__init__.py`` throws the same switch as :func:`disable_telemetry` (with
``os`` alone: a hook process imports it on every tool call), so that every entry (``memx``, ``memx-mcp``,
``python -m memx_mcp``, the hook helper, a benchmark importing the embedder) runs it before onnxruntime can
load.

onnxruntime (which fastembed imports) otherwise writes a persistent device id and an event queue to
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` on import and resolves Microsoft's collector from a
process that lives half a minute. Only ``ORT_DISABLE_TELEMETRY=1`` in the environment before the import
stops it (``onnxruntime.disable_telemetry_events()`` after the import does not). memx sets it to ``1``
even over a ``0`` the user set: that value is onnxruntime's, not memx's, and memx promises no traffic;
``memx doctor`` says when it overrode one."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

ORT_SWITCH = "ORT_DISABLE_TELEMETRY"


@dataclass(frozen=True)
class TelemetrySwitch:
    """What the environment held before memx set the switch, and whether onnxruntime was already loaded
    (then the switch came too late for this process)."""

    user_value: str | None
    onnxruntime_was_loaded: bool


def disable_telemetry() -> TelemetrySwitch:
    switch = TelemetrySwitch(os.environ.get(ORT_SWITCH), "onnxruntime" in sys.modules)
    os.environ[ORT_SWITCH] = "1"  # inherited by the processes memx starts (the hook helper)
    return switch


def onnxruntime_trace(home: Path | None = None) -> Path:
    """Where onnxruntime keeps its device id and event queue when its telemetry is on (Linux, macOS)."""
    return (home or Path.home()) / ".cache" / "Microsoft" / "DeveloperTools" / ".onnxruntime"
