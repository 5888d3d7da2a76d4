"""memx-mcp: long-term memory for AI coding assistants."""

import os as _os
import sys as _sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on every hook call
if TYPE_CHECKING:
    from .offline import TelemetrySwitch

# First of all, before anything can import onnxruntime: every entry point imports this package. Only ``os`` and
# ``sys`` here (what the interpreter has loaded already): a hook process on every tool call imports this too.
# ``offline.disable_telemetry`` is the same switch; ``TELEMETRY_SWITCH`` (for the doctor) is built on first use.
_ORT_SWITCH = "ORT_DISABLE_TELEMETRY"  # offline.ORT_SWITCH
_ORT_BEFORE = (_os.environ.get(_ORT_SWITCH), "onnxruntime" in _sys.modules)
_os.environ[_ORT_SWITCH] = "1"

__version__ = "0.1.0"
__all__ = ["__version__"]


def __getattr__(name: str) -> "TelemetrySwitch":
    if name == "TELEMETRY_SWITCH":  # what the environment held before memx set the switch
        from .offline import TelemetrySwitch

        return TelemetrySwitch(*_ORT_BEFORE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
