"""The one exception tree of memx. The edges translate it: tool errors in the server, messages in the CLI,
silence (a log line) in hooks.

    MemxError
    ├── InvalidInputError        bad text, limits, ids (the caller can fix it)
    │   └── InvalidScopeError    a scope that does not parse
    ├── NotFoundError            an id that is not in the store
    ├── StoreError               the store cannot be opened or written
    │   ├── ModelMismatchError   the store was embedded with another model: run `memx reindex`
    │   ├── SchemaVersionError   the store was written by a newer memx
    │   ├── StoreBusyError       another process held the write lock too long
    │   ├── StoreDamagedError    files of the store are missing or unreadable: run `memx repair`
    │   ├── DiskFullError        the disk is full (ENOSPC): nothing half-written is reported as stored
    │   └── TeamStoreError       the team store (object storage) failed, named with its cause
    │       ├── TeamStoreUnavailable no answer (unreachable, timed out, server error): writes wait in the outbox
    │       └── TeamStoreRefused     it answers no (missing bucket, unknown key, wrong secret, access denied)
    ├── EmbedderUnavailable      the embedding model cannot load (memx goes keyword-only)
    └── RateLimited              the model that reads sessions said to slow down: the session waits
"""

from __future__ import annotations


class MemxError(Exception):
    """Base of every error memx raises on purpose; its message is meant for a person."""


class InvalidInputError(MemxError):
    pass


class InvalidScopeError(InvalidInputError):
    pass


class NotFoundError(MemxError):
    pass


class StoreError(MemxError):
    pass


class ModelMismatchError(StoreError):
    pass


class SchemaVersionError(StoreError):
    pass


class StoreBusyError(StoreError):
    pass


class StoreDamagedError(StoreError):
    pass


class DiskFullError(StoreError):
    pass


class EmbedderUnavailable(MemxError):
    pass


class TeamStoreError(StoreError):
    """A failure of the team store on object storage; its message names that store and the cause (never the
    personal store, never `memx repair`)."""


class TeamStoreUnavailable(TeamStoreError):
    """The team store on object storage cannot be reached now; what was asked of it was not done."""


class TeamStoreRefused(TeamStoreError):
    """The team store answered no: a missing bucket, an unknown access key, a wrong secret, access denied."""


class RateLimited(MemxError):
    """The model's service said to slow down (HTTP 429, a plan's usage or session limit): the session is
    left for later, never retried in a loop. ``retry_after`` is in seconds (0: not said)."""

    def __init__(self, message: str, retry_after: float | str = 0.0) -> None:
        super().__init__(message)
        self.retry_after = _seconds(retry_after)


def _seconds(value: float | str) -> float:
    """A ``retry-after`` header's seconds (0 when it says none, or a date memx does not parse)."""
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0.0
