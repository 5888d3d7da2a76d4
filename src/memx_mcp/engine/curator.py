"""The Curator (SPEC §5): on every write, merge near-duplicates and flag possible contradictions.

Pure: the neighbours and their cosine similarities are given; the store does the searching."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Literal

from ..domain.models import Bullet, ConflictKind
from ..text.sentences import split_sentences
from ..text.tokenize import CJK_STOP_CHARS, STOP_WORDS, query_terms, stem

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


# What a number means is read from the words around it. Some numbers are no claim about the world:
# the Reflector's repeat counts ("run 4 times in one session"), ids, hashes, dates, times of day and the
# line numbers of a path. Two bullets only disagree on a value when they give different numbers for the
# same subject (a pool of 10 vs a pool of 50).
_NUMBER = re.compile(r"(?<![\w.#-])\d+(?:\.\d+)*(?![\w])")  # not the 1 of eu-west-1, the 12 of #12
# The files whose "name.ext:12" is a line number (a host's "db.internal:5432" is a port, a value).
_SOURCE_EXTENSIONS = (
    "py|pyi|js|jsx|mjs|cjs|ts|tsx|ex|exs|erl|rs|go|rb|java|kt|kts|scala|c|h|cc|cpp|hpp|cs|swift|m|php|lua|sh|"
    "bash|zsh|vue|svelte|dart|sql|html|css|scss|md|json|ya?ml|toml|ini|cfg|txt|lock|gradle|tf|proto"
)
_NOT_A_VALUE = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|"  # a UUID (session ids)
    r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b|\b\d{7,}\b|"  # a hash, a long id
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|"  # a date
    r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![\w:])|"  # a time of day
    rf"[\w/.-]+\.(?:{_SOURCE_EXTENSIONS}):\d+(?::\d+)*|"  # path:line
    r"\b(?:lines?|line no\.?|L)\s?\d+(?:\s?[-–]\s?\d+)?\b|"
    r"第\s*\d+\s*行|\d+\s*行目|"
    r"\b(?:step|turn|pid|session|attempt|try|run|pr|issue)\s#?\d+\b|"
    r"\b(?:(?:run|ran|failed|seen|called|used|repeated|retried|tried|executed)\s+)?\d+\s*(?:times?|runs?)\b|"
    r"\d+\s*(?:次|回|遍)|\b(?:in|across|over)\s+(?:one|a single|\d+)\s+sessions?\b|\bper session\b",
    re.IGNORECASE,
)
# Quoted tool output (an error message, a log line) says what was seen, not what to do: its numbers and
# its "can't" / "not found" are no evidence. Text after "Error:" runs to the end of its sentence.
_OUTPUT = re.compile(
    r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|(?<!\w)'[^'\n]{1,200}'(?!\w)|"
    r"\b(?:error|fatal|exception|traceback)\b\s*:[^.\n]*(?:\.(?=\S)[^.\n]*)*",
    re.IGNORECASE,
)
_CODE = re.compile(r"`[^`\n]*`")
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|isn't|aren't|won't|can't|cannot|shouldn't|mustn't|"
    r"didn't|wasn't)\b|不|没有|沒有|别|勿|无需|ない|ません|ず[、。]|しないで",
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
_OPPOSITE_PATTERNS = tuple((re.compile(a, re.I), re.compile(b, re.I)) for a, b in _OPPOSITES)
# The Reflector's own wording ("When X fails with …: … worked") is no subject of a claim.
_TEMPLATE_WORDS = frozenset(
    "when fail fails failed with worked work run first then project use uses cli e.g fix was also".split()
)
_CLAUSE = re.compile(r"\s*(?:[;:,—–]|\bbut\b|\bwhile\b|\bwhereas\b|，|；|：)\s*")
# Where a value's clause ends: punctuation followed by a space ("db:5432", "1,000" stay whole), or a dash.
_VALUE_CLAUSE = re.compile(r"\s*(?:[;,:](?=\s)|\s[—–-]\s|\bbut\b|\bwhile\b|\bwhereas\b|[，；：])\s*")
SAME_SUBJECT_SHARE = 0.5  # of the smaller context's words, said by the other side too (_same_subject)
_NEGATION_MIN_OVERLAP = 0.5  # the negated clause must say what a clause of the other side says
_NEGATION_MIN_CONTAINED = 0.8  # or nearly all of its words are said somewhere by the other side


# A batch import meets the same stored bullets as neighbours of many records: what is read from one text is
# kept (pure functions of the text; bounded caches).
_MEMO = 8192


@lru_cache(maxsize=_MEMO)
def without_output(text: str) -> str:
    """``text`` without quoted tool output: what a bullet claims, not what a command printed."""
    return _OUTPUT.sub(" ", text)


@lru_cache(maxsize=_MEMO)
def _values(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The numbers that state a value, each with the words around it (its subject)."""
    return tuple((number, frozenset(words)) for number, words in _worded_values(text))


@lru_cache(maxsize=_MEMO)
def _worded_values(text: str) -> tuple[tuple[str, dict[str, str]], ...]:
    """``_values`` with each subject stem's word as the text says it (what evidence shows a person)."""
    found: list[tuple[str, dict[str, str]]] = []
    # a value's subject lies in its own clause: "timeout 120 s, 30 s kills uploads" gives 30 to the uploads
    for clause in _VALUE_CLAUSE.split(_NOT_A_VALUE.sub(" ", without_output(text))):
        for m in _NUMBER.finditer(clause):
            before = re.findall(r"[A-Za-z][\w-]*|[^\x00-\u2fff\s]", clause[max(0, m.start() - 60) : m.start()])[-4:]
            after = re.findall(r"[A-Za-z][\w-]*|[^\x00-\u2fff\s]", clause[m.end() : m.end() + 40])[:3]
            words: dict[str, str] = {}
            for w in (*before, *after):
                words.setdefault(stem(w.lower()), w)
            for dropped in STOP_WORDS | _TEMPLATE_WORDS | CJK_STOP_CHARS:
                words.pop(dropped, None)
            value = m.group(0)
            number = value.rstrip("0").rstrip(".") if re.fullmatch(r"\d+\.\d+", value) else value
            found.append((number, words))
    return tuple(found)


_NAME = re.compile(r"[a-z]*[_./]\w|[a-z]+\d|\d+[a-z]")  # an identifier: FEATURE_X, app.py, v2, s3


def _same_subject(cx: frozenset[str], cy: frozenset[str]) -> bool:
    """Two contexts speak of the same thing when they share at least half the words of the smaller one,
    and two of them unless it has only one ("dnsmasq's port set to 0" and "blocky serves port 53" share
    only "port": two services, two ports), and neither names an identifier the other lacks while the other
    names its own ("FEATURE_X is disabled" beside "FEATURE_Y is enabled": two settings)."""
    shared, smaller = len(cx & cy), min(len(cx), len(cy))
    # one word in common ("host") is a subject only when it is all the smaller context says
    if not shared or shared < max(SAME_SUBJECT_SHARE * smaller, min(2, smaller)):
        return False
    own_x, own_y = {w for w in cx - cy if _NAME.search(w)}, {w for w in cy - cx if _NAME.search(w)}
    return not (own_x and own_y)


def _in_step(a: str, b: str) -> bool:
    """The same template filled in for two different things: every value of each side differs from every
    value of the other, there are at least two of them, and the words around them are the same ("Port 8000
    is taken: use PORT=8001" beside "Port 9000 is taken: use PORT=9001"). The first value names which
    thing the rest is about; a real contradiction keeps the thing and changes its value."""
    va, vb = _values(a), _values(b)
    if len(va) < 2 or len(va) != len(vb) or {x for x, _ in va} & {y for y, _ in vb}:
        return False
    return all(cx == cy for (_, cx), (_, cy) in zip(va, vb, strict=True))


def _numeric_evidence(a: str, b: str) -> str:
    """A value of ``a`` whose subject is best matched, in ``b``, by another value. The same number may
    appear on both sides and still be contradicted: "timeout 30 s" vs "timeout 120 s, 30 s kills
    uploads" gives the timeout 120 and says what 30 does. Parallel facts (``_in_step``) and values of
    different subjects (``_same_subject``) are no evidence."""
    if _in_step(a, b):
        return ""
    vb = _values(b)
    said_by_a = {x for x, _ in _values(a)}
    for x, worded in _worded_values(a):
        cx = frozenset(worded)
        shared = [(len(cx & cy), y, cy) for y, cy in vb if _same_subject(cx, cy)]
        if not shared:
            continue
        best = max(n for n, _, _ in shared)
        nearest = [(y, cy) for n, y, cy in shared if n == best]
        if any(y == x for y, _ in nearest):
            continue
        # among equally near values of ``b``, the one ``a`` does not also state, of the same shape (a version
        # 1.6 is no counterpart of a port 11211), whose words are most nearly the same
        y, cy = max(nearest, key=lambda c: (c[0] not in said_by_a, _shape(c[0]) == _shape(x), _jaccard(cx, c[1])))
        words = [worded[w] for w in worded if w in cy and not re.fullmatch(r"[A-Za-z]", worded[w])][:3]
        return f"different values: {x} vs {y} ({', '.join(words)})"
    return ""


def _shape(number: str) -> str:
    return "decimal" if "." in number else "whole"


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    return len(x & y) / len(x | y) if x | y else 0.0


def _clauses(text: str) -> list[str]:
    return [c for s in split_sentences(text) for c in _CLAUSE.split(s) if c.strip()]


def _negation_evidence(a: str, b: str) -> str:
    """A negation on one side only, in a clause that the other side states without one."""
    # code spans first: a quote left open inside one (a commit message cut short) would pair with the
    # next quote and leave the quoted error output that follows looking like the bullet's own words
    ca, cb = _claim_clauses(a), _claim_clauses(b)
    negated = [(c, m) for c, m in ca if m]
    other = cb
    if not negated:
        negated = [(c, m) for c, m in cb if m]
        other = ca
    if not negated or any(m for _, m in other):
        return ""
    said = " ".join(c for c, _ in other)
    for clause, match in negated:
        plain = _NEGATION.sub(" ", clause)
        # what the negated clause is about, said by the other side in any of its clauses: "Never use tabs
        # in Makefiles" denies "Tabs are always better than spaces in Makefiles"
        if any(word_overlap(plain, o, _TEMPLATE_WORDS) >= _NEGATION_MIN_OVERLAP for o, _ in other) or (
            _contained(plain, said) >= _NEGATION_MIN_CONTAINED
        ):
            return f"negation on one side only: {match.group(0)!r}"
    return ""


@lru_cache(maxsize=_MEMO)
def _claim_clauses(text: str) -> tuple[tuple[str, re.Match[str] | None], ...]:
    """The clauses of what ``text`` claims (code spans and quoted output set aside), each with its
    negation, if any."""
    return tuple((c, _NEGATION.search(_CODE.sub(" ", c))) for c in _clauses(without_output(_CODE.sub(" ", text))))


def _contained(part: str, whole: str) -> float:
    """The share of ``part``'s meaningful words that ``whole`` says too."""
    words = _words(part) - _TEMPLATE_WORDS
    said = _words(whole)
    return len(words & said) / len(words) if words else 0.0


def contradiction_evidence(a: str, b: str) -> tuple[str, ...]:
    """Why two similar texts may disagree: different numbers for the same subject, a negation on one
    side only (of a clause the other side states), or opposite advice. Quoted tool output, repeat counts,
    ids and the Reflector's template words are not evidence. Empty when nothing points to a
    contradiction."""
    evidence = [e for e in (_numeric_evidence(a, b), _negation_evidence(a, b)) if e]
    for (la, ra), (lb, rb) in zip(_advice(a), _advice(b), strict=True):
        if la[0] and rb[0] and not ra[0] and not lb[0] and _same_subject(la[1], rb[1]):
            evidence.append(f"opposite advice: {la[0]!r} vs {rb[0]!r}")
        elif ra[0] and lb[0] and not la[0] and not rb[0] and _same_subject(ra[1], lb[1]):
            evidence.append(f"opposite advice: {ra[0]!r} vs {lb[0]!r}")
    return tuple(evidence)


Advice = tuple[str, frozenset[str]]  # the advice word said ("" when not) and the words of its clause


@lru_cache(maxsize=_MEMO)
def _advice(text: str) -> tuple[tuple[Advice, Advice], ...]:
    """For each pair of opposites, the word of each side that ``text`` says outside quoted output ("") and
    what it is said of (the other words of its clause): "enable X" and "disable Y" is no opposite advice."""
    clauses = _clauses(without_output(text))  # once, not once a pattern: an import asks this of every text
    found = []
    for left, right in _OPPOSITE_PATTERNS:
        sides = []
        for pattern in (left, right):
            hit = next(((c, m) for c in clauses if (m := pattern.search(c))), None)
            if hit is None:
                sides.append(("", frozenset[str]()))
                continue
            clause, m = hit
            about = _words(clause[: m.start()] + " " + clause[m.end() :]) - _TEMPLATE_WORDS
            sides.append((m.group(0), about))
        found.append((sides[0], sides[1]))
    return tuple(found)


_MASK = re.compile(r"\[REDACTED:[\w-]+\]")  # the sanitizer's stand-in is no word of the lesson


def word_overlap(a: str, b: str, ignore: frozenset[str] = frozenset()) -> float:
    """Jaccard of the two texts' meaningful words (code-aware, CJK bigrams, light stemming), masked
    secrets left out."""
    wa, wb = _words(a) - ignore, _words(b) - ignore
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


@lru_cache(maxsize=_MEMO)
def _words(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in query_terms(_MASK.sub(" ", text)))


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


def merge_contents(kept: str, other: str) -> str:
    """Deterministic ``merge_content``: the kept text, then the other's sentences it does not already say."""
    have = {s.lower() for s in split_sentences(kept)}
    extra = [s for s in split_sentences(other) if s.lower() not in have]
    return " ".join([kept.strip(), *extra]) if extra else kept


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))


MAX_ORIGIN_CHARS = 500
_MORE = re.compile(r"\+(\d+)")


_SOURCE = re.compile(r"^(?:session|path|sha):\S+$")  # a transcript key: one session a lesson was learned from


def origins(bullet: Bullet) -> tuple[str, ...]:
    """Where a bullet was learned: one entry per session (transcript key) that taught it. A learned bullet's
    origin also says the steps and the client (``session:ID · steps 3,4 ·
    claude-code``): only its keys are sources. An origin without keys (an import, an old store) counts each of
    its words."""
    words = [w for w in bullet.origin.split() if not _MORE.fullmatch(w)]
    keys = [w for w in words if _SOURCE.match(w)]
    return tuple(dict.fromkeys(keys)) if keys else tuple(w for w in words if w != "·")


def confirmations(bullet: Bullet) -> int:
    """How many sources taught this bullet (1 for a bullet met once, 0 when its origin is unknown)."""
    more = _MORE.fullmatch(bullet.origin.split()[-1]) if bullet.origin.split() else None
    return len(origins(bullet)) + (int(more.group(1)) if more else 0)


def _first_and_others(origin: str) -> tuple[str, list[str]]:
    """A (merged) origin as its first source's whole provenance and the keys of the sources met since."""
    words = origin.split()
    if words and _MORE.fullmatch(words[-1]):
        origin = origin.rsplit(None, 1)[0]
    if " · " not in origin:  # bare keys: ``session:one session:two``
        words = origin.split()
        return (words[0] if words else ""), words[1:]
    groups = origin.split(" · ")
    last = groups[-1].split()
    if len(groups) > 2 and last and all(_SOURCE.match(w) for w in last):
        return " · ".join(groups[:-1]), last
    return origin, []


def _joined_origin(existing: Bullet, new: Bullet) -> str:
    """The first source's provenance whole (key, steps, client), then each other source's key once; past
    MAX_ORIGIN_CHARS a trailing ``+N`` counts the rest."""
    first, others = _first_and_others(existing.origin)
    listed = list(origins(existing))
    more = confirmations(existing) - len(listed) + confirmations(new) - len(origins(new))
    others += [o for o in dict.fromkeys(origins(new)) if o not in listed]

    def joined() -> str:
        sep = " · " if " · " in first else " "
        return first + (sep + " ".join(others) if others else "") + (f" +{more}" if more else "")

    while others and len(joined()) > MAX_ORIGIN_CHARS:
        others.pop()
        more += 1
    return joined()


def merge(existing: Bullet, new: Bullet, strategy: MergeStrategy, now: datetime) -> Bullet:
    """The merged bullet keeps the existing id. ``keep_best`` keeps the text with the higher instructivity
    score (the existing one on a tie); ``merge_content`` adds what the other says. Metadata lists are
    united and the merge counts as one reinforcement (a recall).

    The same lesson met again from another source (another session) is a confirmation: its origin joins
    the bullet's ``origin`` list (see ``confirmations``) and the confidences combine as independent
    evidence (1 - (1-a)(1-b)); met again from the same or an unknown source, the higher confidence is
    kept. An origin is one word (a transcript key such as ``session:ID``); the list is space-separated."""
    best = new if new.instructivity_score > existing.instructivity_score else existing
    other = existing if best is new else new
    content = best.content if strategy == "keep_best" else merge_contents(best.content, other.content)
    origin = _joined_origin(existing, new)
    confidence = max(existing.confidence, new.confidence)
    if origins(existing) and set(origins(new)) - set(origins(existing)):
        # 1.0 is what a person states; learned evidence approaches it without reaching it
        combined = min(0.99, 1 - (1 - existing.confidence) * (1 - new.confidence))
        confidence = round(max(confidence, combined), 4)
    return existing.with_changes(
        content=content,
        section=best.section,
        knowledge_type=best.knowledge_type,
        instructivity_score=max(existing.instructivity_score, new.instructivity_score),
        confidence=min(1.0, confidence),
        tools=_union(existing.tools, new.tools),
        entities=_union(existing.entities, new.entities),
        tags=_union(existing.tags, new.tags),
        recall_count=existing.recall_count + 1,
        updated_at=now,
        origin=origin,
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
