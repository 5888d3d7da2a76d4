"""Looking inside the memory and fixing it by hand: list with filters, show one bullet, edit its content or
tags, and the store's statistics with a decay histogram. Used by the CLI, the MCP resources and the web
page alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from ..domain.errors import InvalidInputError, NotFoundError
from ..domain.inputs import clean_text
from ..domain.models import Bullet, KnowledgeType, Section, Stats, Status
from ..engine.decay import HISTOGRAM_BINS, decay_histogram, decay_weight
from ..ports import Where
from ..text.language import mostly_cjk
from .deps import Deps
from .injection import injection_counts
from .maintenance import stats as stats_of
from .writes import Draft
from .writing import checked, write

E = TypeVar("E", Section, KnowledgeType)


MAX_LIST = 10_000


def enum_member(kind: type[E], value: str) -> E:
    """The member a person means by ``value`` ("pitfall", "PITFALL", "error-fix"), or a clear error."""
    wanted = value.strip().upper().replace("-", "_")
    for member in kind:
        if member.value.upper() == wanted or member.name == wanted:
            return member
    choices = ", ".join(m.value for m in kind)
    raise InvalidInputError(f"unknown {kind.__name__.lower()} {value!r}; one of: {choices}")


def list_bullets(
    deps: Deps,
    *,
    scope: str | None = None,
    section: str | None = None,
    knowledge_type: str | None = None,
    archived: bool = False,
    limit: int = 50,
) -> list[Bullet]:
    """Bullets newest first: active (or archived) ones, of the scopes visible from ``scope`` when given
    (all scopes otherwise), of one section / knowledge type when given."""
    where = Where(
        status=Status.ARCHIVED if archived else Status.ACTIVE,
        scopes=deps.workspace.resolve(scope).visible() if scope else None,
        section=enum_member(Section, section) if section else None,
        knowledge_type=enum_member(KnowledgeType, knowledge_type) if knowledge_type else None,
    )
    bullets = deps.store.all_bullets(where)
    bullets.sort(key=lambda b: (b.created_at, b.id), reverse=True)
    return bullets[: max(1, min(limit, MAX_LIST))]


def show(deps: Deps, bullet_id: str) -> Bullet:
    found = deps.store.get([clean_text(bullet_id, "id", 100)])
    if not found:
        raise NotFoundError(f"no bullet {bullet_id!r}")
    return found[0]


def weight(deps: Deps, bullet: Bullet) -> float:
    return decay_weight(bullet.created_at, bullet.recall_count, deps.clock(), deps.decay)


def edit(deps: Deps, bullet_id: str, *, content: str | None = None, tags: Sequence[str] | None = None) -> Bullet:
    """New content (masked, then embedded again) and/or new tags for one bullet; everything else stays.
    Through the write path: checked and masked like ``remember``, under the write lock."""
    if content is None and tags is None:
        raise InvalidInputError("give new content, tags, or both")
    with deps.store.write_lock():
        bullet = show(deps, bullet_id)
        changes: dict[str, object] = {"updated_at": deps.clock()}
        if content is not None:
            changes.update(content=content, vector=None)
        if tags is not None:
            changes["tags"] = tags
        done = write(deps, [checked(deps, Draft.of(bullet, **changes))], how="replace")
    return done[0].bullet if done[0] else bullet


@dataclass(frozen=True)
class StoreStats:
    stats: Stats
    decay_histogram: dict[str, int]
    injections: dict[str, int]


def stats(deps: Deps) -> StoreStats:
    """Everything ``memx stats``, the ``memx://stats`` resource and the web page show."""
    ages = deps.store.decay_inputs()
    histogram = decay_histogram(ages, deps.clock(), deps.decay)
    return StoreStats(stats_of(deps), histogram, injection_counts(deps.settings))


def show_many(deps: Deps, ids: Sequence[str]) -> list[Bullet]:
    return deps.store.get(list(ids))


def count(deps: Deps) -> int:
    return deps.store.count()


def scope_counts(deps: Deps) -> dict[str, int]:
    """Bullets per scope, every status: which scopes the store knows."""
    return deps.store.column_counts("scope")


def cjk_share(deps: Deps) -> tuple[int, int]:
    """(mostly Chinese or Japanese, all) among the active bullets of every scope, by the Curator's and
    recall's test of a text's script: whether this memory would be better served by a multilingual model."""
    contents = deps.store.active_contents()
    return sum(mostly_cjk(c) for c in contents), len(contents)


def check_store(deps: Deps) -> tuple[str, int, int]:
    """("" or what could not be read, bullets, bytes): reading each row's id opens every data file, so a
    file cut short is found here, not at the next recall."""
    return deps.store.verify(), deps.store.count(), deps.store.size_bytes()


def purge_scope(deps: Deps, scope: str) -> int:
    """Erase every bullet of exactly ``scope`` (the doctor's self-test cleans up after itself)."""
    ids = [b.id for b in deps.store.all_bullets(Where(scopes=[scope]))]
    with deps.store.write_lock():
        deps.store.delete(ids)
    return len(ids)


# -- the web page's views over a store of thousands ---------------------------------------------------

CURVE_AHEAD_DAYS = 90
CURVE_POINTS = 48
PAGE_MAX = 500
SORTS = ("newest", "recalled", "stalest")


def decay_curve(deps: Deps, bullet_id: str) -> dict[str, object]:
    """The bullet's weight from its creation to ``CURVE_AHEAD_DAYS`` from now (at its current recall
    count: memx keeps the count, not the history), with today marked."""
    b = show(deps, bullet_id)
    now = deps.clock()
    start, end = b.created_at, now + timedelta(days=CURVE_AHEAD_DAYS)
    step = (end - start) / (CURVE_POINTS - 1)
    points = []
    for i in range(CURVE_POINTS):
        t = start + step * i
        w = decay_weight(b.created_at, b.recall_count, t, deps.decay)
        points.append({"day": round((t - now).total_seconds() / 86_400, 2), "weight": round(w, 4)})
    today = round(weight(deps, b), 4)
    points = sorted([*points, {"day": 0.0, "weight": today}], key=lambda p: p["day"])  # past and projected meet
    return {
        "id": b.id,
        "points": points,
        "today": today,
        "archive_below": deps.decay.archive_below,
        "permanent": b.recall_count >= deps.decay.permanent_recalls,
    }


def bands(deps: Deps) -> list[str]:
    """The decay histogram's bands, weakest last (what ``memx gc`` archives falls in the last)."""
    return list(HISTOGRAM_BINS)


def band(deps: Deps, b: Bullet) -> str:
    """The decay-histogram band a bullet falls in: the histogram's own rule, asked about one bullet."""
    counts = decay_histogram([(b.created_at, b.recall_count)], deps.clock(), deps.decay)
    return next(name for name, n in counts.items() if n)


@dataclass(frozen=True)
class Page:
    bullets: list[tuple[Bullet, float]]  # with its decay weight today
    total: int
    offset: int
    limit: int


def page(
    deps: Deps,
    *,
    scope: str = "",
    section: str = "",
    knowledge_type: str = "",
    archived: bool = False,
    text: str = "",
    decay_band: str = "",
    sort: str = "newest",
    stale: bool = False,
    offset: int = 0,
    limit: int = 200,
) -> Page:
    """One page of bullets with the total that matched: filters (scope or "*" for all, section, type,
    status, text, decay band, ``stale``: only bullets marked stale before injection), a sort (newest, most
    recalled, stalest first) and an offset."""
    scopes = sorted(scope_counts(deps)) if not scope or scope == "*" else list(deps.workspace.resolve(scope).visible())
    wanted_section = enum_member(Section, section) if section else None
    wanted_kind = enum_member(KnowledgeType, knowledge_type) if knowledge_type else None
    if archived:
        bullets = deps.store.all_bullets(Where(status=Status.ARCHIVED, scopes=scopes))
    else:
        bullets = deps.store.active_in(scopes) if scopes else []  # the in-memory copy: no vectors to read
    bullets = [
        b
        for b in bullets
        if (wanted_section is None or b.section is wanted_section)
        and (wanted_kind is None or b.knowledge_type is wanted_kind)
        and (not stale or "stale" in b.tags)
    ]
    needle = text.strip().casefold()
    if needle:
        bullets = [b for b in bullets if needle in b.content.casefold() or needle in b.id.casefold()]
    if decay_band:
        if decay_band not in HISTOGRAM_BINS:
            raise InvalidInputError(f"unknown band {decay_band!r}; one of: {', '.join(HISTOGRAM_BINS)}")
        bullets = [b for b in bullets if band(deps, b) == decay_band]
    if sort not in SORTS:
        raise InvalidInputError(f"unknown sort {sort!r}; one of: {', '.join(SORTS)}")
    weights = {b.id: weight(deps, b) for b in bullets}
    if sort == "newest":
        bullets.sort(key=lambda b: (b.created_at, b.id), reverse=True)
    elif sort == "recalled":
        bullets.sort(key=lambda b: (b.recall_count, b.created_at, b.id), reverse=True)
    else:  # stalest: the ones closest to gc first
        bullets.sort(key=lambda b: (weights[b.id], b.created_at, b.id))
    offset, limit = max(0, offset), max(1, min(limit, PAGE_MAX))
    shown = [(b, weights[b.id]) for b in bullets[offset : offset + limit]]
    return Page(shown, len(bullets), offset, limit)
