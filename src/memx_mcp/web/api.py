"""The JSON API behind ``memx ui``: the same Memory, browse and maintenance calls as the CLI and the MCP
tools, one function per route. No HTTP here (``server.py`` does that), so it is tested directly too."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .. import browse, maintenance
from ..decay import decay_weight
from ..errors import InvalidInputError, NotFoundError
from ..schemas import BulletOut, ConflictOut, RecallOut, StatsOut

if TYPE_CHECKING:
    from ..memory import Memory

Json = dict[str, Any]
CURVE_AHEAD_DAYS = 90
CURVE_POINTS = 48


def decay_curve(memory: Memory, bullet_id: str) -> Json:
    """The bullet's weight from its creation to ``CURVE_AHEAD_DAYS`` from now (at its current recall
    count: memx keeps the count, not the history), with today marked."""
    b = browse.show(memory, bullet_id)
    now = memory.clock()
    start, end = b.created_at, now + timedelta(days=CURVE_AHEAD_DAYS)
    step = (end - start) / (CURVE_POINTS - 1)
    points = []
    for i in range(CURVE_POINTS):
        t = start + step * i
        weight = decay_weight(b.created_at, b.recall_count, t, memory.decay_params)
        points.append({"day": round((t - now).total_seconds() / 86_400, 2), "weight": round(weight, 4)})
    today = round(browse.weight(memory, b), 4)
    points = sorted([*points, {"day": 0.0, "weight": today}], key=lambda p: p["day"])  # past and projected meet
    return {
        "id": b.id,
        "points": points,
        "today": today,
        "archive_below": memory.decay_params.archive_below,
        "permanent": b.recall_count >= memory.decay_params.permanent_recalls,
    }


def _bullet(memory: Memory, bullet_id: str) -> Json:
    b = browse.show(memory, bullet_id)
    return {"bullet": BulletOut.of(b, browse.weight(memory, b)).model_dump(mode="json"), **decay_curve(memory, b.id)}


def _bullets(memory: Memory, q: Mapping[str, str]) -> Json:
    bullets = browse.list_bullets(
        memory,
        scope=q.get("scope") or None,
        section=q.get("section") or None,
        knowledge_type=q.get("type") or None,
        archived=q.get("status") == "archived",
        limit=int(q.get("limit") or 200),
    )
    rows = [BulletOut.of(b, browse.weight(memory, b)).model_dump(mode="json") for b in bullets]
    return {"bullets": rows}


def _search(memory: Memory, q: Mapping[str, str]) -> Json:
    # The assistant's recall, with one difference: looking does not reinforce (browsing is not using).
    result = memory.recall(q.get("q", ""), scope=q.get("scope") or None, max_results=20, reinforce=False)
    return RecallOut.of(result).model_dump(mode="json")


def _conflicts(memory: Memory, q: Mapping[str, str]) -> Json:
    views = memory.list_conflicts(q.get("scope") or None, include_overlaps=q.get("all") == "1")
    return {"conflicts": [ConflictOut.of(v).model_dump(mode="json") for v in views]}


def _stats(memory: Memory) -> Json:
    return StatsOut.of(browse.stats(memory)).model_dump(mode="json")


def _edit(memory: Memory, bullet_id: str, body: Json) -> Json:
    tags = body.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise InvalidInputError("tags must be a list of strings")
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidInputError("content must be text")
    browse.edit(memory, bullet_id, content=content, tags=tags)
    return _bullet(memory, bullet_id)


def _status(memory: Memory, bullet_id: str, action: str) -> Json:
    if action == "restore":
        _, missing = maintenance.restore(memory, [bullet_id])
        if missing:
            raise NotFoundError(f"no archived bullet {bullet_id!r}")
        return _bullet(memory, bullet_id)
    done = memory.forget([bullet_id], purge=action == "forget")
    if done.not_found:
        raise NotFoundError(f"no bullet {bullet_id!r}")
    return {"archived": list(done.archived), "purged": list(done.purged)}


def _resolve(memory: Memory, conflict_id: str, body: Json) -> Json:
    keep = body.get("keep")
    if keep not in ("a", "b", "both", "merge"):
        raise InvalidInputError("keep must be a, b, both or merge")
    conflict, merged = maintenance.resolve_conflict(memory, conflict_id, keep)
    return {"conflict_id": conflict.id, "kept": keep, "merged": merged.id if merged else None}


ID = r"([A-Za-z0-9_\-]{1,100})"
Route = tuple[str, re.Pattern[str], Callable[..., Json]]
ROUTES: list[Route] = [
    ("GET", re.compile(r"/api/stats"), lambda m, q, b: _stats(m)),
    ("GET", re.compile(r"/api/bullets"), lambda m, q, b: _bullets(m, q)),
    ("GET", re.compile(rf"/api/bullets/{ID}"), lambda m, q, b, i: _bullet(m, i)),
    ("POST", re.compile(rf"/api/bullets/{ID}"), lambda m, q, b, i: _edit(m, i, b)),
    ("POST", re.compile(rf"/api/bullets/{ID}/(archive|restore|forget)"), lambda m, q, b, i, a: _status(m, i, a)),
    ("GET", re.compile(r"/api/search"), lambda m, q, b: _search(m, q)),
    ("GET", re.compile(r"/api/conflicts"), lambda m, q, b: _conflicts(m, q)),
    ("POST", re.compile(rf"/api/conflicts/{ID}/resolve"), lambda m, q, b, i: _resolve(m, i, b)),
]


def dispatch(memory: Memory, method: str, path: str, query: Mapping[str, str], body: Json) -> tuple[int, Json]:
    """(HTTP status, JSON answer) for one API call; errors become a message a person can act on."""
    from ..errors import MemxError

    for verb, pattern, handler in ROUTES:
        match = pattern.fullmatch(path)
        if match and verb == method:
            try:
                return 200, handler(memory, query, body, *match.groups())
            except NotFoundError as exc:
                return 404, {"error": str(exc)}
            except (MemxError, ValueError) as exc:
                return 400, {"error": str(exc)}
    return 404, {"error": f"no route {method} {path}"}
