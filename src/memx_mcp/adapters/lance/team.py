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
  another model is refused, never mixing vector spaces."""

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

from ...domain.errors import MemxError, ModelMismatchError, StoreError, TeamStoreUnavailable
from ...domain.models import Bullet, Conflict, Status
from ...native import trim_heap
from ...ports import ACTIVE, TeamStatus
from ...text.tokenize import tokens
from .lance import CONFLICTS, LanceStore
from .rows import bullet_schema, conflict_schema
from .sql import _retry
from .staged import StagedWrite
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

    def refresh(self, table: Any, columns: Sequence[str], get: Callable[[Sequence[str]], list[Bullet]]) -> None:
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
    """The part of an object store error a person can act on (lance wraps it in its own layers)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for layer in ("lance error: ", "LanceError(IO): ", "Generic S3 error: ", "Generic N/A error: "):
        text = text.replace(layer, "")
    if "error sending request" in text or "Connection refused" in text:
        where = text.split(" in ")[0]
        return f"no answer ({where[:120]})"
    return text[:160]


@dataclass
class Reachability:
    """What this process last learned of the object store."""

    last_ok: datetime | None = None
    failing_since: datetime | None = None
    error: str = ""

    def ok(self) -> None:
        self.last_ok, self.failing_since, self.error = datetime.now(UTC), None, ""

    def failed(self, exc: BaseException) -> None:
        self.failing_since = self.failing_since or datetime.now(UTC)
        self.error = short_error(exc)

    @property
    def reachable(self) -> bool:
        return self.failing_since is None


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
    ) -> None:
        """Opens (creating on first use) the two tables at ``uri``; ``cache`` is this machine's folder for
        its write lock. ``guard`` runs on every bullet before it is written (the sanitizer, again)."""
        from .lancedb_import import load

        lancedb = load()
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
        session = lancedb.Session()
        self._db = lancedb.connect(uri, storage_options=self._options, session=session)
        self._vectors: TeamCopy = TeamCopy(cache)
        self._columns = bullet_schema(dim).names
        self._bullets_name = BULLETS
        self._bullets, self._conflicts = self._open_tables()
        self.vectors_model = self._team_model()
        self._reach = Reachability()
        self._reach.ok()
        self._indexes_when_free()
        self._recalls: dict[str, int] = {}  # recall counts not yet written (``mark_recalled``)
        self._recalled_at: datetime | None = None
        self._recalls_lock = threading.Lock()
        atexit.register(self.flush_recalls)
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        if background:
            self._refresher = threading.Thread(target=self._follow, name="memx-team-refresh", daemon=True)
            self._refresher.start()

    # -- opening ----------------------------------------------------------------------------------------

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
        while not self._stop.wait(self.staleness):
            if self.sync():
                self.flush_recalls()

    def sync(self) -> bool:
        """Check the tables' latest versions now and bring the copy up to them; False (and the reason kept
        for ``read_notes``) when the object store cannot be reached."""
        try:
            self._bullets.checkout_latest()
            self._conflicts.checkout_latest()
            if self._vectors.loaded and self._vectors.version != int(self._bullets.version):
                self._vectors.reload(self._bullets, self._columns)
        except Exception as exc:
            if not isinstance(exc, MemxError):
                if self._reach.reachable:
                    log.warning("the team store %s cannot be reached: %s", self.uri, short_error(exc))
                self._reach.failed(exc)
                return False
            raise
        self._reach.ok()
        return True

    def _online(self, what: str) -> None:
        """A write curates against the copy (at most ``staleness`` old: what two machines write in that
        window meets at the next Curator pass, ``memx team curate``), so it costs no reload; with the
        object store known to be unreachable it is refused at once, and nothing is written."""
        if not self._reach.reachable and not self.sync():
            raise TeamStoreUnavailable(
                f"the team store {self.uri} cannot be reached ({self._reach.error}): {what} was not done; "
                "nothing was written to it. Try again when it is back (`memx doctor` shows it)"
            )

    def _written(self, write: Callable[[], None], what: str) -> None:
        """``write`` with its commit conflicts retried longer than on a local disk (other machines commit
        between two attempts: an update meets their compactions and updates), and an object store that
        does not answer reported as such."""
        for attempt in range(_CONFLICT_ROUNDS):
            try:
                write()
                return
            except MemxError:
                raise
            except Exception as exc:
                text = str(exc).lower()
                if attempt < _CONFLICT_ROUNDS - 1 and ("conflict" in text or "retry" in text):
                    time.sleep(0.1 * (attempt + 1))
                    continue
                if self.sync():
                    raise
                raise TeamStoreUnavailable(
                    f"the team store {self.uri} cannot be reached ({self._reach.error}): {what} was not done"
                ) from exc

    def close(self) -> None:
        self._stop.set()
        self.flush_recalls()

    def mark_recalled(self, counts: Mapping[str, int], now: datetime) -> None:
        """Reinforcement, batched: the copy counts each recall at once, the table gets them all in one
        commit at the next refresh (or when the process ends), not a round trip on every recall's path."""
        with self._recalls_lock:
            for i, n in counts.items():
                self._recalls[i] = self._recalls.get(i, 0) + n
            self._recalled_at = now
        self._vectors.reinforce(counts, now)

    def flush_recalls(self) -> None:
        """Write the pending recall counts; kept for the next try when the object store does not answer."""
        with self._recalls_lock:
            counts, now, self._recalls = self._recalls, self._recalled_at, {}
        if not counts or now is None:
            return
        try:
            with self.write_lock(wait=min(self.lock_wait, 5.0)):
                bullets = self.get(list(counts))
                reinforced = [
                    b.with_changes(recall_count=b.recall_count + counts[b.id], last_recalled_at=now) for b in bullets
                ]
                LanceStore.upsert(self, reinforced, vectors_changed=False)
        except Exception as exc:
            log.info("recall counts kept for the next try: %s", short_error(exc))
            with self._recalls_lock:
                for i, n in counts.items():
                    self._recalls[i] = self._recalls.get(i, 0) + n
                self._recalled_at = self._recalled_at or now

    def read_notes(self) -> list[str]:
        if self._reach.reachable:
            return []
        since = f"{self._reach.failing_since:%H:%M:%S} UTC" if self._reach.failing_since else "now"
        if not self._vectors.loaded:
            return [f"the team store {self.uri} is unreachable since {since} ({self._reach.error}): personal only"]
        return [
            f"the team store {self.uri} is unreachable since {since} ({self._reach.error}): team bullets come from "
            f"this machine's copy (version {self._vectors.version})"
        ]

    def status(self) -> TeamStatus:
        reachable = self.sync()
        try:
            bullets = self.count(ACTIVE) if reachable else 0
        except Exception:
            bullets = 0
        return TeamStatus(
            self.uri,
            self.staleness,
            reachable,
            self._reach.error,
            int(self._bullets.version),
            self._vectors.version,
            bullets,
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

    def _ensure_indexes(self, rebuild_fulltext: bool = False) -> None:
        """Scalar indexes only: keyword candidates come from the copy's terms, never from the table."""
        from lancedb.index import Bitmap, BTree

        indexed = {tuple(ix.columns) for ix in self._bullets.list_indices()}
        if ("id",) not in indexed:
            self._bullets.create_index("id", config=BTree(), replace=True)
        for column in ("scope", "status"):
            if (column,) not in indexed:
                self._bullets.create_index(column, config=Bitmap(), replace=True)

    def add(self, bullets: Sequence[Bullet]) -> None:
        guarded = [self._guard(b) for b in bullets]
        self._written(lambda: LanceStore.add(self, guarded), f"storing {len(bullets)} bullet(s)")

    def upsert(self, bullets: Sequence[Bullet], vectors_changed: bool = True) -> None:
        guarded = [self._guard(b) for b in bullets]
        self._written(lambda: LanceStore.upsert(self, guarded, vectors_changed), f"storing {len(bullets)} bullet(s)")

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        self._written(lambda: LanceStore.add_conflicts(self, conflicts), f"recording {len(conflicts)} conflict(s)")

    def set_status(self, ids: Sequence[str], status: Status, now: datetime) -> None:
        what = f"setting {len(ids)} bullet(s) {status.value}"
        self._written(lambda: LanceStore.set_status(self, ids, status, now), what)

    def delete(self, ids: Sequence[str]) -> None:
        self._written(lambda: LanceStore.delete(self, ids), f"erasing {len(ids)} bullet(s)")

    def staged(self, bullets: Sequence[Bullet] = ()) -> StagedWrite:
        self._online(f"curating {len(bullets)} bullet(s)")
        return super().staged(bullets)

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        self._online("curating a bullet")
        return super().neighbours(vector, scope, limit)

    def find_content(self, content: str, scope: str) -> Bullet | None:
        self._online("curating a bullet")
        return super().find_content(content, scope)

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

    def column_counts(self, column: str) -> dict[str, int]:
        data = self._bullets.search().select([column]).limit(None).to_arrow() if self.count() else None
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
