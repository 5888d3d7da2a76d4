"""Whether a bullet still holds in the working tree it is about: a bullet that names a file or script of the
repository (``scripts/aider_with_patch.py``, ``config/test.exs``) is stale once that file is gone. Pure: the
caller says which paths exist.

Only names that read as paths of this repository are checked: a relative path with a folder and an
extension, or a bare file name with an extension of code or configuration. A name the repository never
tracked (``dist/app.js`` before a build, another project's file) is not evidence of anything: only a file
that was there and is gone makes a bullet stale."""

from __future__ import annotations

import re
from collections.abc import Callable

_PATH = re.compile(
    r"(?<![\w/.~:@-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z][\w]{0,7}|[\w-]+(?:\.[\w-]+)*\.(?:py|js|ts|tsx|jsx|mjs|cjs|go|rs|rb|"
    r"ex|exs|java|kt|sh|toml|ya?ml|json|ini|cfg|conf|lock|md|sql|css|scss|html|vue|svelte|c|h|cpp|hpp))(?![\w/-])"
)
_NOT_A_PATH = re.compile(r"^(?:\d+(?:\.\d+)+|[\w-]+\.(?:com|org|net|io|dev)$)")


def cited_paths(content: str) -> list[str]:
    """The repository paths a bullet names, in order, once each (URLs, versions and home paths left out)."""
    text = re.sub(r"\w+://\S+", " ", content)
    found = [m.group(1).rstrip(".") for m in _PATH.finditer(text)]
    return list(dict.fromkeys(p for p in found if not _NOT_A_PATH.match(p) and not p.startswith("../")))


def stale_reason(content: str, exists: Callable[[str], bool], was_here: Callable[[str], bool]) -> str:
    """Why the bullet no longer holds here ('' when it does, or when nothing it names can be checked):
    ``exists`` says a path is in the working tree now, ``was_here`` that the repository ever tracked it."""
    for path in cited_paths(content):
        if not exists(path) and was_here(path):
            return f"{path} is not in the working tree any more"
    return ""
