"""Curator and Decay upkeep on the whole store: conflict scan and resolution, gc and restore, and
JSONL export / import. Each function takes the Memory built at the composition root."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from . import curator
from .decay import decay_weight, is_archive_candidate
from .errors import InvalidInputError, NotFoundError
from .models import Bullet, Conflict, KnowledgeType, Section, Status, new_id
from .store.lance import sql_list

if TYPE_CHECKING:
    from .memory import Memory

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
        merged = None
        if keep == "a" and b is not None:
            memory.store.set_status([b.id], Status.ARCHIVED, now)
        elif keep == "b" and a is not None:
            memory.store.set_status([a.id], Status.ARCHIVED, now)
        elif keep == "merge":
            if a is None or b is None:
                raise NotFoundError("one side of the conflict no longer exists: keep the other side instead")
            merged = curator.merge(a, b, "merge_content", now)
            vectors, _ = memory.embed_texts([merged.content])
            merged = merged.with_changes(vector=vectors[0] if vectors else a.vector)
            memory.store.upsert([merged])
            memory.store.set_status([b.id], Status.ARCHIVED, now)
        memory.store.resolve_conflicts([conflict.id], f"kept {keep}")
    return conflict, merged


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


def _time(value: Any, default: datetime) -> datetime:
    if value in (None, ""):
        return default
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInputError(f"not an ISO timestamp: {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=default.tzinfo)


def record_to_bullet(memory: Memory, record: dict[str, Any], default_scope: str) -> Bullet:
    """A bullet from one JSONL record; every SPEC §3 field is optional except ``content``."""
    from .reflector import classify, extract_metadata, instructivity
    from .scopes import parse_scope

    if not isinstance(record, dict):
        raise InvalidInputError("each line must be a JSON object")
    content = memory.sanitizer.mask(str(record.get("content") or "").strip())
    if not content:
        raise InvalidInputError("a record has no content")
    now = memory.clock()
    created = _time(record.get("created_at"), now)
    cls = classify(content)
    meta = extract_metadata(content)
    confidence = float(record.get("confidence", 1.0))
    vector = record.get("vector")
    if vector is not None and len(vector) != memory.store.dim:
        vector = None  # another model's vector: re-embedded below
    return Bullet(
        id=str(record.get("id") or new_id()),
        content=content,
        section=Section(record.get("section") or cls.section),
        knowledge_type=KnowledgeType(record.get("knowledge_type") or cls.knowledge_type),
        instructivity_score=float(record.get("instructivity_score", instructivity(content, confidence).score)),
        confidence=confidence,
        source=str(record.get("source", "import")),
        scope=str(parse_scope(str(record["scope"]), memory.current_scope())) if record.get("scope") else default_scope,
        created_at=created,
        updated_at=_time(record.get("updated_at"), created),
        tools=tuple(record.get("tools") or meta.tools),
        entities=tuple(record.get("entities") or meta.entities),
        tags=tuple(record.get("tags") or meta.tags),
        last_recalled_at=_time(record["last_recalled_at"], now) if record.get("last_recalled_at") else None,
        recall_count=int(record.get("recall_count", 0)),
        status=Status(record.get("status") or "active"),
        origin=memory.sanitizer.mask(str(record.get("origin", "import")))[:500],
        vector=tuple(float(x) for x in vector) if vector is not None else None,
    )


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
) -> ImportResult:
    """Records that carry an ``id`` are restored as they are (an export round trip; an id already in the
    store is skipped, so importing twice changes nothing). Records without an id are new knowledge and go
    through the Curator like any write. Bad lines are reported with their number and skipped."""
    default_scope = str(memory.resolve_scope(scope)) if scope else str(memory.current_scope().project_scope())
    result = ImportResult()
    pending: list[Bullet] = []
    fresh: list[Bullet] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            bullet = record_to_bullet(memory, record, default_scope)
        except (ValueError, InvalidInputError, TypeError, KeyError) as exc:
            result.errors.append(f"line {number}: {exc}")
            continue
        (pending if isinstance(record, dict) and record.get("id") else fresh).append(bullet)
        if progress:
            progress(number, 0)
    _restore_batch(memory, pending, result, batch)
    for b in _embedded(memory, fresh):
        outcome = memory._curate(b, memory.clock(), ())
        if outcome.action == "merged":
            result.merged += 1
        else:
            result.inserted += 1
    return result


def _embedded(memory: Memory, bullets: list[Bullet], batch: int = 256) -> list[Bullet]:
    missing = [i for i, b in enumerate(bullets) if b.vector is None]
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        vectors, _ = memory.embed_texts([bullets[i].content for i in chunk])
        if vectors:
            for i, v in zip(chunk, vectors, strict=True):
                bullets[i] = bullets[i].with_changes(vector=v)
    return bullets


def _restore_batch(memory: Memory, bullets: list[Bullet], result: ImportResult, batch: int) -> None:
    with memory.store.write_lock():
        for start in range(0, len(bullets), batch):
            chunk = bullets[start : start + batch]
            existing = {b.id for b in memory.store.get([b.id for b in chunk])}
            new = [b for b in chunk if b.id not in existing]
            result.skipped_existing += len(chunk) - len(new)
            memory.store.add(_embedded(memory, new))
            result.restored += len(new)
