"""The team store's use cases: ``share`` and ``unshare`` move bullets between this machine's personal store
and the team store; ``curate`` is the team Curator pass, safe to run on any machine, any number of times.

Two machines writing the same lesson at the same moment each curate it against the team table as it was
before the other's commit, so both bullets are stored. The pass merges such duplicates (and records each
contradiction once): every machine takes the same decisions from the same rows (bullets in the order of
(created_at, id), the earliest of a group kept, conflict ids derived from the pair), so passes running at
once on two machines write the same result, and a pass with nothing left to merge writes nothing."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np

from ..domain.errors import InvalidInputError, TeamStoreUnavailable
from ..domain.inputs import MAX_IDS
from ..domain.models import Bullet, Conflict, Status
from ..engine import curator
from ..ports import SharedStore, Teams, TeamStatus, Where
from .deps import Deps
from .writes import Draft
from .writing import checked


@dataclass
class MoveResult:
    moved: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)  # already in the store they were to move to
    not_found: list[str] = field(default_factory=list)


@dataclass
class CurateResult:
    merged: dict[str, list[str]] = field(default_factory=dict)  # kept id → ids archived into it
    conflicts_added: list[str] = field(default_factory=list)
    conflicts_deduplicated: list[str] = field(default_factory=list)


def _stores(deps: Deps) -> tuple[Teams, SharedStore]:
    store = deps.teams
    if store is None:
        raise InvalidInputError("no team store is configured: set MEMX_TEAM_STORE and MEMX_TEAM_SCOPES")
    if store.team is None:
        raise TeamStoreUnavailable(f"the team store {store.uri} could not be opened ({store.why_absent})")
    return store, store.team


def _wanted(ids: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys(i.strip() for i in ids if i and i.strip()))
    if not wanted:
        raise InvalidInputError("no ids given")
    if len(wanted) > MAX_IDS:
        raise InvalidInputError(f"{len(wanted)} ids; at most {MAX_IDS} at once")
    return wanted


def share(deps: Deps, ids: Sequence[str]) -> MoveResult:
    """Move personal bullets to the team store, keeping their ids and scopes. Each goes through the write
    path's checks again (the sanitizer first; text it changes is embedded again) before it leaves; a bullet
    of a scope the team did not configure is refused."""
    routed, team = _stores(deps)
    wanted = _wanted(ids)
    result = MoveResult()
    with routed.write_lock():
        held = routed.holder(wanted)
        mine = {b.id: b for b in routed.personal.get([i for i in wanted if held.get(i) is routed.personal])}
        for i in wanted:
            (result.already if held.get(i) is team else result.moved if i in mine else result.not_found).append(i)
        if not mine:
            return result
        _only_team_scopes(routed, list(mine.values()))
        moving = [_checked_again(deps, b) for b in mine.values()]
        team.upsert(moving)  # first: a failure between the two leaves it in both, and the team's copy wins
        routed.personal.delete(list(mine))
    return result


def _only_team_scopes(routed: Teams, bullets: Sequence[Bullet]) -> None:
    """Only the scopes the team configured are shared: a bullet of any other (``global`` above all: it
    would become every teammate's global memory) is refused, and nothing is moved."""
    outside = [b for b in bullets if not routed.shares(b.scope)]
    if outside:
        listed = ", ".join(f"{b.id} ({b.scope})" for b in outside[:5]) + (" …" if len(outside) > 5 else "")
        raise InvalidInputError(
            f"not shared: {listed} — the team store holds only the scopes the team configured "
            f"({', '.join(routed.scope_names) or 'none'}; MEMX_TEAM_SCOPES); other scopes stay personal. "
            "Nothing was moved"
        )


def _checked_again(deps: Deps, b: Bullet) -> Bullet:
    again = checked(deps, Draft.of(b)).bullet
    if again.content == b.content:
        return again.with_changes(vector=b.vector)
    vectors, _ = deps.embed_texts([again.content])
    return again.with_changes(vector=vectors[0] if vectors else None)


def unshare(deps: Deps, ids: Sequence[str]) -> MoveResult:
    """Move team bullets to this machine's personal store. The team's later versions no longer hold them;
    its older versions do until the retention window has passed (other machines may still read them)."""
    routed, team = _stores(deps)
    wanted = _wanted(ids)
    result = MoveResult()
    with routed.write_lock():
        held = routed.holder(wanted)
        theirs = {b.id: b for b in team.get([i for i in wanted if held.get(i) is team])}
        for i in wanted:
            (result.moved if i in theirs else result.already if i in held else result.not_found).append(i)
        if theirs:
            routed.personal.upsert(list(theirs.values()))
            team.delete(list(theirs))
    return result


def pair_id(a: str, b: str) -> str:
    """The same conflict id for a pair on every machine."""
    return "c_" + hashlib.sha256("\n".join(sorted((a, b))).encode()).hexdigest()[:16]


def curate(deps: Deps) -> CurateResult:
    """Merge the team store's duplicates, record its contradictions once, and keep one open conflict
    record per pair of bullets."""
    routed, team = _stores(deps)
    params = deps.curator
    now = deps.clock()
    result = CurateResult()
    with routed.write_lock():
        if not team.sync():
            raise TeamStoreUnavailable(f"the team store {team.uri} cannot be reached: the Curator pass did not run")
        bullets = team.all_bullets(Where(status=Status.ACTIVE, with_vector=True))
        by_scope: dict[str, list[Bullet]] = defaultdict(list)
        for b in sorted(bullets, key=lambda b: (b.created_at, b.id)):
            by_scope[b.scope].append(b)
        changed: dict[str, Bullet] = {}
        archived: list[str] = []
        found: list[Conflict] = []
        known = team.conflict_pairs()
        for group in by_scope.values():
            kept, conflicts = _merge_group(group, params, now, result)
            changed.update(kept)
            archived.extend(i for gone in result.merged.values() for i in gone if i not in archived)
            found.extend(c for c in conflicts if frozenset((c.a_id, c.b_id)) not in known)
        if changed:
            team.upsert(list(changed.values()))
        if archived:
            team.set_status(archived, Status.ARCHIVED, now)
        team.add_conflicts(found)
        result.conflicts_added = [c.id for c in found]
        result.conflicts_deduplicated = _one_record_per_pair(team)
    return result


def _merge_group(
    group: list[Bullet], params: curator.CuratorParams, now: datetime, result: CurateResult
) -> tuple[dict[str, Bullet], list[Conflict]]:
    """Each bullet, oldest first, merged into the most similar earlier one it duplicates (and not
    contradicts); contradicting pairs become conflicts."""
    vectors = np.asarray([b.vector for b in group], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors @ vectors.T
    survivor: dict[int, int] = {}  # index → the index it was merged into
    current: dict[int, Bullet] = {}
    conflicts: list[Conflict] = []
    for j, b in enumerate(group):
        best: int | None = None
        for i in np.argsort(-sims[j, :j], kind="stable"):
            i = int(i)
            if sims[j, i] < params.conflict_threshold:
                break
            if i in survivor:
                continue
            evidence = curator.contradiction_evidence(group[i].content, b.content)
            if evidence:
                kind: Literal["contradiction", "overlap"] = "contradiction"
                conflicts.append(
                    Conflict(
                        pair_id(group[i].id, b.id),
                        group[i].id,
                        b.id,
                        round(float(sims[j, i]), 4),
                        kind,
                        evidence,
                        b.scope,
                        now,
                    )
                )
                continue
            if best is None and curator.is_duplicate(group[i].content, b.content, float(sims[j, i]), params):
                best = i
        if best is None:
            continue
        survivor[j] = best
        current[best] = curator.merge(current.get(best, group[best]), b, "keep_best", now)
        result.merged.setdefault(group[best].id, []).append(b.id)
    return {m.id: m for m in current.values()}, conflicts


def _one_record_per_pair(team: SharedStore) -> list[str]:
    """Open conflict records of the same pair (two machines recorded it at once): the smallest id stays."""
    seen: dict[frozenset[str], str] = {}
    extra: list[str] = []
    for c in sorted(team.open_conflicts(), key=lambda c: c.id):
        pair = frozenset((c.a_id, c.b_id))
        if pair in seen:
            extra.append(c.id)
        else:
            seen[pair] = c.id
    if extra:
        team.resolve_conflicts(extra, "duplicate record")
    return extra


@dataclass(frozen=True)
class TeamReport:
    """What ``memx doctor`` says of the team store."""

    uri: str
    scopes: tuple[str, ...]
    absent: str = ""  # why it could not be opened
    status: TeamStatus | None = None
    loaded_seconds: float = 0.0  # the copy, loaded now


def status(deps: Deps) -> TeamReport | None:
    """None without a team store; else where it is, how stale this machine's copy may be, whether it
    answers now, and how long its copy took to load."""
    teams = deps.teams
    if teams is None:
        return None
    if teams.team is None:
        return TeamReport(teams.uri, teams.scope_names, absent=teams.why_absent)
    found = teams.team.status()
    seconds = teams.team.wait_loaded() if found.reachable else 0.0
    return TeamReport(teams.uri, teams.scope_names, status=found, loaded_seconds=seconds)
