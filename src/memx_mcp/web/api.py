"""The JSON API behind ``memx ui``: the same Memory, browse and maintenance calls as the CLI and the MCP
tools, one function per route. No HTTP here (``server.py`` does that), so it is tested directly too."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..domain.errors import InvalidInputError, NotFoundError
from ..presentation.schemas import BulletOut, ConflictOut, PendingOut, RecallOut, RememberOut, StatsOut

if TYPE_CHECKING:
    from ..memory import Memory

Json = dict[str, Any]


def _bullet(memory: Memory, bullet_id: str) -> Json:
    b = memory.show(bullet_id)
    return {"bullet": BulletOut.of(b, memory.weight(b)).model_dump(mode="json"), **memory.decay_curve(b.id)}


def _bullets(memory: Memory, q: Mapping[str, str]) -> Json:
    bullets = memory.list_bullets(
        scope=q.get("scope") or None,
        section=q.get("section") or None,
        knowledge_type=q.get("type") or None,
        archived=q.get("status") == "archived",
        limit=int(q.get("limit") or 200),
    )
    rows = [BulletOut.of(b, memory.weight(b)).model_dump(mode="json") for b in bullets]
    return {"bullets": rows}


def _search(memory: Memory, q: Mapping[str, str]) -> Json:
    # The assistant's recall, with one difference: looking does not reinforce (browsing is not using).
    result = memory.recall(q.get("q", ""), scope=q.get("scope") or None, max_results=20, reinforce=False)
    return RecallOut.of(result).model_dump(mode="json")


def _conflicts(memory: Memory, q: Mapping[str, str]) -> Json:
    views = memory.list_conflicts(q.get("scope") or None, include_overlaps=q.get("all") == "1")
    return {"conflicts": [ConflictOut.of(v).model_dump(mode="json") for v in views]}


def _stats(memory: Memory) -> Json:
    return StatsOut.of(memory.store_stats()).model_dump(mode="json")


def _edit(memory: Memory, bullet_id: str, body: Json) -> Json:
    tags = body.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise InvalidInputError("tags must be a list of strings")
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidInputError("content must be text")
    memory.edit(bullet_id, content=content, tags=tags)
    return _bullet(memory, bullet_id)


def _confirm(memory: Memory, bullet_id: str) -> Json:
    memory.confirm(bullet_id)
    return _bullet(memory, bullet_id)


def _status(memory: Memory, bullet_id: str, action: str) -> Json:
    if action == "restore":
        _, missing = memory.restore([bullet_id])
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
    conflict, merged = memory.resolve_conflict(conflict_id, keep)
    return {"conflict_id": conflict.id, "kept": keep, "merged": merged.id if merged else None}


def _review(memory: Memory, q: Mapping[str, str]) -> Json:
    """The learned bullets that wait for review, each with who said it, why it waits, and its excerpt."""
    waiting = [PendingOut.of(p).model_dump(mode="json") for p in memory.pending(scope=q.get("scope") or None)]
    return {"pending": waiting}


def _answer(memory: Memory, bullet_id: str, action: str, body: Json) -> Json:
    """Approve, edit (then approve) or reject one waiting bullet: the same Memory calls as `memx review`."""
    if action == "reject":
        return {"action": action, "id": memory.reject(bullet_id).id}
    content = body.get("content") if action == "edit" else None
    if action == "edit" and not isinstance(content, str):
        raise InvalidInputError("content must be text")
    done = memory.approve(bullet_id, content=content)
    return {"action": action, "id": bullet_id, "result": RememberOut.of(done.result).model_dump(mode="json")}


# -- the page's read-only views over a store of thousands (issue 20) ---------------------------------


def _context(memory: Memory) -> Json:
    """What every view shows in its header: the scope ``memx ui`` detected, why (which repository, told
    apart how; bullets of its old name that wait for ``memx adopt``), and the scopes in the store."""
    scope = str(memory.current_scope())  # first: meeting the repository may move its old name's bullets
    return {
        "scope": scope,
        "scope_why": memory.scope_reason(),
        "scopes": dict(sorted(memory.scope_counts().items())),
        "bands": memory.decay_bands(),
    }


def _page(memory: Memory, q: Mapping[str, str]) -> Json:
    """One page of bullets with the total that matched (``browse.page`` says the filters)."""
    try:
        offset, limit = int(q.get("offset") or 0), int(q.get("limit") or 200)
    except ValueError as exc:
        raise InvalidInputError("offset and limit must be whole numbers") from exc
    found = memory.page(
        scope=q.get("scope", ""),
        section=q.get("section") or "",
        knowledge_type=q.get("type") or "",
        archived=q.get("status") == "archived",
        text=q.get("text") or "",
        decay_band=q.get("band") or "",
        sort=q.get("sort") or "newest",
        stale=q.get("stale") == "1",
        offset=offset,
        limit=limit,
    )
    rows = [BulletOut.of(b, w).model_dump(mode="json") for b, w in found.bullets]
    return {"total": found.total, "offset": found.offset, "limit": found.limit, "bullets": rows}


def _gc_preview(memory: Memory) -> Json:
    """What ``memx gc`` would archive now, without archiving it."""
    result = memory.gc(dry_run=True)
    return {"would_archive": len(result.archived), "ids": result.archived[:500], "band": memory.decay_bands()[-1]}


def _search_marked(memory: Memory, q: Mapping[str, str]) -> Json:
    """Up to 20 hits for the query, each marked with whether the assistant's ``recall`` (its max_results
    and token budget) would return it; "*" searches every scope, where no single recall applies."""
    from ..domain.inputs import MAX_RESULTS_CAP

    query, scope = q.get("q", ""), q.get("scope") or ""
    wide_limit = min(20, MAX_RESULTS_CAP)
    if scope == "*":
        hits: dict[str, Json] = {}
        for one in sorted(memory.scope_counts()):
            r = RecallOut.of(memory.recall(query, scope=one, max_results=wide_limit, reinforce=False))
            for h in r.results:
                if h.id not in hits or h.score.final > hits[h.id]["score"]["final"]:
                    hits[h.id] = {**h.model_dump(mode="json"), "returned": None}
        results = sorted(hits.values(), key=lambda h: -h["score"]["final"])[:wide_limit]
        return {
            "query": query,
            "scope": "*",
            "results": results,
            "max_results": memory.settings.max_results,
            "token_budget": memory.settings.token_budget,
            "returned": None,
            "notes": [],
        }
    wide = RecallOut.of(memory.recall(query, scope=scope or None, max_results=wide_limit, reinforce=False))
    served = memory.recall(query, scope=scope or None, reinforce=False)  # the assistant's own limits
    returned = {h.bullet.id for h in served.hits}
    out = wide.model_dump(mode="json")
    for h in out["results"]:
        h["returned"] = h["id"] in returned
    out.update(
        max_results=memory.settings.max_results,
        token_budget=memory.settings.token_budget,
        returned=len(returned),
        omitted_by_budget=served.omitted_by_budget,
    )
    return out


def _conflicts_in(memory: Memory, q: Mapping[str, str]) -> Json:
    """Open conflicts of one scope (or every scope with "*"), of one kind or both: the cards the page
    shows, so the tab badge can count exactly these."""
    kind = q.get("kind") or "contradiction"
    if kind not in ("contradiction", "overlap", "any"):
        raise InvalidInputError("kind must be contradiction, overlap or any")
    scope = q.get("scope") or ""
    scopes = sorted(memory.scope_counts()) if scope == "*" else [scope or None]
    seen: dict[str, Json] = {}
    for one in scopes:
        for v in memory.list_conflicts(one, include_overlaps=kind != "contradiction"):
            if kind == "overlap" and v.conflict.kind != "overlap":
                continue
            seen.setdefault(v.conflict.id, ConflictOut.of(v).model_dump(mode="json"))
    return {"scope": scope or str(memory.current_scope()), "kind": kind, "conflicts": list(seen.values())}


ID = r"([A-Za-z0-9_\-]{1,100})"
Route = tuple[str, re.Pattern[str], Callable[..., Json]]
ROUTES: list[Route] = [
    ("GET", re.compile(r"/api/stats"), lambda m, q, b: _stats(m)),
    ("GET", re.compile(r"/api/bullets"), lambda m, q, b: _bullets(m, q)),
    ("GET", re.compile(rf"/api/bullets/{ID}"), lambda m, q, b, i: _bullet(m, i)),
    ("POST", re.compile(rf"/api/bullets/{ID}"), lambda m, q, b, i: _edit(m, i, b)),
    ("POST", re.compile(rf"/api/bullets/{ID}/(archive|restore|forget)"), lambda m, q, b, i, a: _status(m, i, a)),
    ("POST", re.compile(rf"/api/bullets/{ID}/confirm"), lambda m, q, b, i: _confirm(m, i)),
    ("GET", re.compile(r"/api/search"), lambda m, q, b: _search(m, q)),
    ("GET", re.compile(r"/api/conflicts"), lambda m, q, b: _conflicts(m, q)),
    ("POST", re.compile(rf"/api/conflicts/{ID}/resolve"), lambda m, q, b, i: _resolve(m, i, b)),
    ("GET", re.compile(r"/api/context"), lambda m, q, b: _context(m)),
    ("GET", re.compile(r"/api/page"), lambda m, q, b: _page(m, q)),
    ("GET", re.compile(r"/api/gc-preview"), lambda m, q, b: _gc_preview(m)),
    ("GET", re.compile(r"/api/search-marked"), lambda m, q, b: _search_marked(m, q)),
    ("GET", re.compile(r"/api/conflicts-in"), lambda m, q, b: _conflicts_in(m, q)),
    ("GET", re.compile(r"/api/review"), lambda m, q, b: _review(m, q)),
    ("POST", re.compile(rf"/api/review/{ID}/(approve|edit|reject)"), lambda m, q, b, i, a: _answer(m, i, a, b)),
]


def dispatch(memory: Memory, method: str, path: str, query: Mapping[str, str], body: Json) -> tuple[int, Json]:
    """(HTTP status, JSON answer) for one API call; errors become a message a person can act on."""
    from ..domain.errors import MemxError

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
