"""The README's quick start as a shell script, so that CI runs what the README says, verbatim.

    python3 .ci/quickstart.py README.md            # the install block (venv, pip install, memx-mcp, tests)
    python3 .ci/quickstart.py README.md --terminal # the block after it ("Then, at a terminal")

Prints the lines of the ``bash`` code block(s) of the "Quick start" section; fails when the section or
its blocks are missing, so a README edit cannot silently empty the check."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def blocks(readme: str) -> list[str]:
    """The ``bash`` blocks of the section headed "## Quick start", in order."""
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", readme, re.S | re.M)
    if section is None:
        raise SystemExit("README has no '## Quick start' section")
    found = re.findall(r"^```bash\n(.*?)^```", section.group(1), re.S | re.M)
    if len(found) < 2:
        raise SystemExit("README's quick start has fewer than two bash blocks")
    return found


def main() -> None:
    found = blocks(Path(sys.argv[1]).read_text(encoding="utf-8"))
    sys.stdout.write(found[1] if "--terminal" in sys.argv[2:] else found[0])


if __name__ == "__main__":
    main()
