"""The team store's wire: every call into LanceDB for a table on object storage runs under one total deadline,
and a failure of the object store comes back as an error that names the team store and its cause.

- ``Cause``: what went wrong, read off the object store's answer (S3 error codes, the HTTP client's kind of
  failure). A missing bucket, an unknown key, a wrong secret and access denied are answers (``TeamStoreRefused``:
  trying again changes nothing); no answer, a timeout and a server error are outages (``TeamStoreUnavailable``:
  writes wait in the outbox). Anything else is not the object store's and is raised as it is.
- ``Remote``: a LanceDB connection, table or query builder whose calls each run on a thread of their own and
  are abandoned at the deadline (the object store's own request timeout then ends them): a hung endpoint costs
  a caller at most the deadline, never the client's minutes of retries."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from ...domain.errors import MemxError, TeamStoreError, TeamStoreRefused, TeamStoreUnavailable

T = TypeVar("T")


class Cause(Enum):
    MISSING_BUCKET = "missing bucket"
    BAD_KEY = "bad key"
    BAD_SECRET = "bad secret"
    REFUSED = "refused"
    UNREACHABLE = "unreachable"
    TIMED_OUT = "timed out"
    SERVER_ERROR = "server error"

    @property
    def outage(self) -> bool:
        """Trying again later may succeed (the store did not answer, or failed): writes are kept to send."""
        return self in (Cause.UNREACHABLE, Cause.TIMED_OUT, Cause.SERVER_ERROR)


_EXPLAINED = {
    Cause.MISSING_BUCKET: "the bucket does not exist (create it, or fix MEMX_TEAM_STORE)",
    Cause.BAD_KEY: "the server does not know this access key (AWS_ACCESS_KEY_ID)",
    Cause.BAD_SECRET: "the secret key does not match the access key (AWS_SECRET_ACCESS_KEY)",
    Cause.REFUSED: "access denied: these credentials may not do this (read-only?)",
    Cause.UNREACHABLE: "no answer: nothing listens at the endpoint, or the network is down",
    Cause.TIMED_OUT: "no answer within the deadline (MEMX_TEAM_TIMEOUT_SECONDS)",
    Cause.SERVER_ERROR: "the server failed (HTTP 5xx)",
}

# Read off the text of the error (lance and object_store keep the S3 error code and the client's kind of
# failure in it); the first that matches wins, so answers come before the ways of not answering.
_SIGNS: tuple[tuple[Cause, tuple[str, ...]], ...] = (
    (Cause.MISSING_BUCKET, ("NoSuchBucket", "bucket does not exist")),
    (Cause.BAD_KEY, ("InvalidAccessKeyId", "access key ID you provided does not exist")),
    (Cause.BAD_SECRET, ("SignatureDoesNotMatch",)),
    (Cause.REFUSED, ("AccessDenied", "lacked the necessary privileges", "403 Forbidden", "status: 403")),
    (Cause.TIMED_OUT, ("timed out", "TimedOut", "operation timed out", "deadline has elapsed", "kind: Timeout")),
    (
        Cause.UNREACHABLE,
        (
            "Connection refused",
            "ConnectionRefused",
            "tcp connect error",
            "dns error",
            "error sending request",
            "connection closed before message completed",
            "Connection reset",
            "ConnectionReset",
            "kind: Connect",
        ),
    ),
    (Cause.SERVER_ERROR, ("500 Internal Server Error", "502 Bad Gateway", "503 Service Unavailable", "status: 5")),
)


def cause_of(exc: BaseException) -> Cause | None:
    """What the object store's failure was, or None when it is not one (a bad query, a commit conflict)."""
    if isinstance(exc, TeamStoreError):
        return getattr(exc, "cause", None)
    text = str(exc)
    for cause, signs in _SIGNS:
        if any(sign in text for sign in signs):
            return cause
    return None


def detail(exc: BaseException) -> str:
    """The object store's own words, cut to what a person reads: its S3 error message when it sent one."""
    text = str(exc)
    for start, end in (("<Message>", "</Message>"), ('message: "', '"')):
        if start in text:
            return text.split(start, 1)[1].split(end, 1)[0][:160]
    first = text.splitlines()[0] if text else type(exc).__name__
    for layer in ("lance error: ", "LanceError(IO): ", "Generic S3 error: ", "Invalid input, "):
        first = first.replace(layer, "")
    return first[:160]


def team_error(uri: str, cause: Cause, exc: BaseException | None, doing: str, deadline: float = 0.0) -> TeamStoreError:
    """The error for ``cause``: the store it comes from, the cause in words, what was not done, and (for an
    outage) that writes wait in the outbox."""
    why = _EXPLAINED[cause]
    if cause is Cause.TIMED_OUT and deadline:
        why = f"no answer within {deadline:g} s (MEMX_TEAM_TIMEOUT_SECONDS)"
    said = f"; the server said: {detail(exc)}" if exc is not None and cause is not Cause.TIMED_OUT else ""
    text = f"the team store {uri}: {cause.value} — {why}{said}. {doing[:1].upper()}{doing[1:]} was not done"
    error: TeamStoreError = TeamStoreUnavailable(text) if cause.outage else TeamStoreRefused(text)
    error.cause = cause  # type: ignore[attr-defined]
    return error


_inside = threading.local()


@dataclass(frozen=True)
class Deadline:
    """A total deadline for one call to the object store, whatever it does inside (requests, retries)."""

    seconds: float
    uri: str

    def run(self, call: Callable[[], T], doing: str = "a call to it") -> T:
        """``call`` on a thread of its own; TeamStoreUnavailable (timed out) if it has not returned in time,
        the object store's failure as a TeamStoreError, anything else as raised. A call made from inside
        another (a LanceDB method calling back) runs where it is: the outer deadline covers it."""
        if getattr(_inside, "active", False):
            return call()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            _inside.active = True
            try:
                box["value"] = call()
            except BaseException as exc:
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="memx-team-call", daemon=True).start()
        if not done.wait(self.seconds):
            raise team_error(self.uri, Cause.TIMED_OUT, None, doing, self.seconds)
        if "error" in box:
            exc = box["error"]
            cause = None if isinstance(exc, MemxError) else cause_of(exc)
            if cause is not None:
                raise team_error(self.uri, cause, exc, doing) from exc
            raise exc
        return box["value"]  # type: ignore[no-any-return]


def _ours(value: Any) -> bool:
    """A LanceDB object whose methods may reach the object store (a table, a query, a merge)."""
    module = type(value).__module__ or ""
    return module.startswith(("lancedb", "lance")) and not isinstance(value, (str, bytes, int, float))


class Remote:
    """A LanceDB object seen through ``deadline``: each method call (and each property, which may read) runs
    under it, and what it returns is seen the same way when it is a LanceDB object too."""

    def __init__(self, target: Any, deadline: Deadline) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_deadline", deadline)

    def __getattr__(self, name: str) -> Any:
        target, deadline = self._target, self._deadline
        static = inspect.getattr_static(target, name, None)
        if inspect.isdatadescriptor(static):
            return _seen(deadline.run(lambda: getattr(target, name), f"reading {name}"), deadline)
        value = getattr(target, name)
        if not callable(value):
            return _seen(value, deadline)

        def call(*args: Any, **kwargs: Any) -> Any:
            return _seen(deadline.run(lambda: value(*args, **kwargs), f"the call {name}"), deadline)

        return call

    def __repr__(self) -> str:
        return f"Remote({self._target!r})"


def _seen(value: Any, deadline: Deadline) -> Any:
    return Remote(value, deadline) if _ours(value) else value
