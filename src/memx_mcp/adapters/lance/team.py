"""TeamStore: the bullets and conflicts a team shares, in LanceDB tables on object storage (``s3://``,
``gs://``, ``az://``), written by many machines at once with no lock between them.

- Commits: Lance (13, inside lancedb 0.40) writes each version's manifest with a conditional put
  (``If-None-Match: *`` on S3): when two machines commit the same version, one put fails, and that machine
  checks the other's transaction for conflicts and commits the next version. Appends never conflict;
  updates of the same rows are retried (``sql._retry``). A server that ignores If-None-Match lets one
  commit overwrite the other: ``docs/team-store.md`` says which do.
- Reads: each process keeps an in-memory copy (``TeamCopy``) that a background thread brings up to the
  table's latest version every ``staleness`` seconds. Recall never waits on the object store; with the
  object store unreachable it answers from the copy and ``read_notes`` says so.
- One writer per machine at a time (the local file lock, as for the personal store); between machines,
  only the commit protocol.
- Upkeep: any machine compacts; old versions go only once older than ``retention``, far longer than a
  machine stays on one version (its staleness), so no machine is left reading files that are gone.
- The model and dimension are recorded in the bullets table's schema metadata: a machine configured with
  another model is refused, never mixing vector spaces.
- Outages (``remote.py``, ``outbox.py``): every call to the object store has a total deadline; a failure says
  which store and why (a missing bucket, a bad key, a bad secret, refused, unreachable, timed out), never
  pointing at the personal store. A process that cannot reach the store at start opens it later by itself;
  a write to a team scope made while it does not answer is kept in the outbox on disk (masked, as every write)
  and sent when it answers, and so are recall counts. Curation of such a write sees none of the team's
  bullets: duplicates it makes meet at the next ``memx team curate``."""

from __future__ import annotations

import atexit
import heapq
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...domain.errors import (
    MemxError,
    ModelMismatchError,
    StoreBusyError,
    StoreError,
    TeamStoreError,
    TeamStoreRefused,
    TeamStoreUnavailable,
)
from ...domain.models import Bullet, Conflict, Status
from ...native import trim_heap
from ...ports import ACTIVE, TeamStatus
from ...text.tokenize import tokens
from .lance import CONFLICTS, LanceStore
from .outbox import Entry, Outbox
from .remote import Cause, Deadline, Remote, cause_of, detail, team_error
from .rows import bullet_schema, conflict_schema
from .sql import _retry
from .staged import StagedVectors, StagedWrite
from .vectors import VectorIndex

log = logging.getLogger(__name__)

BULLETS = "bullets"
_CONFLICT_ROUNDS = 4  # rounds of ``sql._retry``'s six attempts
MODEL_KEY = b"memx_model"
DIM_KEY = b"memx_dim"
Guard = Callable[[Bullet], Bullet]


def _same(bullet: Bullet) -> Bullet:
    return bullet


class TeamCopy(VectorIndex):
    """The in-memory copy of the team table. It follows the table's version, not a local generation file:
    this machine's writes are applied in place, other machines' arrive by ``reload``. Beside the vectors
    it keeps each bullet's terms, so that keyword candidates come from memory too: a recall asks nothing of
    the object store."""

    keeps_terms = False  # its own term postings below

    def __init__(self, cache: Path) -> None:
        super().__init__(cache / "generation")  # never written: the table's version is the generation
        self.version: int | None = None  # the table version the copy was last loaded at
        self._stale = False
        self._postings: dict[str, set[str]] = {}  # term → ids of the bullets that hold it

    @property
    def loaded(self) -> bool:
        return self._rows is not None

    def bump(self, added: Sequence[Bullet] = (), removed: Sequence[str] = (), exact: bool = True) -> None:
        with self._mutating:
            if self._rows is None:
                return
            if exact:
                self._apply(added, removed)
            else:  # a restore names no rows: the next read reloads
                self._stale = True

    def _apply(self, added: Sequence[Bullet], removed: Sequence[str]) -> None:
        super()._apply(added, removed)
        self._index_terms(
            (b.id, " ".join((b.content, *b.tools, *b.entities, *b.tags)))
            for b in added
            if b.vector is not None and b.status is Status.ACTIVE
        )

    def _reload(self, table: Any, columns: Sequence[str]) -> None:
        super()._reload(table, columns)
        assert self._rows is not None
        self._postings = {}
        rows = self._rows.select(["id", "content", "tools", "entities", "tags"]).to_pylist()
        self._index_terms(
            (r["id"], " ".join((r["content"], *(r["tools"] or ()), *(r["entities"] or ()), *(r["tags"] or ()))))
            for r in rows
        )

    def _index_terms(self, texts: Iterable[tuple[str, str]]) -> None:
        postings = self._postings
        for i, text in texts:
            for term in set(tokens(text.lower())):
                postings.setdefault(term, set()).add(i)

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Ids of the active bullets of ``scopes`` that share the most (rarest) terms with ``terms``, each
        term weighted by its inverse document frequency; terms held by over half the bullets are passed
        over (they would weigh almost nothing, and cost a pass over most of the copy)."""
        where, codes_of = self._where, self._scope_codes
        wanted = {self._scope_index[sc] for sc in scopes if sc in self._scope_index}
        n = len(where)
        if not wanted or not n:
            return []
        scores: dict[str, float] = {}
        for term in {t.lower() for t in terms}:
            holders = self._postings.get(term)
            if not holders or (n > 20 and len(holders) > n / 2):
                continue
            weight = math.log(1 + n / len(holders))
            for i in holders:
                scores[i] = scores.get(i, 0.0) + weight
        found = [
            (i, s)
            for i, s in scores.items()
            if (p := where.get(i)) is not None and p < len(codes_of) and codes_of[p] in wanted
        ]
        return heapq.nlargest(limit, found, key=lambda x: (x[1], x[0]))

    def advance(self, before: int, after: int) -> None:
        """This process committed version ``after`` on top of ``before``: if the copy was at ``before``,
        the change it just applied in place makes it ``after``."""
        with self._mutating:
            if self.version == before and after == before + 1 and not self._stale:
                self.version = after

    def refresh(
        self,
        table: Any,
        columns: Sequence[str],
        get: Callable[[Sequence[str]], list[Bullet]],
        current: str | None = None,
    ) -> None:
        """Load the copy on first use (and after a restore); later versions come from the background."""
        if self._rows is not None and not self._stale:
            return
        with self._mutating:
            if self._rows is None or self._stale:
                self.reload(table, columns)

    def reload(self, table: Any, columns: Sequence[str]) -> None:
        with self._mutating:
            version = int(table.version)
            self._reload(table, columns)
            self.version, self._stale = version, False
        pa.default_memory_pool().release_unused()
        trim_heap()


def short_error(exc: BaseException) -> str:
    """The part of an object store error a person can act on: its cause in words, and the server's own."""
    if isinstance(exc, TeamStoreError):
        return str(exc).split(": ", 1)[-1].split(". ")[0]
    cause = cause_of(exc)
    return f"{cause.value}: {detail(exc)}" if cause is not None else detail(exc)


@dataclass
class Reachability:
    """What this process last learned of the object store."""

    last_ok: datetime | None = None
    failing_since: datetime | None = None
    error: str = ""
    cause: Cause | None = None

    def ok(self) -> None:
        self.last_ok, self.failing_since, self.error, self.cause = datetime.now(UTC), None, "", None

    def failed(self, exc: BaseException) -> None:
        self.failing_since = self.failing_since or datetime.now(UTC)
        self.error = short_error(exc)
        self.cause = cause_of(exc) or Cause.UNREACHABLE

    @property
    def reachable(self) -> bool:
        return self.failing_since is None


class _Absent:
    """The tables of a team store not opened yet (its object store did not answer at start): any use says why."""

    def __init__(self, store: TeamStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        raise self._store.absent_error()


class TeamStore(LanceStore):
    def __init__(
        self,
        uri: str,
        cache: Path,
        model_name: str,
        dim: int,
        *,
        storage_options: dict[str, str] | None = None,
        staleness: float = 5.0,
        retention: timedelta = timedelta(hours=1),
        optimize_every: int = 20,
        lock_wait: float = 30.0,
        guard: Guard = _same,
        background: bool = True,
        deadline: float = 5.0,
    ) -> None:
        """Opens (creating on first use) the two tables at ``uri``; ``cache`` is this machine's folder for
        its write lock and its outbox. ``guard`` runs on every bullet before it is written (the sanitizer,
        again). An object store that does not answer now leaves the store closed, and opened by the
        background thread (or the next ``sync``) once it answers; ``deadline`` bounds every call to it."""
        from .lancedb_import import load

        self._lancedb = load()
        self.uri = uri
        self.root = cache
        self.model_name = model_name
        self.dim = dim
        self.optimize_every = optimize_every
        self.lock_wait = lock_wait
        self.staleness = staleness
        self.retention = retention
        self._guard = guard
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._meta_path = cache / "meta.json"
        self._lock_path = cache / "write.lock"
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._options = dict(storage_options or {})
        self._deadline = Deadline(deadline, uri)
        self.outbox = Outbox(cache / "outbox", dim)
        self._vectors: TeamCopy = TeamCopy(cache)
        self._pin = threading.local()  # (``LanceStore.one_read``)
        self._columns = bullet_schema(dim).names
        self._bullets_name = BULLETS
        self._bullets: Any = _Absent(self)
        self._conflicts: Any = _Absent(self)
        self._connected = False
        self._connecting = threading.Lock()
        self.vectors_model = model_name
        self._reach = Reachability()
        self._recalls: dict[str, int] = {}  # recall counts not yet written (``mark_recalled``)
        self._recalled_at: datetime | None = None
        self._recalls_lock = threading.Lock()
        try:
            self._connect()
        except TeamStoreError as exc:
            log.warning("%s", exc)
            self._reach.failed(exc)
        atexit.register(self._at_exit)
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        if background:
            self._refresher = threading.Thread(target=self._follow, name="memx-team-refresh", daemon=True)
            self._refresher.start()

    # -- opening ----------------------------------------------------------------------------------------

    def _connect(self) -> None:
        """Open the tables (creating them if this machine comes first) and check the team's model; a
        TeamStoreError (the store's cause named) when the object store does not answer or says no."""
        if not self._connecting.acquire(blocking=False):  # another thread is trying now: never wait twice
            raise self.absent_error()
        try:
            if self._connected:
                return
            lancedb, uri, options = self._lancedb, self.uri, self._options
            db = self._deadline.run(
                lambda: lancedb.connect(uri, storage_options=options, session=lancedb.Session()), "opening it"
            )
            self._db = Remote(db, self._deadline)
            self._bullets, self._conflicts = self._open_tables()
            self.vectors_model = self._team_model()
            self._connected = True
            self._reach.ok()
        finally:
            self._connecting.release()
        self._indexes_when_free()

    def absent_error(self) -> TeamStoreError:
        cause = self._reach.cause or Cause.UNREACHABLE
        return team_error(self.uri, cause, None, "reading it") if cause.outage else self._refused("reading it")

    def _refused(self, what: str) -> TeamStoreRefused:
        doing = f"{what[:1].upper()}{what[1:]}"
        return TeamStoreRefused(f"the team store {self.uri}: {self._reach.error}. {doing} was not done")

    def _open_tables(self) -> tuple[Any, Any]:
        """Both tables, created by whichever machine comes first (a commit of version 1 is a conditional
        put too: the second machine's create fails and it opens the first one's)."""
        names = set(self._db.list_tables().tables)
        schemas = {
            BULLETS: bullet_schema(self.dim).with_metadata({MODEL_KEY: self.model_name, DIM_KEY: str(self.dim)}),
            CONFLICTS: conflict_schema(),
        }
        for name, schema in schemas.items():
            if name not in names:
                try:
                    self._db.create_table(name, schema=schema, exist_ok=True)
                except Exception as exc:
                    log.info("the team table %s was created elsewhere meanwhile (%s)", name, exc)
        return self._db.open_table(BULLETS), self._db.open_table(CONFLICTS)

    def _team_model(self) -> str:
        meta = self._bullets.schema.metadata or {}
        model = str(meta.get(MODEL_KEY, self.model_name.encode()).decode())
        dim = int(meta.get(DIM_KEY, str(self.dim).encode()))
        if model != self.model_name or dim != self.dim:
            raise ModelMismatchError(
                f"the team store at {self.uri} holds vectors of {model} ({dim}-d), but this machine is configured "
                f"with {self.model_name} ({self.dim}-d): every machine of a team uses the team store's model "
                f"(set MEMX_MODEL_NAME={model})"
            )
        return model

    def _indexes_when_free(self) -> None:
        """Several machines opening a new team store at once each try to build its indexes: the first
        commit wins, the others' conflicts are retried, and a failure only leaves the search unindexed."""
        try:
            if self._missing_indexes():
                with self.write_lock_if_free() as free:
                    if free:
                        _retry(self._ensure_indexes, "index the team store")
        except Exception as exc:
            log.warning("the team store's indexes are not built yet (%s): searches scan until they are", exc)

    # -- following the table -----------------------------------------------------------------------------

    def _follow(self) -> None:
        """Every ``staleness`` seconds (the first time at once): open the store if it was not, bring the copy
        up to date, send what waits in the outbox and the recall counts."""
        wait = 0.0 if self._connected else self.staleness  # it just failed: not again at once
        while not self._stop.wait(wait):
            wait = self.staleness
            if self.sync():
                self.send_outbox()
                self.flush_recalls()

    def sync(self) -> bool:
        """Check the tables' latest versions now and bring the copy up to them (opening the store first if
        it was not); False (and the reason kept for ``read_notes``) when the object store does not answer
        or says no."""
        try:
            if not self._connected:
                self._connect()
            self._bullets.checkout_latest()
            self._conflicts.checkout_latest()
            if self._vectors.loaded and self._vectors.version != int(self._bullets.version):
                self._vectors.reload(self._bullets, self._columns)
        except Exception as exc:
            if isinstance(exc, MemxError) and not isinstance(exc, TeamStoreError):
                raise
            self._failed(exc)
            return False
        if not self._reach.reachable:
            log.warning("the team store %s answers again", self.uri)
        self._reach.ok()
        return True

    def _failed(self, exc: BaseException) -> None:
        if self._reach.reachable:
            log.warning("the team store %s cannot be used: %s", self.uri, short_error(exc))
        self._reach.failed(exc)

    @property
    def offline(self) -> bool:
        """Not opened yet, or known not to answer since the last check: writes go to the outbox at once."""
        return not self._connected or not self._reach.reachable

    def _written(self, write: Callable[[], None], keep: Callable[[], None], what: str) -> None:
        """``write`` with its commit conflicts retried longer than on a local disk (other machines commit
        between two attempts: an update meets their compactions and updates). With the object store not
        answering (known, or found now), ``keep`` puts the write in the outbox instead, behind any write
        already waiting there; a store that says no raises its cause."""
        said_no = self._reach.cause is not None and not self._reach.cause.outage
        if self.offline and said_no and not self.sync():  # it said no: ask again (it may have been fixed)
            raise self._refused(what)
        if self.outbox.entries() or self.offline:
            self._kept(keep, what)
            return
        for attempt in range(_CONFLICT_ROUNDS):
            try:
                write()
                return
            except TeamStoreUnavailable as exc:
                self._failed(exc)
                self._kept(keep, what)
                return
            except TeamStoreError as exc:  # it answered no: it is not down
                cause = getattr(exc, "cause", None) or Cause.REFUSED
                raise team_error(self.uri, cause, exc.__cause__, what) from exc
            except MemxError:
                raise
            except Exception as exc:
                text = str(exc).lower()
                if attempt < _CONFLICT_ROUNDS - 1 and ("conflict" in text or "retry" in text):
                    time.sleep(0.1 * (attempt + 1))
                    continue
                if not self.sync():
                    self._kept(keep, what)
                    return
                raise TeamStoreError(f"the team store {self.uri}: {what} failed: {detail(exc)}") from exc

    def _kept(self, keep: Callable[[], None], what: str) -> None:
        if self._reach.cause is not None and not self._reach.cause.outage:
            raise self._refused(what)
        try:
            keep()
        except OSError as exc:
            raise TeamStoreUnavailable(
                f"the team store {self.uri} does not answer ({self._reach.error or 'not opened yet'}) and its outbox "
                f"{self.outbox.folder} cannot be written ({exc}): {what} was not done"
            ) from exc
        log.info("the team store %s does not answer: %s kept in its outbox", self.uri, what)

    def send_outbox(self) -> int:
        """Send the outbox's writes in order (a run of kept bullets in one commit), each deleted once stored;
        stop at the first the store does not take (kept for the next time). How many were sent."""
        if not self.outbox.entries():
            return 0
        sent = 0
        try:
            with self.write_lock(wait=min(self.lock_wait, 5.0)):
                for group in self._runs(self._readable()):
                    try:
                        self._send_run(group)
                    except TeamStoreError as exc:
                        self._failed(exc)
                        break
                    except MemxError:
                        raise
                    except Exception as exc:
                        if not self.sync():
                            break
                        for entry in group:
                            where = self.outbox.set_aside(entry.path)
                            log.error("a kept write was not taken by %s (%s): set aside in %s", self.uri, exc, where)
                        continue
                    for entry in group:
                        self.outbox.done(entry.path)
                    sent += len(group)
        except StoreBusyError:
            return sent
        if sent:
            log.warning("the team store %s answers again: %d kept write(s) sent", self.uri, sent)
        return sent

    def _readable(self) -> list[Entry]:
        found = []
        for path in self.outbox.entries():
            try:
                found.append(self.outbox.read(path))
            except (OSError, KeyError, ValueError) as exc:
                where = self.outbox.set_aside(path)
                log.error("an unreadable entry of the team store's outbox was set aside (%s): %s", exc, where)
        return found

    @staticmethod
    def _runs(entries: list[Entry], most: int = 500) -> list[list[Entry]]:
        """Consecutive kept bullets together (up to ``most`` rows a commit); every other write alone."""
        runs: list[list[Entry]] = []
        for entry in entries:
            last = runs[-1] if runs else None
            if (
                last is not None
                and entry.op == last[0].op == "upsert"
                and sum(e.rows.num_rows for e in last) + entry.rows.num_rows <= most
            ):
                last.append(entry)
            else:
                runs.append([entry])
        return runs

    def _send_run(self, run: list[Entry]) -> None:
        if len(run) == 1:
            self._send(run[0])
            return
        latest: dict[str, Bullet] = {}
        for entry in run:  # in order: the last write of a bullet wins
            for b in entry.bullets():
                latest.pop(b.id, None)
                latest[b.id] = b
        bullets = list(latest.values())
        self._retried(lambda: LanceStore.upsert(self, bullets))

    def _send(self, entry: Entry) -> None:
        args = entry.args
        if entry.op == "upsert":
            self._retried(lambda: LanceStore.upsert(self, entry.bullets()))
        elif entry.op == "set_status":
            now = datetime.fromisoformat(args["now"])
            self._retried(lambda: LanceStore.set_status(self, args["ids"], Status(args["status"]), now))
        elif entry.op == "delete":
            self._retried(lambda: LanceStore.delete(self, args["ids"]))
        elif entry.op == "conflicts":
            rows = entry.rows
            self._retried(lambda: self._conflicts.merge_insert("id").when_not_matched_insert_all().execute(rows))
        elif entry.op == "recalls":
            self._reinforce(args["counts"], datetime.fromisoformat(args["now"]))
        else:
            raise ValueError(f"unknown kept write {entry.op!r}")

    def _retried(self, write: Callable[[], object]) -> None:
        for attempt in range(_CONFLICT_ROUNDS):
            try:
                write()
                return
            except MemxError:
                raise
            except Exception as exc:
                text = str(exc).lower()
                if attempt == _CONFLICT_ROUNDS - 1 or not ("conflict" in text or "retry" in text):
                    raise
                time.sleep(0.1 * (attempt + 1))

    def close(self) -> None:
        self._stop.set()
        self._at_exit()

    def _at_exit(self) -> None:
        """What a process leaves when it ends: its recall counts (written, or kept), and the outbox sent if
        the store answers (one deadline per write: a process never waits on a store that does not)."""
        self.flush_recalls()
        if self.outbox.entries() and not self.offline:  # never a deadline more on the way out
            try:
                self.send_outbox()
            except Exception as exc:
                log.info("the team store's outbox is left for the next process: %s", short_error(exc))

    def mark_recalled(self, counts: Mapping[str, int], now: datetime) -> None:
        """Reinforcement, batched: the copy counts each recall at once, the table gets them all in one
        commit at the next refresh (or when the process ends), not a round trip on every recall's path; with
        the store not answering they go to the outbox at once."""
        with self._recalls_lock:
            for i, n in counts.items():
                self._recalls[i] = self._recalls.get(i, 0) + n
            self._recalled_at = now
        self._vectors.reinforce(counts, now)
        if self.offline and (self._reach.cause or Cause.UNREACHABLE).outage:
            self.flush_recalls()  # to the outbox now: a process stopped by a signal keeps them too

    def _reinforce(self, counts: Mapping[str, int], now: datetime) -> None:
        bullets = self.get(list(counts))
        reinforced = [b.with_changes(recall_count=b.recall_count + counts[b.id], last_recalled_at=now) for b in bullets]
        self._retried(lambda: LanceStore.upsert(self, reinforced, vectors_changed=False))

    def flush_recalls(self) -> None:
        """Write the pending recall counts; with the object store not answering they go to the outbox (they
        outlive this process), with a store that says no they are dropped (with a log line)."""
        with self._recalls_lock:
            counts, now, self._recalls = self._recalls, self._recalled_at, {}
        if not counts or now is None:
            return
        try:
            if self.outbox.entries() or self.offline:
                raise team_error(self.uri, self._reach.cause or Cause.UNREACHABLE, None, "counting recalls")
            with self.write_lock(wait=min(self.lock_wait, 5.0)):
                self._reinforce(counts, now)
        except TeamStoreError as exc:
            if (getattr(exc, "cause", None) or Cause.UNREACHABLE).outage:
                try:
                    self.outbox.recalls(counts, now)
                    return
                except OSError as err:
                    log.warning("recall counts lost: the outbox cannot be written (%s)", err)
                    return
            log.warning("recall counts dropped: %s", exc)
        except Exception as exc:
            log.info("recall counts kept for the next try: %s", short_error(exc))
            with self._recalls_lock:
                for i, n in counts.items():
                    self._recalls[i] = self._recalls.get(i, 0) + n
                self._recalled_at = self._recalled_at or now

    def read_notes(self) -> list[str]:
        notes = []
        if not self._reach.reachable:
            since = f"{self._reach.failing_since:%H:%M:%S} UTC" if self._reach.failing_since else "now"
            if not self._vectors.loaded:
                notes.append(
                    f"the team store {self.uri} cannot be used since {since} ({self._reach.error}): personal only"
                )
            else:
                notes.append(
                    f"the team store {self.uri} cannot be used since {since} ({self._reach.error}): team bullets come "
                    f"from this machine's copy (version {self._vectors.version})"
                )
        waiting = len(self.outbox)
        if waiting:
            notes.append(f"{waiting} write(s) to the team store {self.uri} wait in this machine's outbox to be sent")
        return notes

    def status(self) -> TeamStatus:
        reachable = self.sync()
        try:
            bullets = self.count(ACTIVE) if reachable else 0
            version = int(self._bullets.version) if self._connected else 0
        except Exception:
            bullets, version = 0, 0
        return TeamStatus(
            self.uri,
            self.staleness,
            reachable,
            self._reach.error,
            version,
            self._vectors.version,
            bullets,
            len(self.outbox),
        )

    # -- writes ------------------------------------------------------------------------------------------

    def _after_write(
        self, changed: Sequence[Bullet] = (), removed: Sequence[str] = (), exact: bool = True, vectors: bool = True
    ) -> None:
        """After a commit: the copy learns this process's change; it then stands for the new version only
        when no other machine committed in between (else the background reloads it)."""
        after = int(self._bullets.version)
        if vectors:
            self._vectors.bump(changed, removed, exact)
        self._vectors.advance(after - 1, after)
        if after % self.optimize_every == 0:
            self.optimize()

    def _keep_manifest(self, name: str) -> None:
        """Object storage keeps every version's manifest itself: nothing to copy aside."""

    def checkpoint(self) -> None:
        """As ``_keep_manifest``: nothing to do on object storage."""

    def optimize(self, erase: bool = False) -> None:
        """Compact and drop versions older than ``retention``, whichever machine runs it; a conflict with
        another machine's commit skips it until the next time. ``erase`` changes nothing here: other
        machines may be reading the versions that still hold what was erased, until the window passes."""
        with self.write_lock():
            for table in (self._bullets, self._conflicts):

                def compact(t: Any = table) -> None:
                    t.optimize(cleanup_older_than=self.retention)

                try:
                    compact()  # once: under contention a retry would rewrite the same fragments again
                except Exception as exc:  # upkeep: never fail a write for it
                    log.info("team store compaction skipped until next time: %s", short_error(exc))

    def _missing_indexes(self) -> bool:
        indexed = {tuple(ix.columns) for ix in self._bullets.list_indices()}
        return not {("id",), ("scope",), ("status",)} <= indexed

    def _ensure_indexes(self) -> None:
        """Scalar indexes only: keyword candidates come from the copy's terms, never from the table."""
        from lancedb.index import Bitmap, BTree

        indexed = {tuple(ix.columns) for ix in self._bullets.list_indices()}
        if ("id",) not in indexed:
            self._bullets.create_index("id", config=BTree(), replace=True)
        for column in ("scope", "status"):
            if (column,) not in indexed:
                self._bullets.create_index(column, config=Bitmap(), replace=True)

    def add(self, bullets: Sequence[Bullet]) -> None:
        """Appended; through the outbox, merged by id (a write that timed out may have landed after all)."""
        self._bullets_written(bullets, lambda guarded: LanceStore.add(self, guarded))

    def upsert(self, bullets: Sequence[Bullet], vectors_changed: bool = True) -> None:
        self._bullets_written(bullets, lambda guarded: LanceStore.upsert(self, guarded, vectors_changed))

    def _bullets_written(self, bullets: Sequence[Bullet], write: Callable[[list[Bullet]], None]) -> None:
        guarded = [self._guard(b) for b in bullets]
        if not guarded:
            return

        def keep() -> None:
            self.outbox.upsert(guarded)
            self._vectors.bump(guarded)  # this machine's recall sees it meanwhile

        self._written(lambda: write(guarded), keep, f"storing {len(bullets)} bullet(s)")

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        if not conflicts:
            return
        self._written(
            lambda: LanceStore.add_conflicts(self, conflicts),
            lambda: self.outbox.add_conflicts(list(conflicts)),
            f"recording {len(conflicts)} conflict(s)",
        )

    def set_status(self, ids: Sequence[str], status: Status, now: datetime) -> None:
        if not ids:
            return

        def keep() -> None:
            self.outbox.set_status(list(ids), status.value, now)
            if status is not Status.ACTIVE:
                self._vectors.bump((), list(ids))

        what = f"setting {len(ids)} bullet(s) {status.value}"
        self._written(lambda: LanceStore.set_status(self, ids, status, now), keep, what)

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return

        def keep() -> None:
            self.outbox.delete(list(ids))
            self._vectors.bump((), list(ids))

        self._written(lambda: LanceStore.delete(self, ids), keep, f"erasing {len(ids)} bullet(s)")

    def staged(self, bullets: Sequence[Bullet] = ()) -> StagedWrite:
        """A batch curated against the copy; with the object store not answering, against nothing (its
        commit goes to the outbox; what it duplicates meets at the next ``memx team curate``)."""
        if not self.offline:
            try:
                return super().staged(bullets)
            except TeamStoreUnavailable as exc:
                self._failed(exc)
        return StagedWrite(self, StagedVectors(TeamCopy(self.root)))

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        return [] if self.offline else super().neighbours(vector, scope, limit)

    def find_content(self, content: str, scope: str) -> Bullet | None:
        return None if self.offline else super().find_content(content, scope)

    def _current_copy(self) -> None:
        """The copy as it is while the store does not answer (no call waits on it: the background thread
        checks it); none at all if it was never loaded."""
        if self.offline:
            if not self._vectors.loaded:
                raise self.absent_error()
            return
        super()._current_copy()

    def get(self, ids: Sequence[str]) -> list[Bullet]:
        if ids and self.offline:
            raise self.absent_error()
        return super().get(ids)

    def warm(self) -> None:
        """Load the copy now, if the object store answers (a store that does not is opened later)."""
        try:
            super().warm()
        except TeamStoreError as exc:
            self._failed(exc)

    def replace_all(self, bullets: Sequence[Bullet], model_name: str, dim: int) -> None:
        """Re-embedding with the same model rewrites the vectors in place; another model would change every
        machine's vector space at once, so it is refused."""
        if (model_name, dim) != (self.model_name, self.dim):
            raise StoreError(
                f"the team store at {self.uri} holds {self.model_name} vectors: a team changes its model together "
                "(a new team store, `memx share` again from each machine), not by one machine's reindex"
            )
        self.upsert(bullets)

    # -- reads -------------------------------------------------------------------------------------------

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[Bullet, float]]:
        """From the copy's terms, not the table's full-text index: no round trip, and it works offline."""
        if not terms:
            return []
        self._current_copy()
        found = self._vectors.keyword_search(terms, scopes, limit)
        known = self._vectors.bullets([i for i, _ in found])
        return [(known[i], score) for i, score in found if i in known]

    def verify(self) -> str:
        for name, table in ((BULLETS, self._bullets), (CONFLICTS, self._conflicts)):
            try:
                for _ in table.search().select(["id"]).limit(None).to_batches(8192):
                    pass
            except Exception as exc:
                return f"the team store at {self.uri}: the table {name} cannot be read whole: {exc}"
        return ""

    def size_bytes(self) -> int:
        """Not measured: listing every object of the team store is a round trip per thousand files."""
        return 0

    def generation(self) -> str:
        """Unknown (""): the team's copy keeps no change counter the use cases could key on, so what they
        compute from its bullets is computed anew (``column_counts`` below is not kept either)."""
        return ""

    def column_counts(self, column: str) -> dict[str, int]:
        try:
            data = self._bullets.search().select([column]).limit(None).to_arrow() if self.count() else None
        except TeamStoreError:  # not answering and no copy yet: its counts are unknown, the personal ones stand
            return {}
        counts: dict[str, int] = {}
        for v in data.column(column).to_pylist() if data is not None else []:
            counts[v] = counts.get(v, 0) + 1
        return counts

    def open_conflicts(self) -> list[Conflict]:
        from .rows import row_to_conflict

        return [row_to_conflict(r) for r in self._conflicts.search().where("status = 'open'").limit(None).to_list()]

    def holds(self, ids: Sequence[str]) -> list[str]:
        """Which of ``ids`` this machine's copy holds (active team bullets), without asking the object store."""
        where = self._vectors.bullets(ids)
        return [i for i in ids if i in where]

    def wait_loaded(self) -> float:
        """Load the copy now; the seconds it took (benchmarks, ``memx doctor``)."""
        start = time.perf_counter()
        self.warm()
        return time.perf_counter() - start
