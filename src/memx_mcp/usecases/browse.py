"""Looking inside the memory and fixing it by hand: list with filters, show one bullet, edit its content or
tags, and the store's statistics with a decay histogram. Used by the CLI, the MCP resources and the web
page alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..adapters.lance.lance import sql_list, sql_str
from ..domain.errors import InvalidInputError, NotFoundError
from ..domain.inputs import clean_text
from ..domain.models import Bullet, KnowledgeType, Section, Stats
from ..engine.decay import decay_histogram, decay_weight
from .writes import Draft

if TYPE_CHECKING:
    from ..memory import Memory

MAX_LIST = 10_000


def _enum_value(kind: type[Section] | type[KnowledgeType], value: str) -> str:
    wanted = value.strip().upper().replace("-", "_")
    for member in kind:
        if member.value.upper() == wanted or member.name == wanted:
            return member.value
    choices = ", ".join(m.value for m in kind)
    raise InvalidInputError(f"unknown {kind.__name__.lower()} {value!r}; one of: {choices}")


def list_bullets(
    memory: Memory,
    *,
    scope: str | None = None,
    section: str | None = None,
    knowledge_type: str | None = None,
    archived: bool = False,
    limit: int = 50,
) -> list[Bullet]:
    """Bullets newest first: active (or archived) ones, of the scopes visible from ``scope`` when given
    (all scopes otherwise), of one section / knowledge type when given."""
    clauses = [f"status = '{'archived' if archived else 'active'}'"]
    if scope:
        clauses.append(f"scope IN {sql_list(memory.resolve_scope(scope).visible())}")
    if section:
        clauses.append(f"section = {sql_str(_enum_value(Section, section))}")
    if knowledge_type:
        clauses.append(f"knowledge_type = {sql_str(_enum_value(KnowledgeType, knowledge_type))}")
    bullets = memory.store.all_bullets(" AND ".join(clauses))
    bullets.sort(key=lambda b: (b.created_at, b.id), reverse=True)
    return bullets[: max(1, min(limit, MAX_LIST))]


def show(memory: Memory, bullet_id: str) -> Bullet:
    found = memory.store.get([clean_text(bullet_id, "id", 100)])
    if not found:
        raise NotFoundError(f"no bullet {bullet_id!r}")
    return found[0]


def weight(memory: Memory, bullet: Bullet) -> float:
    return decay_weight(bullet.created_at, bullet.recall_count, memory.clock(), memory.decay_params)


def edit(memory: Memory, bullet_id: str, *, content: str | None = None, tags: Sequence[str] | None = None) -> Bullet:
    """New content (masked, then embedded again) and/or new tags for one bullet; everything else stays.
    Through the write path: checked and masked like ``remember``, under the write lock."""
    if content is None and tags is None:
        raise InvalidInputError("give new content, tags, or both")
    with memory.store.write_lock():
        bullet = show(memory, bullet_id)
        changes: dict[str, object] = {"updated_at": memory.clock()}
        if content is not None:
            changes.update(content=content, vector=None)
        if tags is not None:
            changes["tags"] = tags
        done = memory.write([memory.check(Draft.of(bullet, **changes))], how="replace")
    return done[0].bullet if done[0] else bullet


@dataclass(frozen=True)
class StoreStats:
    stats: Stats
    decay_histogram: dict[str, int]
    injections: dict[str, int]


def stats(memory: Memory) -> StoreStats:
    """Everything ``memx stats``, the ``memx://stats`` resource and the web page show."""
    from .injection import injection_counts

    ages = memory.store.decay_inputs()
    histogram = decay_histogram(ages, memory.clock(), memory.decay_params)
    return StoreStats(memory.stats(), histogram, injection_counts(memory.settings))
