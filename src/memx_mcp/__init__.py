"""memx-mcp: long-term memory for AI coding assistants."""

from .offline import disable_telemetry

# First of all, before anything can import onnxruntime: every entry point imports this package.
TELEMETRY_SWITCH = disable_telemetry()

__version__ = "0.1.0"
__all__ = ["__version__"]
