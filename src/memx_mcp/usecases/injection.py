"""Context injection for Claude Code: what a ``SessionStart`` hook and a ``UserPromptSubmit`` hook print
(Claude Code shows a hook's standard output to the model).

At session start: the most useful bullets of the project and workspace (permanent and often-recalled
ones, recent pitfalls) and open contradictions, within a token budget, with headings in the language most
of the bullets are written in. With each prompt: the few bullets relevant to it above a relevance floor,
never one already shown in the same session, nothing at all when nothing is relevant. A bullet that names a
file gone from the working tree is never injected (``staleness.py``), nor is a learned bullet waiting for
review; SessionStart says in one line how many wait. Every block is framed as data, not instructions
(``frame.py``). Whatever is injected
counts as a recall for Decay, and every injection is logged for ``memx stats``."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from ..config import Settings
from ..domain.inputs import MAX_QUERY_CHARS
from ..domain.models import Bullet, Hit, KnowledgeType, Section
from ..engine.curator import contradiction_evidence
from ..engine.decay import decay_weight
from ..engine.retrieval.budget import estimate_tokens
from ..files import atomic_write
from ..text.inert import inert
from ..text.language import language
from . import frame
from .deps import Deps
from .maintenance import list_conflicts
from .prompt_gate import passing
from .recall import recall
from .review import waiting
from .staleness import fresh as still_there

HEADINGS = {
    "en": (
        "memx: what this project has learned",
        "Known pitfalls",
        "Open contradictions (ask before relying)",
        "memx: relevant memory for this prompt",
    ),
    "zh": ("memx：本项目积累的知识", "已知陷阱", "未解决的矛盾（使用前请确认）", "memx：与此提示相关的记忆"),
    "ja": (
        "memx：このプロジェクトで学んだこと",
        "既知の落とし穴",
        "未解決の矛盾（使う前に確認）",
        "memx：このプロンプトに関連する記憶",
    ),
}
RECENT_DAYS = 30


_line = frame.line


def _room(budget: int, where: str) -> int:
    """The tokens left for the lines once the frame is counted (and the line ends joining them)."""
    return max(0, budget - estimate_tokens(frame.chrome(where)) - 3)


def _pack(lines: list[str], budget: int) -> tuple[list[str], int]:
    out, used = [], 0
    for line in lines:
        cost = estimate_tokens(line)
        if used + cost > budget:
            continue
        out.append(line)
        used += cost
    return out, used


def _pack_sections(sections: list[tuple[str, list[str]]], budget: int) -> list[str]:
    """Each section's heading followed by what of its lines fits ``budget``; a heading none of whose lines fit
    is left out too (a heading with nothing under it says nothing). An empty heading is no heading."""
    out: list[str] = []
    used = 0
    for heading, lines in sections:
        head = estimate_tokens(heading) if heading else 0
        taken: list[str] = []
        for line in lines:
            cost = estimate_tokens(line) + (0 if taken else head)
            if used + cost > budget:
                continue
            taken.append(line)
            used += cost
        if taken:
            out += [heading, *taken] if heading else taken
    return out


def session_context(deps: Deps, budget: int) -> tuple[str, list[str]]:
    """The SessionStart block for the current scope and the ids it shows ("" when memx knows nothing)."""
    scope = deps.workspace.current()
    bullets = still_there(deps, deps.store.active_in(scope.visible()))  # what names a file gone is left out
    now = deps.clock()
    params = deps.decay

    def standing(b: Bullet) -> float:
        own = 1.2 if scope.owns(b.scope) else 1.0
        return decay_weight(b.created_at, b.recall_count, now, params) * (1 + math.log1p(b.recall_count)) * own

    ranked = sorted(bullets, key=lambda b: (-standing(b), b.id))
    established = [b for b in ranked if b.recall_count >= 2]
    # a young project has nothing recalled yet: its own strongest bullets stand in
    established += [b for b in ranked if b.recall_count < 2 and scope.owns(b.scope)][: max(0, 6 - len(established))]
    recent = now - timedelta(days=RECENT_DAYS)
    pitfalls = sorted(
        (
            b
            for b in bullets
            if (b.knowledge_type is KnowledgeType.PITFALL or b.section is Section.DEBUGGING) and b.created_at >= recent
        ),
        key=lambda b: (b.created_at, b.id),
        reverse=True,
    )
    # only contradictions about the same thing: a record an older memx made of two parallel facts ("port
    # 8000 is taken" beside "port 9000 is taken") is judged again by today's Curator before it is shown
    conflicts = [
        v
        for v in list_conflicts(deps, str(scope))
        if v.conflict.kind == "contradiction" and contradiction_evidence(v.a.content, v.b.content)
    ][:3]
    if not established and not pitfalls and not conflicts:
        return "", []
    shown = [*established[:12], *(p for p in pitfalls[:8] if p not in established[:12])]
    lang = language([b.content for b in shown] or [v.a.content for v in conflicts])
    title, pitfall_title, conflict_title, _ = HEADINGS[lang]
    fresh = [p for p in pitfalls[:8] if p not in established[:12]]
    conflict_lines = [f"- {_line(v.a)[2:]}  <>  {_line(v.b)[2:]}" for v in conflicts]
    where = inert(str(scope))
    packed = _pack_sections(
        [
            ("", [f"{title} ({scope}; `recall` finds more):"]),
            ("", [_line(b) for b in established[:12]]),
            (f"{pitfall_title}:", [_line(b) for b in fresh]),
            (f"{conflict_title}:", conflict_lines),
        ],
        _room(budget, where),
    )
    ids = [b.id for b in shown if _line(b) in packed]
    return (frame.framed(where, packed) if ids or set(conflict_lines) & set(packed) else ""), ids


def prompt_hits(deps: Deps, prompt: str, budget: int) -> tuple[str, list[Hit]]:
    """What a prompt recalls for injection, best first, before the floor: the scope searched and the hits
    (``benchmarks/prompt_floor_real.py`` calibrates the floor on these scores)."""
    result = recall(deps, prompt[:MAX_QUERY_CHARS], token_budget=max(50, budget), max_results=5, reinforce=False)
    return result.scope, list(result.hits)


def relevant_hits(deps: Deps, text: str, budget: int) -> tuple[str, list[Hit]]:
    """The hits of ``text`` that pass the prompt gate (``prompt_gate.py``; with the setting ``prompt_gate =
    floor``, those at or above ``inject_min_relevance``): the one relevance test of every hook that hands
    memory back unasked (a prompt, the moment of need)."""
    scope, hits = prompt_hits(deps, text, budget)
    return scope, passing(deps, text[:MAX_QUERY_CHARS], hits)


def prompt_context(
    deps: Deps, prompt: str, seen: set[str], budget: int, floor: float | None = None
) -> tuple[str, list[str]]:
    """The UserPromptSubmit block: bullets relevant to ``prompt`` not in ``seen``: those that pass the prompt
    gate, or with ``floor`` given, those whose blended score reaches it."""
    scope, found = prompt_hits(deps, prompt, budget)
    relevant = (
        passing(deps, prompt[:MAX_QUERY_CHARS], found)
        if floor is None
        else ([h for h in found if h.score.blended >= floor])
    )
    hits = [h for h in relevant if h.bullet.id not in seen]
    standing = {b.id for b in still_there(deps, [h.bullet for h in hits])}
    hits = [h for h in hits if h.bullet.id in standing]
    if not hits:
        return "", []
    heading = HEADINGS[language([h.bullet.content for h in hits])][3]
    where = inert(scope)
    lines, _ = _pack([f"{heading}:", *(_line(h.bullet) for h in hits)], _room(budget, where))
    ids = [h.bullet.id for h in hits if _line(h.bullet) in lines]
    return (frame.framed(where, lines) if ids else ""), ids


def review_line(deps: Deps) -> str:
    """One line when learned bullets of the current scope wait for review ("" when none do)."""
    count = waiting(deps, tuple(deps.workspace.current().visible()))
    if not count:
        return ""
    return f"memx: {count} learned note(s) wait for the user's review (not shown until approved): run `memx review`"


# -- per-session memory of what was shown, and the log that `memx stats` reads ------------------------


def _session_file(settings: Settings, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode()).hexdigest()[:24]  # the id itself is not stored
    return settings.home / "state" / "sessions" / f"{digest}.json"


def seen_in_session(settings: Settings, session_id: str) -> set[str]:
    try:
        data = json.loads(_session_file(settings, session_id).read_text(encoding="utf-8"))
        return set(data) if isinstance(data, list) else set()
    except (OSError, ValueError):
        return set()


def remember_shown(settings: Settings, session_id: str, ids: Sequence[str]) -> None:
    path = _session_file(settings, session_id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    seen = sorted(seen_in_session(settings, session_id) | set(ids))
    atomic_write(path, json.dumps(seen))
    _prune(path.parent)


def _prune(folder: Path, keep_days: float = 7.0) -> None:
    cutoff = time.time() - keep_days * 86_400
    for old in folder.glob("*.json"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass


def log_injection(settings: Settings, event: str, shown: int, seconds: float) -> None:
    folder = settings.home / "logs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = {"t": round(time.time(), 3), "event": event, "shown": shown, "ms": round(seconds * 1000, 1)}
    with (folder / "injections.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def injection_counts(settings: Settings) -> dict[str, int]:
    """How often each hook ran and how often it found something to inject."""
    counts: dict[str, int] = {}
    try:
        lines = (settings.home / "logs" / "injections.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return counts
    for line in lines[-100_000:]:
        try:
            record = json.loads(line)
            event, shown = str(record["event"]), int(record["shown"])
        except (ValueError, KeyError, TypeError):
            continue
        counts[f"{event} runs"] = counts.get(f"{event} runs", 0) + 1
        counts[f"{event} found"] = counts.get(f"{event} found", 0) + (shown > 0)
    return counts


def inject(deps: Deps, payload: dict[str, object]) -> str:
    """Answer one SessionStart or UserPromptSubmit hook call: the text to print ("" for nothing)."""
    settings = deps.settings
    event = str(payload.get("hook_event_name", ""))
    session = str(payload.get("session_id", ""))
    started = time.monotonic()
    if event == "SessionStart":
        text, ids = session_context(deps, settings.inject_session_tokens)
        text = "\n".join(t for t in (text, review_line(deps)) if t)
    else:
        prompt = str(payload.get("prompt", "")).strip()
        if not prompt:
            return ""
        seen = seen_in_session(settings, session) if session else set()
        text, ids = prompt_context(deps, prompt[:MAX_QUERY_CHARS], seen, settings.inject_prompt_tokens)
    if ids:
        deps.store.mark_recalled(dict.fromkeys(ids, 1), deps.clock())  # injected = recalled, for Decay
        if session:
            remember_shown(settings, session, ids)
    log_injection(settings, event, len(ids), time.monotonic() - started)
    return text
