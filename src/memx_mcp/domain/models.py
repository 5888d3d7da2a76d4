"""Domain values: the bullet and what the engine says about it. Frozen dataclasses; pydantic lives at the
edges (``schemas.py``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal


class Section(StrEnum):
    COMMANDS = "COMMANDS"
    DEBUGGING = "DEBUGGING"
    ARCHITECTURE = "ARCHITECTURE"
    WORKFLOW = "WORKFLOW"
    TOOLS = "TOOLS"
    PATTERNS = "PATTERNS"
    PREFERENCES = "PREFERENCES"
    GENERAL = "GENERAL"


class KnowledgeType(StrEnum):
    METHOD = "METHOD"
    TRICK = "TRICK"
    PITFALL = "PITFALL"
    PREFERENCE = "PREFERENCE"
    KNOWLEDGE = "KNOWLEDGE"


class Status(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    PENDING = "pending"  # learned, waiting for the user's review: never injected, never recalled as trusted


def new_id() -> str:
    return "b_" + uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class Bullet:
    """One stored piece of knowledge (SPEC §3)."""

    id: str
    content: str
    section: Section
    knowledge_type: KnowledgeType
    instructivity_score: float
    confidence: float
    source: str
    scope: str
    created_at: datetime
    updated_at: datetime
    tools: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    last_recalled_at: datetime | None = None
    recall_count: int = 0
    status: Status = Status.ACTIVE
    origin: str = ""
    vector: tuple[float, ...] | None = field(default=None, repr=False, compare=False)

    def with_changes(self, **changes: Any) -> Bullet:
        return replace(self, **changes)

    @property
    def metadata_terms(self) -> frozenset[str]:
        return frozenset(t.lower() for t in (*self.tools, *self.entities, *self.tags))


ConflictKind = Literal["contradiction", "overlap"]


@dataclass(frozen=True)
class Conflict:
    """Two bullets that may say opposite things (SPEC §5)."""

    id: str
    a_id: str
    b_id: str
    similarity: float
    kind: ConflictKind
    evidence: tuple[str, ...]
    scope: str
    created_at: datetime
    status: Literal["open", "resolved"] = "open"
    resolution: str = ""


@dataclass(frozen=True)
class ScoreBreakdown:
    """Every term of the SPEC §7 fusion, so a person can see why a bullet ranks where it does."""

    l1: float
    l2: float
    l3: float
    semantic: float
    keyword: float
    blended: float
    decay: float  # the bullet's weight on the forgetting curve (SPEC §6), as gc and the page see it
    decay_effect: float  # what that weight multiplies the ranking by (docs/spec-changes.md)
    recency: float
    scope: float
    final: float


@dataclass(frozen=True)
class Hit:
    bullet: Bullet
    score: ScoreBreakdown
    tokens: int


RetrievalMode = Literal["hybrid", "keyword-only"]


@dataclass(frozen=True)
class RecallResult:
    query: str
    scope: str
    mode: RetrievalMode
    hits: tuple[Hit, ...]
    candidates: int
    omitted_by_budget: int
    tokens_used: int
    notes: tuple[str, ...] = ()
    scope_why: str = ""  # which scope was searched, and why that one


RememberAction = Literal["inserted", "merged", "inserted_with_conflict"]


@dataclass(frozen=True)
class RememberResult:
    action: RememberAction
    bullet: Bullet
    merged_into: str | None = None
    similarity: float | None = None
    conflicts: tuple[Conflict, ...] = ()
    notes: tuple[str, ...] = ()
    scope_why: str = ""  # which scope the bullet went to, and why that one


@dataclass(frozen=True)
class ForgetResult:
    archived: tuple[str, ...]
    purged: tuple[str, ...]
    not_found: tuple[str, ...]
    would_forget: tuple[str, ...] = ()  # a query-based forget without confirmation only previews


@dataclass(frozen=True)
class ConflictView:
    """A conflict with both bullets and a recommendation of which one to keep."""

    conflict: Conflict
    a: Bullet
    b: Bullet
    recommended: Literal["a", "b", "both"]
    reason: str


@dataclass(frozen=True)
class Stats:
    total: int
    active: int
    archived: int
    by_scope: dict[str, int]
    by_section: dict[str, int]
    by_type: dict[str, int]
    open_conflicts: int  # open records between two active bullets, every scope, of both kinds
    model: str
    model_note: str
    home: str
    store_bytes: int
    open_contradictions: int = 0
    open_overlaps: int = 0
