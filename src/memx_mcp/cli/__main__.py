"""``python -m memx_mcp.cli``: the ``memx`` command, as before the CLI became a folder."""

import sys

from . import main

sys.exit(main())
