"""The tag names memx keeps for a bullet's state (issue 31): ``memx:confirmed`` (a person said it still
holds, with the confirm action) and ``stale`` (what it names is gone). A state switches a check on or off,
so no text can set it: a hashtag in a lesson, tags a model or an MCP client sends, an edit's tags, an
imported record. Only the use cases that own a state set it (``usecases/staleness.py``); everything else has
reserved names dropped on the way in (``usecases/writes.py``): every ``memx:`` name, and a few plain words
memx uses or may use for states (``confirmed``: what stores before issue 31 took from a ``#confirmed``
hashtag, never read as a confirmation again)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

CONFIRMED, STALE = "memx:confirmed", "stale"
STATES = (CONFIRMED, STALE)  # the names memx writes
RESERVED = frozenset({"confirmed", STALE, "pending", "approved", "rejected", "reviewed", "trusted", "verified"})


def is_reserved(tag: str) -> bool:
    """Whether ``tag`` reads as a state name, in any case or width, with or without a leading ``#``."""
    name = unicodedata.normalize("NFKC", tag).strip().lstrip("#").strip().casefold()
    return name in RESERVED or name.startswith("memx:")


def without_reserved(tags: Iterable[str]) -> tuple[str, ...]:
    return tuple(t for t in tags if not is_reserved(t))


def state_of(tags: Iterable[str]) -> tuple[str, ...]:
    """The states among a stored bullet's tags, exactly as memx wrote them."""
    return tuple(t for t in tags if t in STATES)
