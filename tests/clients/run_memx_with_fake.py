"""The `memx` command of a copy of memx that has the fake client's module: the module, then memx's own
entry point, unchanged."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import fake_client  # noqa: F401  (registers the client)

from memx_mcp.cli.app import main

sys.exit(main())
