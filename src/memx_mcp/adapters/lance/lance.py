"""LanceStore: bullets and conflicts in an embedded LanceDB folder shared by many processes.

- Reads see other processes' writes (``read_consistency_interval=0``).
- Writes go through one cross-process file lock and are retried on commit conflicts.
- The table is compacted every ``optimize_every`` versions. Keyword search has no index on disk: each
  process keeps its own inverted index of the active bullets' ``terms`` (``lexical.py``, inside the vector
  copy), kept current by the same change counter.
- ``meta.json`` records the schema version and the embedding model; another model is refused until
  ``memx reindex`` re-embeds into a fresh table."""

from __future__ import annotations

import json
import logging
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ...domain.errors import ModelMismatchError, SchemaVersionError, StoreBusyError, StoreDamagedError
from ...domain.models import Bullet, Status
from ...files import atomic_write
from ...ports import EVERY, Where
from . import damage
from .conflicts import ConflictTable
from .lock import file_lock
from .reflections import ReflectionLog
from .reviews import ReviewNotes
from .rows import bullet_schema, bullets_table, conflict_schema, table_to_bullets
from .sql import _retry, sql_list, sql_str, to_sql
from .staged import StagedVectors, StagedWrite
from .vectors import VectorIndex

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_LAST = 2**64 - 1


def _version_order(path: Path) -> int:
    """Sort key putting the newest manifest first: LanceDB names them ``u64::MAX - version`` (v2 paths)
    or ``version`` (v1 paths)."""
    try:
        number = int(path.stem)
    except ValueError:
        return _LAST
    return number if number > _LAST // 2 else _LAST - number


CONFLICTS = "conflicts"
__all__ = ["LanceStore", "sql_list", "sql_str"]


class LanceStore(ReflectionLog, ReviewNotes, ConflictTable):
    def __init__(
        self,
        root: Path,
        model_name: str,
        dim: int,
        *,
        optimize_every: int = 20,
        allow_model_change: bool = False,
        lock_wait: float = 30.0,
    ) -> None:
        """Opening never takes the write lock on a store that exists (a long import in another process
        does not hold it up); only creating a new store, or the indexes a store lacks, writes, and the
        indexes wait for a free lock rather than for the writer. Damage is reported, never papered over
        with a new empty table."""
        from .lancedb_import import load

        lancedb = load()

        self.root = root
        self.model_name = model_name
        self.dim = dim
        self.optimize_every = optimize_every
        self.lock_wait = lock_wait
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._meta_path = root / "meta.json"
        self._lock_path = root / "write.lock"
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._db = lancedb.connect(str(root / "lance"), read_consistency_interval=timedelta(0))
        self._vectors = VectorIndex(root / "generation")
        self._pin = threading.local()  # ``one_read``'s state, per thread
        self._counted: dict[str, tuple[tuple[str, str], dict[str, int]]] = {}  # column_counts by generation
        self._columns = bullet_schema(dim).names
        try:
            meta = self._read_meta()
            ready = meta is not None and self._tables_exist(str(meta["bullets_table"]))
        except StoreDamagedError:
            ready = False  # or another process is creating the store right now: looked at again under its lock
        created = False
        if not ready:
            meta, created = self._create()
        assert meta is not None
        if not allow_model_change:
            self._check_model(meta)
        self.vectors_model = str(meta.get("model"))  # the model whose vectors the table holds
        self._bullets_name = str(meta["bullets_table"])
        self._bullets = self._open(self._bullets_name)
        self._conflicts = self._open(CONFLICTS)
        self._indexes_when_free()
        if created:
            self.checkpoint()

    # -- meta and tables ------------------------------------------------------------------------------

    def _read_meta(self) -> dict[str, Any] | None:
        """``meta.json`` brought up to SCHEMA_VERSION (written back when the lock is free), or None for a
        folder where nothing was stored yet; missing beside existing tables, it is damage."""
        if not self._meta_path.is_file():
            found = damage.inspect(self.root, None, ())
            if found:
                raise StoreDamagedError(found.message(self.root))
            return None
        try:
            meta: dict[str, Any] = json.loads(self._meta_path.read_text(encoding="utf-8"))
            version = int(meta.get("schema_version", 0))
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise StoreDamagedError(
                f"the store at {self.root} is damaged: {self._meta_path} cannot be read ({exc}). To fix it, "
                f"{damage.REPAIR_HINT}."
            ) from exc
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the store at {self.root} has schema version {version}; this memx reads up to "
                f"{SCHEMA_VERSION}: upgrade memx-mcp to open it"
            )
        if version < SCHEMA_VERSION:
            meta = self._migrate(meta, version)
        return meta

    def _tables_exist(self, bullets: str) -> bool:
        names = set(self._db.list_tables().tables)
        if {bullets, CONFLICTS} <= names:
            return True
        found = damage.inspect(self.root, bullets, (bullets, CONFLICTS))
        if found:
            raise StoreDamagedError(found.message(self.root))
        return False

    def _create(self) -> tuple[dict[str, Any], bool]:
        """A first use: meta and both tables, under the lock, and whether this process made them. Another
        process may be creating the same store (its meta written, a table folder not yet holding its
        manifest): whoever comes second waits for the lock and finds it done. Only what is still wrong
        under the lock is damage."""
        with self.write_lock():
            meta = self._read_meta()
            if meta is None:
                meta = {
                    "schema_version": SCHEMA_VERSION,
                    "model": self.model_name,
                    "dim": self.dim,
                    "bullets_table": "bullets",
                    "created_at": datetime.now().astimezone().isoformat(),
                }
                self._write_meta(meta)
            name = str(meta["bullets_table"])
            if self._tables_exist(name):
                return meta, False
            for table, schema in ((name, bullet_schema(int(meta["dim"]))), (CONFLICTS, conflict_schema())):
                self._db.create_table(table, schema=schema, exist_ok=True)
            return meta, True

    def _open(self, name: str) -> Any:
        try:
            return self._db.open_table(name)
        except Exception as exc:
            found = damage.inspect(self.root, name, (name,))
            if found:
                raise StoreDamagedError(found.message(self.root)) from exc
            raise StoreDamagedError(
                f"the store at {self.root} is damaged: the table {name} cannot be opened ({exc}). To fix it, "
                f"{damage.REPAIR_HINT}."
            ) from exc

    def _migrate(self, meta: dict[str, Any], version: int) -> dict[str, Any]:
        """Bring an older store's metadata up to SCHEMA_VERSION, one step at a time; recorded on disk when
        no other process is writing (until then each open migrates it again, in memory)."""
        if version < 1:  # 0: before versioning, the bullets table had its plain name
            meta.setdefault("bullets_table", "bullets")
            meta.setdefault("model", self.model_name)
            meta.setdefault("dim", self.dim)
        meta["schema_version"] = SCHEMA_VERSION
        meta["migrated_from"] = version
        with self.write_lock_if_free() as free:
            if free:
                self._write_meta(meta)
                log.info("store migrated from schema %d to %d", version, SCHEMA_VERSION)
        return meta

    def _write_meta(self, meta: dict[str, Any]) -> None:
        atomic_write(self._meta_path, json.dumps(meta, indent=2))

    def _check_model(self, meta: dict[str, Any]) -> None:
        if meta.get("model") != self.model_name or int(meta.get("dim", 0)) != self.dim:
            raise ModelMismatchError(
                f"the store at {self.root} was embedded with {meta.get('model')} ({meta.get('dim')}-d), "
                f"but the configured model is {self.model_name} ({self.dim}-d). Run `memx reindex` to "
                "re-embed it with the configured model, or set MEMX_MODEL_NAME back."
            )

    def _indexes_when_free(self) -> None:
        """Indexes a store lacks are built when no other process is writing (a reader never waits for
        them), and the full-text index an earlier memx kept is dropped then."""
        if self._missing_indexes():
            with self.write_lock_if_free() as free:
                if free:
                    self._ensure_indexes()

    def _missing_indexes(self) -> bool:
        indices = self._bullets.list_indices()
        indexed = {tuple(ix.columns) for ix in indices}
        fulltext = any(ix.index_type == "FTS" for ix in indices)
        return fulltext or not {("id",), ("scope",), ("status",)} <= indexed

    def _ensure_indexes(self) -> None:
        """A B-tree on ``id`` (fetching candidates by id) and bitmaps on ``scope`` and ``status`` (reads
        filter on both). The full-text index on ``terms`` that memx kept before the in-memory lexical index
        (``lexical.py``) is dropped: nothing reads it, each compaction spent time updating it, and it held
        the text of erased bullets until rebuilt."""
        from lancedb.index import Bitmap, BTree

        indices = self._bullets.list_indices()
        for ix in indices:
            if ix.index_type == "FTS":
                self._bullets.drop_index(ix.name)
        indexed = {tuple(ix.columns) for ix in indices}
        if ("id",) not in indexed:
            self._bullets.create_index("id", config=BTree(), replace=True)
        for column in ("scope", "status"):
            if (column,) not in indexed:
                self._bullets.create_index(column, config=Bitmap(), replace=True)

    # -- locking and upkeep ---------------------------------------------------------------------------

    @contextmanager
    def write_lock(self, wait: float | None = None) -> Iterator[None]:
        """Re-entrant within a process, exclusive across processes; waits ``wait`` seconds (default: the
        store's ``lock_wait``) for another process's write, then raises StoreBusyError."""
        with self._thread_lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            with file_lock(self._lock_path, self.lock_wait if wait is None else wait):
                self._depth = 1
                try:
                    yield
                finally:
                    self._depth = 0

    @contextmanager
    def write_lock_if_free(self) -> Iterator[bool]:
        """The write lock if no other process holds it now (True), else nothing (False): for upkeep that
        can wait for a later call, never for a reader."""
        with ExitStack() as stack:
            try:
                stack.enter_context(self.write_lock(wait=0))
                free = True
            except StoreBusyError:
                free = False
            yield free

    def _after_write(
        self, changed: Sequence[Bullet] = (), removed: Sequence[str] = (), exact: bool = True, vectors: bool = True
    ) -> None:
        """After a commit: tell the vector index what changed (readers elsewhere reload), keep a copy of
        the manifest, compact now and then. The write is stored: nothing here may report it failed."""
        if vectors:
            try:
                self._vectors.bump(changed, removed, exact)
            except OSError as exc:  # a full disk: the next bump that succeeds makes every reader reload
                log.warning("the change counter could not be written (%s): readers catch up at the next write", exc)
        self._keep_manifest(self._bullets_name)
        if self._bullets.version % self.optimize_every == 0:
            self.optimize()

    def _keep_manifest(self, name: str) -> None:
        """Copy the table's newest manifest to ``recovery/NAME/``: with the table's ``_versions`` lost, the
        rows are still on disk but unreachable, and ``memx repair`` puts this copy back. A few KB per write."""
        folder = damage.table_dir(self.root / "lance", name) / "_versions"
        try:
            newest = min(folder.glob("*.manifest"), key=_version_order, default=None)
            if newest is None:
                return
            keep = self.root / "recovery" / name
            keep.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(keep / newest.name, newest.read_bytes())
            for old in keep.glob("*.manifest"):
                if old.name != newest.name:
                    old.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not keep a copy of the %s manifest: %s", name, exc)

    def checkpoint(self) -> None:
        """Keep copies of both tables' newest manifests now (``memx repair`` does it after a rebuild)."""
        for name in (self._bullets_name, CONFLICTS):
            self._keep_manifest(name)

    def optimize(self, erase: bool = False) -> None:
        """Compact fragments, fold new rows into the indexes and drop versions older than ten minutes
        (readers in other processes may still be on a recent one). ``erase`` drops every old version now
        (and a full-text index an earlier memx kept): what was deleted is gone from the disk
        (``forget --purge``)."""
        with self.write_lock():
            for table, name in ((self._bullets, self._bullets_name), (self._conflicts, CONFLICTS)):
                older = timedelta(0) if erase else timedelta(minutes=10)

                def compact(t: Any = table, older: timedelta = older) -> None:
                    with warnings.catch_warnings():  # erasing: readers elsewhere re-read the latest version
                        warnings.filterwarnings("ignore", "optimize.cleanup_older_than=0", UserWarning)
                        t.optimize(cleanup_older_than=older, delete_unverified=erase)

                try:
                    if erase and table is self._bullets:
                        _retry(self._ensure_indexes, "drop the full-text index")
                    _retry(compact, "optimize")
                except Exception as exc:  # compaction is upkeep: never fail a write for it
                    if erase:
                        raise
                    log.warning("compaction skipped: %s", exc)
                self._keep_manifest(name)

    # -- bullets --------------------------------------------------------------------------------------

    def add(self, bullets: Sequence[Bullet]) -> None:
        if not bullets:
            return
        with self.write_lock():
            data = bullets_table(bullets, self.dim)
            _retry(lambda: self._bullets.add(data, on_bad_vectors="null"), "add")
            self._after_write(changed=bullets)

    def upsert(self, bullets: Sequence[Bullet], vectors_changed: bool = True) -> None:
        if not bullets:
            return
        with self.write_lock():
            data = bullets_table(bullets, self.dim)
            _retry(
                lambda: (
                    self._bullets.merge_insert("id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(data, on_bad_vectors="null")
                ),  # a bullet stored while the model was away
                "upsert",
            )
            self._after_write(changed=bullets, vectors=vectors_changed)

    def delete(self, ids: Sequence[str]) -> None:
        """Erase bullets now, and the conflict records that quote them: the table's old versions and the
        full-text index still held their text, so both are rewritten before this returns."""
        if ids:
            with self.write_lock():
                _retry(lambda: self._bullets.delete(f"id IN {sql_list(ids)}"), "delete")
                quoted = f"a_id IN {sql_list(ids)} OR b_id IN {sql_list(ids)}"
                _retry(lambda: self._conflicts.delete(quoted), "delete conflicts")
                self._vectors.bump((), ids, True)
                self.optimize(erase=True)

    def get(self, ids: Sequence[str]) -> list[Bullet]:
        if not ids:
            return []
        return table_to_bullets(self._bullets.search().where(f"id IN {sql_list(ids)}").limit(len(ids) + 1).to_arrow())

    def find_content(self, content: str, scope: str) -> Bullet | None:
        found = table_to_bullets(
            self._bullets.search()
            .where(f"content = {sql_str(content)} AND scope = {sql_str(scope)} AND status = 'active'")
            .limit(1)
            .to_arrow()
        )
        return found[0] if found else None

    def _visible(self, scopes: Sequence[str]) -> str:
        return f"status = 'active' AND scope IN {sql_list(scopes)}"

    def vector_candidates(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[Bullet]:
        """For recall: candidates straight from the in-memory copy (no further query), without their
        vectors (recall takes its similarities from ``similarities``)."""
        return [b for b, _ in self.similar(vector, scopes, limit, fresh=False)]

    def adjacent(self, ids: Sequence[str], window: float) -> dict[str, list[Bullet]]:
        """For recall: the bullets written just before and after each of ``ids`` in its scope, within
        ``window`` seconds, without their vectors (from the in-memory copy)."""
        self._current_copy()
        near = self._vectors.adjacent(ids, window)
        known = self._vectors.bullets(sorted({j for js in near.values() for j in js}))
        return {i: [known[j] for j in js if j in known] for i, js in near.items()}

    def prepare_vector_search(self, scopes: Sequence[str]) -> None:
        """For recall, while its query is being embedded: the rows of ``scopes`` gathered for the vector
        search that follows in this thread (``VectorIndex.prepare``; unused after ``one_read``)."""
        self._current_copy()
        self._vectors.prepare(scopes)

    def active_in(self, scopes: Sequence[str]) -> list[Bullet]:
        """Active bullets of ``scopes`` without their vectors: from the in-memory copy, plus any stored
        while the model was away (not in the copy)."""
        self._current_copy()
        found = self._vectors.in_scopes(scopes)
        return found + self._read(f"{self._visible(scopes)} AND vector IS NULL")

    def warm(self) -> None:
        """Build the in-memory copy now rather than on the first search."""
        self._current_copy()

    def _current_copy(self) -> None:
        """Bring the in-memory copy up to date with what other processes wrote (within ``one_read``: once)."""
        pin = self._pin.__dict__
        if not pin.get("on"):
            self._vectors.refresh(self._bullets, self._columns, self.get)
        elif not pin.get("checked"):
            self._vectors.refresh(self._bullets, self._columns, self.get, self._generation() or None)
            pin["checked"] = True

    @contextmanager
    def one_read(self) -> Iterator[None]:
        """One recall's reads, in this thread, see one state of the store: the change counter is read once,
        at the first read that needs it, not at each (a recall needed five; each file read lets another
        thread take the interpreter, a few ms under load). What another process writes meanwhile is seen
        by the next recall. Nested uses are one."""
        pin = self._pin.__dict__
        if pin.get("on"):
            yield
            return
        pin.update(on=True, checked=False, generation=None)
        try:
            yield
        finally:
            pin.update(on=False, checked=False, generation=None)
            self._vectors.unprepare()

    def generation(self) -> str:
        """``ports.Generational``: the change counter every write here or in another process moves ("" while
        unknown); within ``one_read`` as first read there. The store's own reads keep using ``_generation``,
        which ``TeamStore``'s answer here ("": the use cases keep nothing by it) does not change."""
        return self._generation()

    def _generation(self) -> str:
        """The change counter (within ``one_read``: as first read there)."""
        pin = self._pin.__dict__
        if not pin.get("on"):
            return self._vectors.generation()
        if pin.get("generation") is None:
            pin["generation"] = self._vectors.generation()
        return str(pin["generation"])

    def similarities(self, ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Cosine similarity of ``vector`` to each of ``ids`` that has a vector."""
        return self._vectors.similarities(ids, vector)

    def similar(
        self, vector: Sequence[float], scopes: Sequence[str], limit: int, fresh: bool = True
    ) -> list[tuple[Bullet, float]]:
        """Active bullets of ``scopes`` nearest to ``vector``, from the in-memory vector index; ``fresh``
        reads the rows again from the table (writers need current recall counts)."""
        self._current_copy()
        found = self._vectors.search(vector, scopes, limit)
        ids = [i for i, _ in found]
        bullets = {b.id: b for b in self.get(ids)} if fresh else self._vectors.bullets(ids)
        return [(bullets[i], s) for i, s in found if i in bullets and bullets[i].status is Status.ACTIVE]

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]:
        return self.similar(vector, [scope], limit)

    def staged(self, bullets: Sequence[Bullet] = ()) -> StagedWrite:
        """A batch of curated writes held in memory until its ``commit`` (``store/staged.py``), with the rows
        that ``bullets`` will likely meet read ahead. Under ``write_lock``, held until the commit: the batch
        reads the store as it is when this is called."""
        self._current_copy()
        batch = StagedWrite(self, StagedVectors(self._vectors))
        batch.read_ahead(bullets)
        return batch

    def keyword_candidates(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[Bullet]:
        return [b for b, _ in self.keyword_search(terms, scopes, limit)]

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[Bullet, float]]:
        """BM25 matches under the scope/status filter, with their scores: from the in-memory lexical index
        (``lexical.py``; statistics over the whole store), the rows from the in-memory copy."""
        if not terms:
            return []
        self._current_copy()
        scores = dict(self._vectors.lexical_search(terms, scopes, limit))
        known = self._vectors.bullets(list(scores))
        missing = [i for i in scores if i not in known]  # bullets without a vector are not in the copy
        known.update({b.id: b for b in self.get(missing)})
        return [(known[i], score) for i, score in scores.items() if i in known]

    def set_status(self, ids: Sequence[str], status: Status, now: datetime) -> None:
        if ids:
            with self.write_lock():
                _retry(
                    lambda: self._bullets.update(
                        where=f"id IN {sql_list(ids)}", values={"status": status.value, "updated_at": now}
                    ),
                    "set_status",
                )
                # Archiving removes rows from the index exactly; restoring needs their vectors: reload.
                archived = status is Status.ARCHIVED
                self._after_write(removed=ids if archived else (), exact=archived)

    def mark_recalled(self, counts: Mapping[str, int], now: datetime) -> None:
        """One batched write: + ``counts[id]`` recalls and ``last_recalled_at = now`` for each id (read
        under the lock, so concurrent recalls from other processes are all counted)."""
        if not counts:
            return
        # Bookkeeping on a read's path: a moment's contention is waited out, a long writer is not.
        with self.write_lock(wait=min(self.lock_wait, 0.2)):
            bullets = self.get(list(counts))
            reinforced = [
                b.with_changes(recall_count=b.recall_count + counts[b.id], last_recalled_at=now) for b in bullets
            ]
            self.upsert(reinforced, vectors_changed=False)
            self._vectors.reinforce({b.id: counts[b.id] for b in bullets}, now)

    def all_bullets(self, where: Where = EVERY) -> list[Bullet]:
        return self._read(to_sql(where))

    def _read(self, sql: str | None) -> list[Bullet]:
        table = self._bullets.to_arrow() if sql is None else self._bullets.search().where(sql).limit(None).to_arrow()
        return table_to_bullets(table)

    def decay_inputs(self) -> list[tuple[datetime, int]]:
        """(created_at, recall_count) of every active bullet: what Decay needs, without the rest."""
        table = self._bullets.search().where("status = 'active'").select(["created_at", "recall_count"]).limit(None)
        data = table.to_arrow()
        return list(zip(data.column("created_at").to_pylist(), data.column("recall_count").to_pylist(), strict=True))

    def active_contents(self) -> list[str]:
        """The content of every active bullet, without the rest (no vectors: a whole store's are ~150 MB at 100k)."""
        table = self._bullets.search().where("status = 'active'").select(["content"]).limit(None).to_arrow()
        return [str(c) for c in table.column("content").to_pylist()]

    def column_counts(self, column: str) -> dict[str, int]:
        """How many rows hold each value of ``column``. Kept until the store's generation counter moves:
        every write that can change these columns (add, upsert, status, delete, rebuild) bumps it, here or in
        another process; reinforcement, which does not, writes only recall counts and times. A recall that
        names a project by its short name asks this twice (a whole-column scan: 36 ms of a 115 ms recall at
        10k bullets under load, ``benchmarks/profile_recall.py``)."""
        key = (self._bullets_name, self._generation())  # read before the scan: a write after it moves on
        kept = self._counted.get(column)
        if kept is not None and kept[0] == key:
            return dict(kept[1])
        counts = self._column_counts(column)
        if key[1]:  # no counter yet (a new store) or an unreadable one: nothing to know staleness by
            self._counted[column] = (key, dict(counts))
        return counts

    def _column_counts(self, column: str) -> dict[str, int]:
        # that one column only: the whole table (vectors too) took twice as long (benchmarks/scope_meeting.py)
        values = (
            self._bullets.search().select([column]).limit(None).to_arrow().column(column).to_pylist()
            if self.count()
            else []
        )
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        return counts

    def count(self, where: Where = EVERY) -> int:
        return int(self._bullets.count_rows(to_sql(where)))

    def verify(self) -> str:
        """ "" when every row of both tables can be read, else what could not be (for ``memx doctor``):
        reading each row's id opens every data file."""
        for name, table in ((self._bullets_name, self._bullets), (CONFLICTS, self._conflicts)):
            try:
                for _ in table.search().select(["id"]).limit(None).to_batches(8192):
                    pass
            except Exception as exc:
                cut = damage.truncated(damage.table_dir(self.root / "lance", name))
                what = f"{len(cut)} data file(s) cut short ({', '.join(p.name for p in cut[:3])})" if cut else exc
                return f"the store at {self.root} is damaged: the table {name} cannot be read whole: {what}"
        return ""

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    def replace_all(self, bullets: Sequence[Bullet], model_name: str, dim: int) -> None:
        """Write ``bullets`` (re-embedded by the caller) into a fresh table for ``model_name`` and switch
        the store to it; the old table is dropped only after the switch."""
        with self.write_lock():
            meta = self._read_meta() or {}
            old = self._bullets_name
            new = f"bullets_{int(time.time() * 1000)}"
            table = self._db.create_table(new, schema=bullet_schema(dim))
            if bullets:
                table.add(bullets_table(bullets, dim))
            meta.update(model=model_name, dim=dim, bullets_table=new)
            self._write_meta(meta)
            self.model_name, self.dim, self.vectors_model = model_name, dim, model_name
            self._bullets_name, self._bullets = new, table
            self._ensure_indexes()
            self._vectors.bump(exact=False)
            self.checkpoint()
            try:
                self._db.drop_table(old)
            except Exception as exc:
                log.warning("could not drop the old table %s: %s", old, exc)
