"""Sessions waiting for a model to read them: a client's session-end hook only queues the session and
starts a detached worker, so the hook returns within its client's deadline (Claude Code kills a SessionEnd
hook after 1.5 s) however long the reading takes.

The queue loses nothing:

- One job file per session (``<name>.json``). The worker claims a job by renaming it ``<name>.reading``
  before reading the session, so a hook that queues the same session again meanwhile (PreCompact then
  SessionEnd; Codex and Cursor after every turn) writes a new ``<name>.json`` beside it: once the reading
  ends, that job is read too, for the turns written after the first reading started. A failure or a rate
  limit puts the claimed job back without overwriting a newer one.
- A job that cannot be read (a hand-edited file, a non-numeric time) is set aside in ``corrupt/`` with a
  log line; the others run.
- A session that cannot be queued (a full disk) leaves a marker that needs no data block: an empty file in
  ``missed/`` whose name holds the session (a symlink to its transcript when the name would be too long).
  The next hook that queues, and every worker run, turns markers back into jobs.
- A job claimed by a worker that died (``.reading`` with no worker holding the lock) is put back.

One worker runs at a time (a lock file); it reads every due session once (again when queued again) and
exits, looking once more after letting go of the lock for a job queued while a hook's own worker found the
lock taken. A session the model's service rate-limited stays queued with a later due time (the service's
``retry-after``, else doubling from two minutes up to six hours) and the worker stops asking for this run:
nothing loops. A session that failed three times is dropped from the queue, with a log line."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import logging
import math
import os
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from errno import EDQUOT, ENOSPC
from pathlib import Path
from typing import Any

from ..config import Settings
from ..domain.errors import DiskFullError
from ..files import atomic_write

MAX_ATTEMPTS = 3
MAX_PASSES = 10  # passes over the queue in one worker run: sessions queued again are read again, a few times
FIRST_BACKOFF = 120.0
MAX_BACKOFF = 6 * 3600.0
NAME_MAX = 250  # a marker's file name (most file systems allow 255 bytes)


@dataclass(frozen=True)
class QueuedSession:
    """A session a client's hook reported ended (or one of its turns): what reading it needs."""

    event: str  # the hook's event, for the log ("SessionEnd", "codex agent-turn-complete" …)
    transcript: Path
    key: str | None  # the session key its progress is kept under (None: derived from the transcript)
    cwd: str  # the session's working directory ('' when unknown)

    @property
    def name(self) -> str:
        """The job's file name: one per session, whichever event queued it."""
        ident = self.key or str(self.transcript.resolve())
        return hashlib.sha256(ident.encode("utf-8", "replace")).hexdigest()[:24]

    @property
    def short(self) -> str:
        """The session id as the log shows it."""
        return (self.key or "").split(":")[-1][:12]


@dataclass(frozen=True)
class Job:
    """A queued session and its schedule. ``id`` is new at every queueing: a worker reads each id once."""

    session: QueuedSession
    id: str
    queued: float
    attempts: int = 0
    due: float = 0.0

    def dumps(self) -> str:
        s = self.session
        job = {"event": s.event, "path": str(s.transcript), "key": s.key, "cwd": s.cwd, "id": self.id}
        return json.dumps({**job, "queued": self.queued, "attempts": self.attempts, "due": self.due})

    @classmethod
    def loads(cls, text: str) -> Job:
        """The job in ``text``; ValueError saying what is wrong when it is not one."""
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        path, key = data.get("path"), data.get("key")
        if not isinstance(path, str) or not path:
            raise ValueError("no transcript path")
        if key is not None and not isinstance(key, str):
            raise ValueError("the session key is not text")
        event, cwd = data.get("event", ""), data.get("cwd", "")
        if not isinstance(event, str) or not isinstance(cwd, str):
            raise ValueError("the event or the folder is not text")
        ident = data.get("id") or hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]  # older jobs
        attempts = _number(data, "attempts")
        if attempts != int(attempts) or attempts < 0:
            raise ValueError(f"attempts is not a count: {data.get('attempts')!r}")
        session = QueuedSession(event, Path(path), key, cwd)
        return cls(session, str(ident), _number(data, "queued"), int(attempts), _number(data, "due"))


def _number(data: dict[str, Any], field: str) -> float:
    value = data.get(field, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{field} is not a number: {value!r}")
    return float(value)


def queue_folder(settings: Settings) -> Path:
    return settings.home / "queue"


def enqueue(settings: Settings, session: QueuedSession) -> bool:
    """Queue ``session`` (one job per session: a second end of it replaces a job not yet being read). True
    when queued; False when the queue could not be written and a marker was left for the next run to pick
    up. Raises OSError when even the marker could not be left."""
    folder = queue_folder(settings)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    recover_missed(settings)  # what an earlier hook could not queue, now that this one may
    try:
        _write_job(folder, session)
        return True
    except OSError:
        _mark_missed(folder, session)
        return False


def _write_job(folder: Path, session: QueuedSession) -> Path:
    target = folder / f"{session.name}.json"
    atomic_write(target, Job(session, uuid.uuid4().hex, time.time()).dumps())
    return target


def _mark_missed(folder: Path, session: QueuedSession) -> None:
    """Leave a marker of ``session`` that needs no data block: an empty file whose name holds it; a symlink
    to its transcript when that name would be too long."""
    missed = folder / "missed"
    missed.mkdir(exist_ok=True, mode=0o700)
    whole = [session.event, session.key, str(session.transcript), session.cwd]
    for fields in (whole, whole[:3]):  # the folder is left out before the transcript is
        name = "f" + _encode(fields)
        if len(name) <= NAME_MAX:
            (missed / name).touch(mode=0o600)
            return
    name = "l" + _encode([session.event, session.key])[: NAME_MAX - 1]
    (missed / name).unlink(missing_ok=True)
    (missed / name).symlink_to(session.transcript)


def _encode(fields: list[str | None]) -> str:
    """``fields`` as a file name: compressed (the transcript's path and the folder share most of their
    length), in the URL-safe base64 alphabet."""
    packed = zlib.compress(json.dumps(fields).encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _decode_marker(marker: Path) -> QueuedSession:
    raw = marker.name[1:]
    try:
        fields = json.loads(zlib.decompress(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))))
    except (binascii.Error, ValueError, zlib.error) as exc:
        raise ValueError(f"not a marker: {exc}") from exc
    if marker.name.startswith("l"):
        fields = [*fields[:2], os.readlink(marker)]
    if not isinstance(fields, list) or len(fields) < 3 or not all(isinstance(f, str) for f in fields[2:]):
        raise ValueError("not a marker")
    event, key, path = fields[0], fields[1], fields[2]
    cwd = fields[3] if len(fields) > 3 else ""
    return QueuedSession(str(event), Path(path), key if isinstance(key, str) else None, cwd)


def missed(settings: Settings) -> list[Path]:
    """The markers of sessions that could not be queued."""
    folder = queue_folder(settings) / "missed"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def recover_missed(settings: Settings, log: logging.Logger | None = None) -> int:
    """Queue the sessions that earlier hooks could not; returns how many. A marker stays while the queue
    still cannot be written."""
    folder, count = queue_folder(settings), 0
    for marker in missed(settings):
        try:
            session = _decode_marker(marker)
        except (OSError, ValueError):
            _set_aside(folder, marker, "an unreadable marker of a missed session", log)
            continue
        if not (folder / f"{session.name}.json").exists():
            try:
                _write_job(folder, session)
            except OSError:
                return count  # still full: the marker waits for the next run
        marker.unlink(missing_ok=True)
        count += 1
        if log:
            log.info("session %s, which could not be queued at its end, is queued now", session.short)
    return count


def start_worker(settings: Settings) -> None:
    """``memx hook worker`` in a session of its own, detached from the hook: the client's deadline killing
    the hook does not reach it."""
    env = {**os.environ, "MEMX_HOME": str(settings.home)}
    subprocess.Popen(
        [sys.executable, "-m", "memx_mcp.cli", "hook", "worker"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        close_fds=True,
    )


def _set_aside(folder: Path, file: Path, why: str, log: logging.Logger | None) -> None:
    """Move ``file`` into ``corrupt/`` (never deleted: a person may want it), with a log line."""
    aside = folder / "corrupt"
    target = aside / f"{file.name}.{time.time_ns()}"
    try:
        aside.mkdir(exist_ok=True, mode=0o700)
        os.replace(file, target)
    except OSError as exc:
        if log:
            log.warning("queue: %s (%s) could not be set aside: %s", file.name, why, exc)
        return
    if log:
        log.warning("queue: %s is %s: set aside as %s; the other sessions run", file.name, why, target)


def _load(folder: Path, file: Path, log: logging.Logger) -> Job | None:
    """The job in ``file``; None when it is gone or was corrupt (then set aside)."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        _set_aside(folder, file, f"not readable ({exc})", log)
        return None
    try:
        return Job.loads(text)
    except ValueError as exc:
        _set_aside(folder, file, f"not a queued session ({exc})", log)
        return None


def _jobs(folder: Path, log: logging.Logger) -> list[tuple[Path, Job]]:
    found = [(f, j) for f in folder.glob("*.json") if (j := _load(folder, f, log)) is not None]
    return sorted(found, key=lambda fj: fj[1].queued)


def _put_back(claimed: Path, job: Job) -> None:
    """Return a claimed job to the queue; where the session was queued again meanwhile, the newer job stays
    and takes the later due time and the count of failures. On a full disk the job goes back as it was
    claimed (a link needs no data block), or stays claimed for the next worker run to put back."""
    target = claimed.with_suffix(".json")
    with contextlib.suppress(OSError):
        atomic_write(claimed, job.dumps())
    try:
        os.link(claimed, target)  # fails where a newer job is there: never overwrite it
    except FileExistsError:
        try:
            newer = Job.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            newer = None
        if newer is not None:
            later = replace(newer, due=max(newer.due, job.due), attempts=max(newer.attempts, job.attempts))
            with contextlib.suppress(OSError):
                atomic_write(target, later.dumps())
    except OSError:
        return
    claimed.unlink(missing_ok=True)


def _recover_claimed(folder: Path, log: logging.Logger) -> None:
    """Jobs a worker claimed and did not finish (it died): back in the queue. Called under the lock."""
    for claimed in folder.glob("*.reading"):
        job = _load(folder, claimed, log)
        if job is not None:
            _put_back(claimed, job)
            log.info("queued session %s: put back after a worker stopped reading it", job.session.short)


# (settings, the session, log) -> (why it was deferred or "", seconds to wait)
Reflect = Callable[[Settings, QueuedSession, logging.Logger], tuple[str, float]]


def work(settings: Settings, log: logging.Logger, reflect: Reflect, now: float | None = None) -> int:
    """Read every due queued session with ``reflect``, each queueing once; returns how many were reflected.
    Another worker running: 0 (that one reads what was queued)."""
    from ..compose import file_lock

    folder = queue_folder(settings)
    if not folder.is_dir():
        return 0
    done, seen, passes = 0, set[str](), 0
    while passes < MAX_PASSES:
        try:
            lock = file_lock(folder / ".worker.lock", timeout=0.0)
            lock.__enter__()
        except Exception:  # another worker holds it
            return done
        limited = False
        try:
            _recover_claimed(folder, log)
            recover_missed(settings, log)
            while passes < MAX_PASSES:
                passes += 1
                reflected, limited = _work(settings, log, reflect, time.time() if now is None else now, seen)
                done += reflected
                if limited or not reflected:
                    break
        finally:
            lock.__exit__(None, None, None)
        # a hook that queued just before the lock was let go found it taken and left the job to this worker
        if limited or not _waiting(folder, log, time.time() if now is None else now, seen):
            return done
    return done


def _waiting(folder: Path, log: logging.Logger, now: float, seen: set[str]) -> bool:
    return any(j.due <= now and j.id not in seen for _, j in _jobs(folder, log)) or bool(
        (folder / "missed").is_dir() and any((folder / "missed").iterdir())
    )


def _work(settings: Settings, log: logging.Logger, reflect: Reflect, now: float, seen: set[str]) -> tuple[int, bool]:
    """One pass over the due jobs not read in this run: (how many were reflected, whether a rate limit
    stopped it)."""
    folder, done = queue_folder(settings), 0
    for file, listed in _jobs(folder, log):
        if listed.due > now or listed.id in seen:
            continue
        claimed = file.with_suffix(".reading")
        try:
            os.rename(file, claimed)  # from here a hook queueing this session again writes a new job
        except FileNotFoundError:
            continue
        job = _load(folder, claimed, log)  # the job as claimed (a hook may have replaced it since it was listed)
        if job is None:
            continue
        seen.add(job.id)
        session = job.session
        if not session.transcript.is_file():
            log.info("queued session %s: its transcript is gone", session.short)
            claimed.unlink(missing_ok=True)
            continue
        try:
            deferred, retry_after = reflect(settings, session, log)
        except Exception as exc:
            if isinstance(exc, DiskFullError) or (isinstance(exc, OSError) and exc.errno in (ENOSPC, EDQUOT)):
                _put_back(claimed, replace(job, due=now + FIRST_BACKOFF))  # not its failure: nothing can be stored
                log.warning("disk full (%s): session %s left queued; no more read this run", exc, session.short)
                return done, True
            failed = replace(job, attempts=job.attempts + 1)
            if failed.attempts >= MAX_ATTEMPTS:
                log.warning("queued session %s dropped after %d failures: %s", session.short, failed.attempts, exc)
                claimed.unlink(missing_ok=True)
            else:
                log.warning("queued session %s failed (%s: %s): left queued", session.short, type(exc).__name__, exc)
                _put_back(claimed, failed)
            continue
        if deferred:
            attempts = job.attempts + 1
            wait = retry_after or min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (attempts - 1))
            _put_back(claimed, replace(job, attempts=attempts, due=now + wait))
            log.info("rate limited (%s): session left queued for %.0f s; no more asked this run", deferred, wait)
            return done, True
        claimed.unlink(missing_ok=True)
        done += 1
    return done, False
