"""Curator and Decay upkeep on the whole store: conflict scan and resolution, gc and restore, and
JSONL export / import. Each function takes the Memory built at the composition root."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..adapters.lance.lance import sql_list
from ..domain.errors import InvalidInputError, NotFoundError
from ..domain.inputs import MAX_CONTENT_CHARS
from ..domain.models import Bullet, Conflict, RememberResult, Status, new_id
from ..engine import curator
from ..engine.decay import decay_weight, is_archive_candidate
from .writes import MAX_TAGS, Checked, Draft, WriteHow

if TYPE_CHECKING:
    from ..memory import Memory

Keep = Literal["a", "b", "both", "merge"]
Progress = Callable[[int, int], None]


# -- conflicts --------------------------------------------------------------------------------------


def scan_conflicts(
    memory: Memory, scope: str | None = None, block: int = 1024, progress: Progress | None = None
) -> list[Conflict]:
    """Re-examine every active bullet of the visible scopes: pairs in the same scope at ≥ the conflict
    threshold that carry contradiction evidence (or are near-duplicates left unmerged) are recorded once."""
    scopes = memory.resolve_scope(scope).visible()
    bullets = memory.store.all_bullets(f"status = 'active' AND scope IN {sql_list(scopes)} AND vector IS NOT NULL")
    known = memory.store.conflict_pairs()
    params = memory.curator_params
    found: list[Conflict] = []
    now = memory.clock()
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
            rows, cols = np.nonzero(sims >= params.conflict_threshold)
            for i, j in zip(rows + start, cols, strict=True):
                if j <= i or frozenset((group[i].id, group[j].id)) in known:
                    continue
                a, b = group[i], group[j]
                evidence = curator.contradiction_evidence(a.content, b.content)
                similarity = float(sims[i - start, j])
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
    memory.store.add_conflicts(found)
    return found


def resolve_conflict(memory: Memory, conflict_id: str, keep: Keep) -> tuple[Conflict, Bullet | None]:
    """``a`` / ``b``: archive the other side; ``both``: keep both; ``merge``: combine both into a (content
    merge) and archive b. Returns the conflict and the surviving merged bullet, if any."""
    if keep not in ("a", "b", "both", "merge"):
        raise InvalidInputError("keep must be a, b, both or merge")
    with memory.store.write_lock():
        conflict = memory.store.get_conflict(conflict_id)
        if conflict is None:
            raise NotFoundError(f"no conflict with id {conflict_id}")
        if conflict.status != "open":
            raise InvalidInputError(f"conflict {conflict_id} is already resolved ({conflict.resolution})")
        sides = {b.id: b for b in memory.store.get([conflict.a_id, conflict.b_id])}
        a, b = sides.get(conflict.a_id), sides.get(conflict.b_id)
        now = memory.clock()
        merged: RememberResult | None = None
        if keep == "a" and b is not None:
            memory.store.set_status([b.id], Status.ARCHIVED, now)
        elif keep == "b" and a is not None:
            memory.store.set_status([a.id], Status.ARCHIVED, now)
        elif keep == "merge":
            if a is None or b is None:
                raise NotFoundError("one side of the conflict no longer exists: keep the other side instead")
            both = curator.merge(a, b, "merge_content", now)
            draft = Draft.of(both, content=both.content[:MAX_CONTENT_CHARS], tags=both.tags[:MAX_TAGS], vector=None)
            merged = memory.write([memory.check(draft)], how="replace")[0]
            memory.store.set_status([b.id], Status.ARCHIVED, now)
        memory.store.resolve_conflicts([conflict.id], f"kept {keep}")
    return conflict, merged.bullet if merged else None


# -- decay upkeep -----------------------------------------------------------------------------------


@dataclass
class GcResult:
    archived: list[str] = field(default_factory=list)
    purged: list[str] = field(default_factory=list)
    active_left: int = 0
    dry_run: bool = False


def gc(memory: Memory, *, dry_run: bool = False, purge: bool = False) -> GcResult:
    """Archive active bullets whose decay weight fell below ``archive_below``; with ``purge``, erase the
    archived ones (and only those)."""
    now = memory.clock()
    result = GcResult(dry_run=dry_run)
    with memory.store.write_lock():
        active = memory.store.all_bullets("status = 'active'")
        for b in active:
            weight = decay_weight(b.created_at, b.recall_count, now, memory.decay_params)
            if is_archive_candidate(weight, memory.decay_params):
                result.archived.append(b.id)
        result.active_left = len(active) - len(result.archived)
        if purge:
            already = [b.id for b in memory.store.all_bullets("status = 'archived'")]
            result.purged = already + result.archived
        if not dry_run:
            memory.store.set_status(result.archived, Status.ARCHIVED, now)
            memory.store.delete(result.purged)
    return result


def restore(memory: Memory, ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """Bring archived bullets back into recall. Returns (restored, not found)."""
    wanted = [i.strip() for i in ids if i.strip()]
    if not wanted:
        raise InvalidInputError("no ids given")
    with memory.store.write_lock():
        found = {b.id: b for b in memory.store.get(wanted)}
        restored = [i for i in wanted if i in found]
        # Restored knowledge starts a new life: without a fresh clock it would fall straight back to gc.
        now = memory.clock()
        memory.store.upsert(
            [found[i].with_changes(status=Status.ACTIVE, created_at=now, updated_at=now) for i in restored]
        )
    missing = [i for i in wanted if i not in found]
    if not restored:
        raise NotFoundError(f"no bullet with id {', '.join(missing)}")
    return restored, missing


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


def export(memory: Memory, *, vectors: bool = False, include_archived: bool = True) -> Iterator[dict[str, Any]]:
    where = None if include_archived else "status = 'active'"
    for b in sorted(memory.store.all_bullets(where), key=lambda b: (b.created_at, b.id)):
        yield bullet_record(b, vectors)


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


@dataclass
class ImportResult:
    inserted: int = 0
    merged: int = 0
    restored: int = 0
    skipped_existing: int = 0
    errors: list[str] = field(default_factory=list)


def import_records(
    memory: Memory,
    lines: Iterable[str],
    *,
    scope: str | None = None,
    batch: int = 256,
    progress: Progress | None = None,
    one_by_one: bool = False,
) -> ImportResult:
    """Records that carry an ``id`` are restored as they are (an export round trip; an id already in the
    store is skipped, so importing twice changes nothing). Records without an id are new knowledge and go
    through the Curator like any write, in file order: each batch is embedded in one call and curated
    against the store and the records before it, then stored in one commit under the store's write lock
    (``one_by_one``: each record stored as it is decided, the same decisions, slower). A bad record is
    reported with its line number and the reason, and the others are imported. ``progress`` gets the
    lines done and the lines in all (0 when ``lines`` has no length) after each batch."""
    default = memory.resolve_scope(scope) if scope else memory.current_scope().project_scope()
    total = len(lines) if isinstance(lines, Sized) else 0
    result = ImportResult()
    restored: list[Checked] = []
    fresh: list[Checked] = []
    how: WriteHow = "curate_each" if one_by_one else "curate"
    number = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            draft = record_draft(_parse(line))
            (restored if draft.id not in (None, "") else fresh).append(memory.check(draft, default))
        except InvalidInputError as exc:
            result.errors.append(f"line {number}: {exc}")
        if len(restored) + len(fresh) >= batch:
            _write(memory, restored, fresh, result, how)
            if progress:
                progress(number, total)
    _write(memory, restored, fresh, result, how)
    if progress:
        progress(number, total or number)
    return result


def _write(memory: Memory, restored: list[Checked], fresh: list[Checked], result: ImportResult, how: WriteHow) -> None:
    if restored:
        done = memory.write(restored, how="restore")
        result.restored += sum(1 for d in done if d)
        result.skipped_existing += sum(1 for d in done if d is None)
    if fresh:
        for outcome in memory.write(fresh, how=how):
            if outcome and outcome.action == "merged":
                result.merged += 1
            else:
                result.inserted += 1
    restored.clear()
    fresh.clear()
