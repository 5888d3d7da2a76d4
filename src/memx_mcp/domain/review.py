"""Review: what a learned bullet waiting for the user carries, and which learned bullets wait.

A bullet the Reflector learned waits (``Status.PENDING``) when the ``review`` setting says so: ``risky``
(the default) holds what the Reflector itself holds (its ``held`` reasons: advice from a tool's output or a
fetched page, fetch-and-execute, credentials, sending data out, "ignore your instructions"), ``all`` holds
every learned bullet, ``none`` holds nothing. What the user writes through ``remember`` never waits.

While it waits, its ``ReviewNote`` keeps why: who said it (the voice memx decided from the transcript), the
reasons it was held, and the (masked) transcript excerpt of the steps it cites."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .models import Bullet

ReviewMode = Literal["risky", "all", "none"]
REVIEW_MODES: tuple[ReviewMode, ...] = ("risky", "all", "none")
VOICES = ("user", "assistant", "content")
EVERY_LEARNED = "the review setting is `all`: every learned bullet waits for you"
MAX_EXCERPT_CHARS = 4000


@dataclass(frozen=True)
class ReviewNote:
    """Why a pending bullet waits and where its words come from."""

    voice: str = ""  # "user", "assistant", "content" or "" (not known)
    reasons: tuple[str, ...] = ()
    excerpt: str = ""  # the transcript's cited steps, masked


@dataclass(frozen=True)
class Pending:
    """A bullet waiting for review, with its note (an empty note for one whose note was lost)."""

    bullet: Bullet
    note: ReviewNote


def waits(mode: str, held: tuple[str, ...]) -> tuple[str, ...]:
    """The reasons a learned bullet with the Reflector's ``held`` reasons waits under ``mode`` (empty: it
    does not wait)."""
    if mode == "none":
        return ()
    if mode == "all":
        return held or (EVERY_LEARNED,)
    return held
