"""Curator and Decay upkeep on the whole store: conflicts (list, scan, resolve), forget, gc and restore,
statistics, reindex, and JSONL export / import. Each function receives the use cases' ``Deps``."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..domain.errors import EmbedderUnavailable, InvalidInputError, NotFoundError
from ..domain.inputs import MAX_CONTENT_CHARS, MAX_IDS, MAX_TAGS
from ..domain.models import Bullet, Conflict, ConflictView, ForgetResult, RememberResult, Stats, Status, new_id
from ..engine import curator
from ..engine.decay import decay_weight, is_archive_candidate
from ..engine.retrieval.generator import bullet_terms
from ..ports import ACTIVE, EVERY, Where
from ..text.language import mostly_cjk
from ..text.tokenize import query_terms
from .deps import Deps
from .recall import recall
from .writes import Checked, Draft, WriteHow, with_vector
from .writing import checked, write

Keep = Literal["a", "b", "both", "merge"]
Progress = Callable[[int, int], None]


# -- conflicts --------------------------------------------------------------------------------------


def list_conflicts(deps: Deps, scope: str | None = None, include_overlaps: bool = False) -> list[ConflictView]:
    """Open conflicts in the visible scopes whose two bullets are both still active, contradictions
    first, then by similarity."""
    found = deps.store.conflicts(deps.workspace.resolve(scope).visible())
    if not include_overlaps:
        found = [c for c in found if c.kind == "contradiction"]
    ids = sorted({i for c in found for i in (c.a_id, c.b_id)})
    bullets = {b.id: b for b in deps.store.get(ids) if b.status is Status.ACTIVE}
    views = []
    for c in found:
        a, b = bullets.get(c.a_id), bullets.get(c.b_id)
        if a is None or b is None:
            continue
        side, reason = curator.recommend(a, b)
        views.append(ConflictView(conflict=c, a=a, b=b, recommended=side, reason=reason))
    views.sort(key=lambda v: (v.conflict.kind != "contradiction", -v.conflict.similarity))
    return views


def conflict_counts(deps: Deps) -> dict[str, int]:
    """Open conflicts between two active bullets, in every scope, by kind: what the page's Conflicts tab
    shows with "all scopes" and "both" (a record whose bullet was archived or merged away is not one)."""
    scopes = sorted(deps.store.column_counts("scope"))
    found = deps.store.conflicts(scopes) if scopes else []
    ids = sorted({i for c in found for i in (c.a_id, c.b_id)})
    live = {b.id for b in deps.store.get(ids) if b.status is Status.ACTIVE}
    counts = {"contradiction": 0, "overlap": 0}
    for c in found:
        if c.a_id in live and c.b_id in live:
            counts[c.kind] = counts.get(c.kind, 0) + 1
    return counts


def scan_conflicts(
    deps: Deps, scope: str | None = None, block: int = 1024, progress: Progress | None = None
) -> list[Conflict]:
    """Re-examine every active bullet of the visible scopes: pairs in the same scope at ≥ the conflict
    threshold that carry contradiction evidence (or are near-duplicates left unmerged) are recorded once."""
    scopes = deps.workspace.resolve(scope).visible()
    bullets = deps.store.all_bullets(Where(status=Status.ACTIVE, scopes=scopes, with_vector=True))
    known = deps.store.conflict_pairs()
    latin, cjk = deps.curator, deps.curator_cjk
    lowest = min(latin.conflict_threshold, cjk.conflict_threshold)
    found: list[Conflict] = []
    now = deps.clock()
    by_scope: dict[str, list[Bullet]] = defaultdict(list)
    for b in bullets:
        by_scope[b.scope].append(b)
    done = 0
    for scope_name, group in by_scope.items():
        vectors = np.asarray([b.vector for b in group], dtype=np.float32)
        for start in range(0, len(group), block):
            if progress:
                progress(done + start, len(bullets))
            sims = vectors[start : start + block] @ vectors.T
            rows, cols = np.nonzero(sims >= lowest)
            for i, j in zip(rows + start, cols, strict=True):
                if j <= i or frozenset((group[i].id, group[j].id)) in known:
                    continue
                a, b = sorted((group[i], group[j]), key=lambda x: (x.created_at, x.id))
                # as on the write path: the thresholds of the newer bullet's script (the one written second)
                params = cjk if mostly_cjk(b.content) else latin
                similarity = float(sims[i - start, j])
                if similarity < params.conflict_threshold:
                    continue
                evidence = curator.contradiction_evidence(a.content, b.content)
                if not evidence and not curator.is_duplicate(a.content, b.content, similarity, params):
                    continue  # a mere overlap is recorded on write, not by a scan
                kind: Literal["contradiction", "overlap"] = "contradiction" if evidence else "overlap"
                found.append(
                    Conflict("c_" + new_id()[2:], a.id, b.id, round(similarity, 4), kind, evidence, scope_name, now)
                )
                known.add(frozenset((a.id, b.id)))
        done += len(group)
    if progress:
        progress(len(bullets), len(bullets))
    deps.store.add_conflicts(found)
    return found


def resolve_conflict(deps: Deps, conflict_id: str, keep: Keep) -> tuple[Conflict, Bullet | None]:
    """``a`` / ``b``: archive the other side; ``both``: keep both; ``merge``: combine both into a (content
    merge) and archive b. Returns the conflict and the surviving merged bullet, if any."""
    if keep not in ("a", "b", "both", "merge"):
        raise InvalidInputError("keep must be a, b, both or merge")
    with deps.store.write_lock():
        conflict = deps.store.get_conflict(conflict_id)
        if conflict is None:
            raise NotFoundError(f"no conflict with id {conflict_id}")
        if conflict.status != "open":
            raise InvalidInputError(f"conflict {conflict_id} is already resolved ({conflict.resolution})")
        sides = {b.id: b for b in deps.store.get([conflict.a_id, conflict.b_id])}
        a, b = sides.get(conflict.a_id), sides.get(conflict.b_id)
        now = deps.clock()
        merged: RememberResult | None = None
        if keep == "a" and b is not None:
            deps.store.set_status([b.id], Status.ARCHIVED, now)
        elif keep == "b" and a is not None:
            deps.store.set_status([a.id], Status.ARCHIVED, now)
        elif keep == "merge":
            if a is None or b is None:
                raise NotFoundError("one side of the conflict no longer exists: keep the other side instead")
            both = curator.merge(a, b, "merge_content", now)
            draft = Draft.of(both, content=both.content[:MAX_CONTENT_CHARS], tags=both.tags[:MAX_TAGS], vector=None)
            merged = write(deps, [checked(deps, draft)], how="replace")[0]
            deps.store.set_status([b.id], Status.ARCHIVED, now)
        deps.store.resolve_conflicts([conflict.id], f"kept {keep}")
    return conflict, merged.bullet if merged else None


# -- forget, decay upkeep -----------------------------------------------------------------------------


def forget(deps: Deps, ids: Sequence[str], *, purge: bool = False) -> ForgetResult:
    """Archive (or, with ``purge``, erase) bullets by id. Unknown ids are reported, not fatal."""
    wanted = list(dict.fromkeys(i.strip() for i in ids if i and i.strip()))
    if not wanted:
        raise InvalidInputError("no ids given")
    if len(wanted) > MAX_IDS:
        raise InvalidInputError(f"{len(wanted)} ids; at most {MAX_IDS} at once")
    with deps.store.write_lock():
        got = deps.store.get(wanted)
        found = {b.id for b in got}
        known = [i for i in wanted if i in found]
        # a learned bullet waiting for review is erased, never archived: restore would make it active unreviewed
        waiting = [b.id for b in got if b.status is Status.PENDING]
        if purge or waiting:
            deps.store.delete(known if purge else waiting)
            deps.store.drop_review_notes(waiting)
        if not purge:
            deps.store.set_status([i for i in known if i not in waiting], Status.ARCHIVED, deps.clock())
    missing = tuple(i for i in wanted if i not in found)
    if not known:
        raise NotFoundError(f"no bullet with id {', '.join(missing)}")
    archived = () if purge else tuple(i for i in known if i not in waiting)
    purged = tuple(known) if purge else tuple(i for i in known if i in waiting)
    return ForgetResult(archived=archived, purged=purged, not_found=missing)


def forget_matching(
    deps: Deps, query: str, *, scope: str | None = None, confirm: bool = False, purge: bool = False
) -> ForgetResult:
    """Forget (archive, or with ``purge`` erase) what ``recall`` returns for ``query`` that also says one of
    the query's meaningful words itself; without ``confirm`` nothing changes and the ids that would be
    forgotten come back in ``would_forget``."""
    result = recall(deps, query, scope=scope, reinforce=False)
    # only what the query names in the bullet's own words: never what a common word, a neighbour's words
    # (the context a recall searches) or a vague likeness alone brought back
    wanted = set(query_terms(query))
    ids = tuple(h.bullet.id for h in result.hits if wanted & bullet_terms(h.bullet))
    if not confirm or not ids:
        return ForgetResult(archived=(), purged=(), not_found=(), would_forget=ids)
    return forget(deps, ids, purge=purge)


@dataclass
class GcResult:
    archived: list[str] = field(default_factory=list)
    purged: list[str] = field(default_factory=list)
    active_left: int = 0
    dry_run: bool = False


def gc(deps: Deps, *, dry_run: bool = False, purge: bool = False) -> GcResult:
    """Archive active bullets whose decay weight fell below ``archive_below``; with ``purge``, erase the
    archived ones (and only those)."""
    now = deps.clock()
    result = GcResult(dry_run=dry_run)
    with deps.store.write_lock():
        active = deps.store.all_bullets(ACTIVE)
        for b in active:
            weight = decay_weight(b.created_at, b.recall_count, now, deps.decay)
            if is_archive_candidate(weight, deps.decay):
                result.archived.append(b.id)
        result.active_left = len(active) - len(result.archived)
        if purge:
            already = [b.id for b in deps.store.all_bullets(Where(status=Status.ARCHIVED))]
            result.purged = already + result.archived
        if not dry_run:
            deps.store.set_status(result.archived, Status.ARCHIVED, now)
            deps.store.delete(result.purged)
    return result


def restore(deps: Deps, ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """Bring archived bullets back into recall. Returns (restored, not found)."""
    wanted = [i.strip() for i in ids if i.strip()]
    if not wanted:
        raise InvalidInputError("no ids given")
    with deps.store.write_lock():
        got = deps.store.get(wanted)
        found = {b.id: b for b in got if b.status is not Status.PENDING}  # review decides those (`memx review`)
        restored = [i for i in wanted if i in found]
        # Restored knowledge starts a new life: without a fresh clock it would fall straight back to gc.
        now = deps.clock()
        deps.store.upsert(
            [found[i].with_changes(status=Status.ACTIVE, created_at=now, updated_at=now) for i in restored]
        )
    missing = [i for i in wanted if i not in found]
    if not restored:
        raise NotFoundError(f"no bullet with id {', '.join(missing)}")
    return restored, missing


# -- statistics and reindex -----------------------------------------------------------------------------


def stats(deps: Deps) -> Stats:
    store = deps.store
    statuses = store.column_counts("status")
    counts = conflict_counts(deps)
    return Stats(
        total=sum(statuses.values()),
        active=statuses.get("active", 0),
        archived=statuses.get("archived", 0),
        by_scope=store.column_counts("scope"),
        by_section=store.column_counts("section"),
        by_type=store.column_counts("knowledge_type"),
        open_conflicts=sum(counts.values()),
        open_contradictions=counts["contradiction"],
        open_overlaps=counts["overlap"],
        model=deps.settings.model_name,
        model_note=deps.embedder.note,
        home=str(deps.settings.home),
        store_bytes=store.size_bytes(),
    )


def reindex(deps: Deps, progress: Progress | None = None) -> int:
    """Re-embed every bullet with the configured model into a fresh table."""
    embedder = deps.embedder.get(max(60.0, deps.settings.model_wait_seconds))
    if embedder is None:
        raise EmbedderUnavailable(f"cannot reindex: {deps.embedder.note}")
    with deps.store.write_lock():
        bullets = deps.store.all_bullets()
        done: list[Bullet] = []
        for start in range(0, len(bullets), 64):
            batch = bullets[start : start + 64]
            vectors = embedder.embed_passages([b.content for b in batch])
            done.extend(b.with_changes(vector=v) for b, v in zip(batch, vectors, strict=True))
            if progress:
                progress(len(done), len(bullets))
        deps.store.replace_all(done, embedder.name, embedder.dim)
    return len(done)


# -- export / import --------------------------------------------------------------------------------


def bullet_record(b: Bullet, vectors: bool = False) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": b.id,
        "content": b.content,
        "section": b.section.value,
        "knowledge_type": b.knowledge_type.value,
        "instructivity_score": b.instructivity_score,
        "confidence": b.confidence,
        "source": b.source,
        "tools": list(b.tools),
        "entities": list(b.entities),
        "tags": list(b.tags),
        "scope": b.scope,
        "created_at": b.created_at.isoformat(),
        "updated_at": b.updated_at.isoformat(),
        "last_recalled_at": b.last_recalled_at.isoformat() if b.last_recalled_at else None,
        "recall_count": b.recall_count,
        "status": b.status.value,
        "origin": b.origin,
    }
    if vectors and b.vector is not None:
        record["vector"] = [round(x, 7) for x in b.vector]
    return record


def export(deps: Deps, *, vectors: bool = False, include_archived: bool = True) -> Iterator[dict[str, Any]]:
    where = EVERY if include_archived else ACTIVE
    for b in sorted(deps.store.all_bullets(where), key=lambda b: (b.created_at, b.id)):
        record = bullet_record(b, vectors)
        if "vector" in record:  # which space the numbers are in: an import elsewhere keeps them only if it matches
            record["vector_model"] = deps.store.vectors_model
        yield record


def record_draft(record: object) -> Draft:
    """A draft from one JSONL record; every SPEC §3 field is optional except ``content``. The checks are the
    write path's (``writes.check``), the same as for ``remember``."""
    if not isinstance(record, dict):
        raise InvalidInputError("each line must be a JSON object")
    if record.get("content") is None:
        raise InvalidInputError("the record has no content")
    return Draft(
        content=record["content"],
        scope=record.get("scope") or None,
        source=record.get("source") or "import",
        confidence=record.get("confidence", 1.0),
        origin=record.get("origin", "import"),
        tags=record.get("tags"),
        extra_tags=False,
        tools=record.get("tools"),
        entities=record.get("entities"),
        section=record.get("section") or None,
        knowledge_type=record.get("knowledge_type") or None,
        instructivity_score=record.get("instructivity_score"),
        id=record.get("id"),
        created_at=record.get("created_at"),
        updated_at=record.get("updated_at"),
        last_recalled_at=record.get("last_recalled_at"),
        recall_count=record.get("recall_count", 0),
        status=record.get("status") or None,
        vector=record.get("vector"),
    )


def _parse(line: str) -> object:
    try:
        return json.loads(line)
    except RecursionError as exc:
        raise InvalidInputError("nested too deeply to be a record") from exc
    except ValueError as exc:
        raise InvalidInputError(f"not JSON ({exc})") from exc


def _foreign_vector(record: object, model: str) -> bool:
    """A record carrying a vector that another model made, or that does not say which model: vectors of
    two models of the same size compare as noise, so such a vector is never stored beside this store's."""
    return isinstance(record, dict) and record.get("vector") is not None and record.get("vector_model") != model


@dataclass
class ImportResult:
    inserted: int = 0
    merged: int = 0
    restored: int = 0
    skipped_existing: int = 0
    errors: list[str] = field(default_factory=list)
    reembedded: int = 0  # records whose vectors came from another model (or an unnamed one): embedded here


def import_records(
    deps: Deps,
    lines: Iterable[str],
    *,
    scope: str | None = None,
    batch: int = 256,
    progress: Progress | None = None,
    one_by_one: bool = False,
) -> ImportResult:
    """Records that carry an ``id`` are restored as they are (an export round trip; an id already in the
    store is skipped, so importing twice changes nothing). Records without an id are new knowledge and go
    through the Curator like any write, in file order: each batch is embedded in one call (while the batch
    before it is curated) and curated against the store and the records before it, then stored in one
    commit under the store's write lock (``one_by_one``: each record stored as it is decided, the same
    decisions, slower). A bad record is reported with its line number and the reason, and the others are
    imported. ``progress`` gets the lines done and the lines in all (0 when ``lines`` has no length)
    after each batch."""
    default = deps.workspace.resolve(scope) if scope else deps.workspace.current().project_scope()
    total = len(lines) if isinstance(lines, Sized) else 0
    result = ImportResult()
    restored: list[Checked] = []
    fresh: list[Checked] = []
    how: WriteHow = "curate_each" if one_by_one else "curate"
    number = 0
    ahead: _Batch | None = None  # embedded on the model's thread while this thread curates the one before
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = _parse(line)
            draft = record_draft(record)
            ready = checked(deps, draft, default)  # a bad vector is refused whatever model made it
            if ready.bullet.vector is not None and _foreign_vector(record, deps.store.vectors_model):
                ready = Checked(ready.bullet.with_changes(vector=None))
                result.reembedded += 1
            (restored if draft.id not in (None, "") else fresh).append(ready)
        except InvalidInputError as exc:
            result.errors.append(f"line {number}: {exc}")
        if len(restored) + len(fresh) >= batch:
            ahead = _next(deps, ahead, _Batch.embedding(deps, restored, fresh, number), result, how, progress, total)
            restored, fresh = [], []
    last = _next(deps, ahead, _Batch.embedding(deps, restored, fresh, number), result, how, progress, total)
    last.write(deps, result, how)
    if progress:
        progress(number, total or number)
    return result


def _next(
    deps: Deps,
    ahead: _Batch | None,
    following: _Batch,
    result: ImportResult,
    how: WriteHow,
    progress: Progress | None,
    total: int,
) -> _Batch:
    """Write the batch ahead while the model embeds the one that follows it (already handed over, so the
    model never waits for the Curator); the following batch is the next one ahead."""
    if ahead is not None:
        ahead.write(deps, result, how)
        if progress:
            progress(ahead.lines, total)
    return following


@dataclass
class _Batch:
    """One batch of an import, its texts handed to the model's thread as soon as it is read: the records
    are embedded while the batch before them is curated (each list in the one call ``write`` would make,
    so the vectors, and every decision, are the same)."""

    restored: list[Checked]
    fresh: list[Checked]
    lines: int
    vectors: tuple[Future[tuple[list[tuple[float, ...]] | None, str]] | None, ...]

    @classmethod
    def embedding(cls, deps: Deps, restored: list[Checked], fresh: list[Checked], lines: int) -> _Batch:
        def ahead(items: list[Checked]) -> Future[tuple[list[tuple[float, ...]] | None, str]] | None:
            texts = [c.bullet.content for c in items if c.bullet.vector is None]
            return deps.embedding_pool().submit(deps.embed_texts, texts) if texts else None

        return cls(restored, fresh, lines, (ahead(restored), ahead(fresh)))

    def write(self, deps: Deps, result: ImportResult, how: WriteHow) -> None:
        restored, fresh = (
            _with_vectors(items, f) for items, f in zip((self.restored, self.fresh), self.vectors, strict=True)
        )
        if restored:
            done = write(deps, restored, how="restore")
            result.restored += sum(1 for d in done if d)
            result.skipped_existing += sum(1 for d in done if d is None)
        if fresh:
            for outcome in write(deps, fresh, how=how):
                if outcome and outcome.action == "merged":
                    result.merged += 1
                else:
                    result.inserted += 1


def _with_vectors(
    items: list[Checked], pending: Future[tuple[list[tuple[float, ...]] | None, str]] | None
) -> list[Checked]:
    """The batch with the vectors made ahead; as it was when there are none (``write`` embeds it then,
    and says why it could not)."""
    vectors = pending.result()[0] if pending is not None else None
    if not vectors:
        return items
    made = iter(vectors)
    return [with_vector(c, next(made)) if c.bullet.vector is None else c for c in items]
