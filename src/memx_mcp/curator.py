"""The Curator (SPEC §5): on every write, merge near-duplicates and flag possible contradictions.

Pure: the neighbours and their cosine similarities are given; the store does the searching."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .models import Bullet, ConflictKind

MergeStrategy = Literal["keep_best", "merge_content"]


@dataclass(frozen=True)
class CuratorParams:
    merge_threshold: float = 0.8
    conflict_threshold: float = 0.5
    strategy: MergeStrategy = "keep_best"
    # Between merge_threshold and merge_certain, a pair merges only when the texts also share at least
    # merge_min_overlap of their words: "pin the Node version in .nvmrc" and ".nvmrc is read by nvm use"
    # are 0.81 apart with the shipped model but say different things (benchmarks/curator.py).
    merge_certain: float = 0.9
    merge_min_overlap: float = 0.5


@dataclass(frozen=True)
class Neighbour:
    bullet: Bullet
    similarity: float


@dataclass(frozen=True)
class ConflictCandidate:
    other: Bullet
    similarity: float
    kind: ConflictKind
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """``merge`` into ``target``, or ``insert`` (recording ``conflicts`` when there are any)."""

    action: Literal["insert", "merge"]
    target: Bullet | None = None
    similarity: float | None = None
    conflicts: tuple[ConflictCandidate, ...] = ()


_NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w])")  # not the 1 of eu-west-1
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|isn't|aren't|won't|can't|cannot|shouldn't|mustn't|"
    r"didn't|wasn't|no longer)\b|不|没有|沒有|别|勿|无需|ない|ません|ず[、。]|しないで",
    re.IGNORECASE,
)
_OPPOSITES: tuple[tuple[str, str], ...] = (
    (r"\buse\b|\busing\b", r"\bavoid\b|\bavoiding\b"),
    (r"\benable[ds]?\b", r"\bdisable[ds]?\b"),
    (r"\balways\b", r"\bnever\b"),
    (r"\bincrease[ds]?\b", r"\bdecrease[ds]?\b|\breduce[ds]?\b"),
    (r"\btrue\b", r"\bfalse\b"),
    (r"\bfaster\b", r"\bslower\b"),
    (r"\bworks\b", r"\bbreaks\b|\bfails\b"),
    (r"启用|开启|打开", r"禁用|关闭"),
    (r"使用|要用", r"避免"),
    (r"有効", r"無効"),
    (r"使う|使用する", r"避ける|使わない"),
)


def _numbers(text: str) -> set[str]:
    return {n.rstrip("0").rstrip(".") if "." in n else n for n in _NUMBER.findall(text)}


def contradiction_evidence(a: str, b: str) -> tuple[str, ...]:
    """Why two similar texts may disagree: different numbers for the same subject, a negation on one
    side only, or opposite advice. Empty when nothing points to a contradiction."""
    evidence: list[str] = []
    na, nb = _numbers(a), _numbers(b)
    if na and nb and na != nb:
        evidence.append(
            f"different values: {', '.join(sorted(na - nb) or sorted(na))} vs "
            f"{', '.join(sorted(nb - na) or sorted(nb))}"
        )
    neg_a, neg_b = bool(_NEGATION.search(a)), bool(_NEGATION.search(b))
    if neg_a != neg_b:
        negated = a if neg_a else b
        match = _NEGATION.search(negated)
        evidence.append(f"negation on one side only: {match.group(0) if match else ''!r}")
    for left, right in _OPPOSITES:
        la, ra = re.search(left, a, re.I), re.search(right, a, re.I)
        lb, rb = re.search(left, b, re.I), re.search(right, b, re.I)
        if (la and rb and not ra and not lb) or (ra and lb and not la and not rb):
            x = (la or ra).group(0)  # type: ignore[union-attr]
            y = (rb or lb).group(0)  # type: ignore[union-attr]
            evidence.append(f"opposite advice: {x!r} vs {y!r}")
    return tuple(evidence)


def _stem(word: str) -> str:
    return re.sub(r"(?:ing|ed|es|s)$", "", word) if len(word) > 4 else word


def word_overlap(a: str, b: str) -> float:
    """Jaccard of the two texts' meaningful words (code-aware, CJK bigrams, light stemming)."""
    from .retrieval.tokenize import query_terms

    wa, wb = {_stem(t) for t in query_terms(a)}, {_stem(t) for t in query_terms(b)}
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def is_duplicate(a: str, b: str, similarity: float, params: CuratorParams) -> bool:
    if similarity >= params.merge_certain:
        return True
    return similarity >= params.merge_threshold and word_overlap(a, b) >= params.merge_min_overlap


def decide(new_content: str, neighbours: Sequence[Neighbour], params: CuratorParams) -> Decision:
    """A duplicate (≥ merge_threshold, see ``is_duplicate``) without contradiction evidence: merge into
    the most similar. Otherwise insert, recording a conflict for every neighbour at ≥ conflict_threshold
    (a contradiction when there is evidence, else an overlap awaiting confirmation). Below
    conflict_threshold: independent."""
    ranked = sorted(neighbours, key=lambda n: -n.similarity)
    conflicts: list[ConflictCandidate] = []
    for n in ranked:
        if n.similarity < params.conflict_threshold:
            break
        evidence = contradiction_evidence(n.bullet.content, new_content)  # read as "a vs b"
        duplicate = is_duplicate(n.bullet.content, new_content, n.similarity, params)
        if duplicate and not evidence and not conflicts:
            return Decision(action="merge", target=n.bullet, similarity=n.similarity)
        kind: ConflictKind = "contradiction" if evidence else "overlap"
        conflicts.append(ConflictCandidate(n.bullet, n.similarity, kind, evidence))
    return Decision(action="insert", conflicts=tuple(conflicts))


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def merge_contents(kept: str, other: str) -> str:
    """Deterministic ``merge_content``: the kept text, then the other's sentences it does not already say."""
    have = {s.strip().lower() for s in _SENTENCE.split(kept) if s.strip()}
    extra = [s.strip() for s in _SENTENCE.split(other) if s.strip() and s.strip().lower() not in have]
    return " ".join([kept.strip(), *extra]) if extra else kept


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))


def merge(existing: Bullet, new: Bullet, strategy: MergeStrategy, now: datetime) -> Bullet:
    """The merged bullet keeps the existing id. ``keep_best`` keeps the text with the higher instructivity
    score (the existing one on a tie); ``merge_content`` adds what the other says. Metadata lists are
    united and the merge counts as one reinforcement (a recall)."""
    best = new if new.instructivity_score > existing.instructivity_score else existing
    other = existing if best is new else new
    content = best.content if strategy == "keep_best" else merge_contents(best.content, other.content)
    return existing.with_changes(
        content=content,
        section=best.section,
        knowledge_type=best.knowledge_type,
        instructivity_score=max(existing.instructivity_score, new.instructivity_score),
        confidence=max(existing.confidence, new.confidence),
        tools=_union(existing.tools, new.tools),
        entities=_union(existing.entities, new.entities),
        tags=_union(existing.tags, new.tags),
        recall_count=existing.recall_count + 1,
        updated_at=now,
        vector=best.vector if content == best.content else None,
    )


def _specificity(text: str) -> int:
    return len(re.findall(r"`[^`]+`|\d+(?:\.\d+)?|--?[\w-]+|[\w.-]+/[\w./-]+", text))


def recommend(a: Bullet, b: Bullet) -> tuple[Literal["a", "b", "both"], str]:
    """Which side looks like the current best practice: newer, then more specific (commands, numbers,
    paths), then more recalled, then higher score."""
    if a.created_at != b.created_at:
        return ("a" if a.created_at > b.created_at else "b"), "newer"
    sa, sb = _specificity(a.content), _specificity(b.content)
    if sa != sb:
        return ("a" if sa > sb else "b"), "more specific"
    if a.recall_count != b.recall_count:
        return ("a" if a.recall_count > b.recall_count else "b"), "recalled more often"
    if a.instructivity_score != b.instructivity_score:
        return ("a" if a.instructivity_score > b.instructivity_score else "b"), "higher instructivity score"
    return "both", "no side is newer, more recalled or better scored"
