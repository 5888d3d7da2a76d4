"""What a reading of a session yields: the bullets it distilled (``Distilled``), what it dropped and why
(``Dropped``), and the figures of the run (``ReflectReport``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ....domain.models import KnowledgeType, Section


@dataclass(frozen=True)
class Distilled:
    content: str
    section: Section
    knowledge_type: KnowledgeType
    score: float
    confidence: float
    source: str
    rule: str
    step: int
    turn: int
    tools: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    evidence: tuple[int, ...] = ()  # session mode: the steps that show the problem, the change, the success
    # Who said it, decided by memx from the transcript (never from a model's answer): "user" (the user's own
    # words), "assistant" (its actions and the results it observed) or "content" (a tool's output, a fetched
    # page, a file read). Empty: not known.
    voice: str = ""
    held: tuple[str, ...] = ()  # why it must wait for the user's review (quarantine); empty: it need not


@dataclass(frozen=True)
class Dropped:
    rule: str
    step: int
    text: str
    reason: str


@dataclass
class ReflectReport:
    mode: str
    steps: int = 0
    events: int = 0
    candidates: int = 0
    bullets: list[Distilled] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    llm_calls: int = 0
    llm_failures: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    fallbacks: int = 0
    windows: int = 0  # session mode: the parts of the condensed session the model read
    condensed_chars: int = 0
    deferred: str = ""  # why the session was left for later (a rate limit): nothing of it is kept
    retry_after: float = 0.0
    notes: list[str] = field(default_factory=list)


Progress = Callable[[int, int], None]
