"""Review: the learned bullets that wait for the user (``Status.PENDING``, see ``domain/review.py``), and
the three answers to one: approve it (curated then, like a new bullet: merged into a near-duplicate or
stored with the contradictions it raises), edit and approve it (the edit passes the same checks as
``memx edit``), or reject it (erased with its note). The CLI, the MCP tool and the page all come here."""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.errors import InvalidInputError, NotFoundError
from ..domain.inputs import clean_text
from ..domain.models import Bullet, RememberResult, Status
from ..domain.review import Pending, ReviewNote
from ..ports import Where
from .deps import Deps
from .writes import Draft, with_vector
from .writing import checked, write

MAX_PENDING = 1000


def pending(deps: Deps, *, scope: str | None = None, limit: int = 200) -> list[Pending]:
    """The bullets waiting for review, oldest first (the order they were learned in), of every scope or of
    those visible from ``scope``, each with its note."""
    where = Where(status=Status.PENDING, scopes=deps.workspace.resolve(scope).visible() if scope else None)
    bullets = sorted(deps.store.all_bullets(where), key=lambda b: (b.created_at, b.id))
    bullets = bullets[: max(1, min(limit, MAX_PENDING))]
    notes = deps.store.review_notes([b.id for b in bullets])
    return [Pending(b, notes.get(b.id, ReviewNote())) for b in bullets]


def waiting(deps: Deps, scopes: tuple[str, ...] | None = None) -> int:
    """How many bullets wait for review (of ``scopes`` when given)."""
    return deps.store.count(Where(status=Status.PENDING, scopes=scopes))


def _pending_one(deps: Deps, bullet_id: str) -> Bullet:
    wanted = clean_text(bullet_id, "id", 100).strip()
    found = [b for b in deps.store.get([wanted]) if b.status is Status.PENDING]
    if not found:
        raise NotFoundError(f"no bullet {wanted!r} waits for review (`memx review` lists those that do)")
    return found[0]


@dataclass(frozen=True)
class Approved:
    """What approving did: the bullet as stored (or the active one it merged into) and the Curator's word."""

    result: RememberResult
    edited: bool


def approve(deps: Deps, bullet_id: str, *, content: str | None = None) -> Approved:
    """Make a pending bullet active, with ``content`` instead of its text when given (an edit: checked,
    masked and made inert like any write). It goes through the Curator then, as a new bullet would."""
    if content is not None and not content.strip():
        raise InvalidInputError("the edited text is empty; reject the bullet instead")
    with deps.store.write_lock():
        bullet = _pending_one(deps, bullet_id)
        changes: dict[str, object] = {"status": Status.ACTIVE, "updated_at": deps.clock()}
        if content is not None:
            changes.update(content=content, vector=None, section=None, knowledge_type=None, instructivity_score=None)
        ready = checked(deps, Draft.of(bullet, **changes))
        if ready.bullet.vector is None:  # embedded before the pending row goes: a failure loses nothing
            vectors, _ = deps.embed_texts([ready.bullet.content])
            if vectors:
                ready = with_vector(ready, vectors[0])
        deps.store.delete([bullet.id])
        done = write(deps, [ready])[0]
        deps.store.drop_review_notes([bullet.id])
    assert done is not None
    return Approved(done, content is not None)


def reject(deps: Deps, bullet_id: str) -> Bullet:
    """Erase a pending bullet and its note: it was never active, so nothing else refers to it."""
    with deps.store.write_lock():
        bullet = _pending_one(deps, bullet_id)
        deps.store.delete([bullet.id])
        deps.store.drop_review_notes([bullet.id])
    return bullet
