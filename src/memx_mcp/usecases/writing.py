"""The one write path: what a door sends is checked and masked (``writes.check``), embedded, and stored
under the store's write lock, through the Curator (insert, merge, conflicts) or as it is (restore,
replace). Every use case that stores a bullet comes through here."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from ..domain.errors import InvalidInputError
from ..domain.inputs import MAX_CONTENT_CHARS
from ..domain.models import (
    Bullet,
    Conflict,
    KnowledgeType,
    RememberAction,
    RememberResult,
    Section,
    Status,
    new_id,
)
from ..domain.scopes import Scope
from ..domain.tags import CONFIRMED
from ..engine import curator
from ..ports import WriteTarget
from ..text.language import mostly_cjk
from .deps import Deps
from .writes import Checked, Draft, WriteHow, check

log = logging.getLogger(__name__)


def checked(deps: Deps, draft: Draft, scope: Scope | None = None) -> Checked:
    """Validate, clean and mask what a door sends; ``scope``: the default scope (the current project's)."""
    target = scope or deps.workspace.current().project_scope()
    return check(draft, sanitizer=deps.sanitizer, dim=deps.store.dim, now=deps.clock(), scope=target)


def remember(
    deps: Deps,
    text: str,
    *,
    scope: str | None = None,
    tags: Sequence[str] = (),
    source: str = "manual",
    confidence: float = 1.0,
    origin: str = "",
    section: Section | None = None,
    knowledge_type: KnowledgeType | None = None,
) -> RememberResult:
    """Sanitize, classify and score one bullet, then let the Curator insert or merge it. An explicit
    remember is stored whatever its score. New bullets go to the project scope unless told."""
    ws = deps.workspace
    target = ws.resolve(scope) if scope and scope.strip() else ws.current().project_scope()
    draft = Draft(text, None, source, confidence, origin, tags, section=section, knowledge_type=knowledge_type)
    done = next(r for r in write(deps, [checked(deps, draft, target)]) if r)
    return dataclasses.replace(done, scope_why=ws.reason(scope, writing=True))


def write(
    deps: Deps, bullets_in: Sequence[Checked], *, how: WriteHow = "curate", then: Callable[[], None] | None = None
) -> list[RememberResult | None]:
    """Store checked bullets under the store's write lock, embedded first (outside it, in one call) when
    they carry no vector: ``curate`` through the Curator (insert, merge, conflicts), in order, each
    against the store and the bullets written before it; ``restore`` as they are unless their id is
    already stored (None for those); ``replace`` over the stored bullet of the same id. ``then`` runs
    under the same lock, after the writes (a reflect records its progress).

    Several bullets with vectors are curated against a batch staged in memory and stored in one commit
    (``adapters/lance/staged.py``), with the same decisions as one write each; ``curate_each`` stores each
    as it is decided (the way before batching, kept as the reference the batch is tested against)."""
    store = deps.store
    bullets = [c.bullet for c in bullets_in]
    missing = [i for i, b in enumerate(bullets) if b.vector is None]
    vectors, note = deps.embed_texts([bullets[i].content for i in missing]) if missing else (None, "")
    notes = (note,) if note else ()
    if missing:
        for i, v in zip(missing, vectors or (), strict=False):
            bullets[i] = bullets[i].with_changes(vector=v)
    with store.write_lock():
        if how in ("curate", "curate_each"):
            done: list[RememberResult | None] = list(_curate_all(deps, bullets, notes, how == "curate"))
        elif how == "replace":
            store.upsert(bullets)
            done = [RememberResult("inserted", b, notes=notes) for b in bullets]
        else:
            stored = {b.id for b in store.get([b.id for b in bullets])}
            first = {b.id: i for i, b in reversed(list(enumerate(bullets))) if b.id not in stored}
            store.add([bullets[i] for i in sorted(first.values())])
            done = [RememberResult("inserted", b) if first.get(b.id) == i else None for i, b in enumerate(bullets)]
        if then is not None:
            then()
    return done


def _curate_all(deps: Deps, bullets: Sequence[Bullet], notes: tuple[str, ...], batch: bool) -> list[RememberResult]:
    """Under the write lock. A batch needs every vector: keyword-only duplicates are found by a query
    on the table, one write at a time."""
    if not (batch and len(bullets) > 1 and all(b.vector is not None for b in bullets)):
        return [curate(deps, b, deps.clock(), notes, deps.store) for b in bullets]
    staged = deps.store.staged(bullets)
    done = [curate(deps, b, deps.clock(), notes, staged) for b in bullets]
    failed = staged.commit()
    if not failed:
        return done
    log.warning("conflict records not written: %s", failed)
    lost = "stored, but its {} conflict record(s) could not be written: " + failed
    return [
        replace(r, action="inserted", conflicts=(), notes=(*r.notes, lost.format(len(r.conflicts))))
        if r.conflicts
        else r
        for r in done
    ]


def _neighbours(bullet: Bullet, target: WriteTarget) -> list[curator.Neighbour]:
    if bullet.vector is not None:
        return [curator.Neighbour(b, s) for b, s in target.neighbours(bullet.vector, bullet.scope, 10)]
    same = target.find_content(bullet.content, bullet.scope)  # keyword-only: exact duplicates
    return [curator.Neighbour(same, 1.0)] if same else []


def curate(deps: Deps, bullet: Bullet, now: datetime, notes: tuple[str, ...], target: WriteTarget) -> RememberResult:
    """One bullet through the Curator against ``target`` (the store, or a staged batch): merged into its
    near-duplicate, or added with the conflicts it raises. A bullet waiting for review is added as it is:
    never merged into an active bullet, and no contradiction of one (it is curated when it is approved)."""
    if bullet.status is Status.PENDING:
        target.add([bullet])
        return RememberResult("inserted", bullet, notes=notes)
    params = deps.curator_cjk if mostly_cjk(bullet.content) else deps.curator
    decision = curator.decide(bullet.content, _neighbours(bullet, target), params)
    if decision.action == "merge" and decision.target is not None:
        merged = curator.merge(decision.target, bullet, deps.curator.strategy, now)
        merged = merged.with_changes(content=merged.content[:MAX_CONTENT_CHARS])
        if merged.content != decision.target.content:  # a person confirmed the old words, not these
            merged = merged.with_changes(tags=tuple(t for t in merged.tags if t != CONFIRMED))
        if merged.vector is None:  # merge_content wrote new text: an LLM may write it better
            merged = _llm_merged(deps, merged, decision.target, bullet)
            vectors, _ = deps.embed_texts([merged.content])
            merged = merged.with_changes(vector=vectors[0] if vectors else decision.target.vector)
        target.upsert([merged])
        return RememberResult("merged", merged, merged.id, decision.similarity, notes=notes)
    target.add([bullet])
    conflicts = tuple(
        Conflict(
            id="c_" + new_id()[2:],
            a_id=c.other.id,
            b_id=bullet.id,
            similarity=round(c.similarity, 4),
            kind=c.kind,
            evidence=c.evidence,
            scope=bullet.scope,
            created_at=now,
        )
        for c in decision.conflicts
    )
    try:
        target.add_conflicts(conflicts)
    except Exception as exc:  # the bullet is stored: say so, and say precisely what was not
        log.warning("conflict records not written: %s", exc)
        notes = (*notes, f"stored, but its {len(conflicts)} conflict record(s) could not be written: {exc}")
        conflicts = ()
    action: RememberAction = "inserted_with_conflict" if conflicts else "inserted"
    return RememberResult(action=action, bullet=bullet, conflicts=conflicts, notes=notes)


def _llm_merged(deps: Deps, merged: Bullet, existing: Bullet, new: Bullet) -> Bullet:
    """With ``merge_content``, outside rules mode and with a key, the LLM writes the merged bullet;
    any failure keeps the deterministic merge."""
    settings = deps.settings
    from ..engine.reflector.readings import registry

    if not registry.mode(settings.reflector_mode).needs_model:
        return merged
    # This runs under the store's write lock: keep the wait short so other writers are not held up.
    refiner, _ = deps.refiners(settings.llm_model, settings.llm_base_url, min(settings.llm_timeout, 5.0), "merge")
    if refiner is None:
        return merged
    kept, other = (new, existing) if merged.content.startswith(new.content.strip()) else (existing, new)
    text = refiner.merge(deps.sanitizer.mask(kept.content), deps.sanitizer.mask(other.content))
    try:  # the LLM's text is a door too: the same checks as any content
        return merged.with_changes(content=checked(deps, Draft(text or "")).bullet.content)
    except InvalidInputError:
        return merged
