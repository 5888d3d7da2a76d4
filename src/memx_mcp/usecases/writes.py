"""The one way a bullet is built from what a door sends (remember, edit, import, reflect, a merge, the web
page): every field validated like ``remember`` validates its text, every text field masked, control
characters stripped, markup that could close or forge the hooks' frame made inert (``text/inert.py``).
``check`` is pure; ``Memory.write`` stores what it returns, under the write lock.

A ``Checked`` bullet can only come from ``check``: the store step takes nothing else, so a door cannot skip
the sanitizer by building a ``Bullet`` by hand."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, TypeVar

from ..domain.errors import InvalidInputError
from ..domain.inputs import (
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_ORIGIN_CHARS,
    MAX_RECALLS,
    MAX_SOURCE_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TERM_CHARS,
    MAX_TERMS,
    clean_line,
    clean_text,
)
from ..domain.models import Bullet, KnowledgeType, Section, Status, new_id
from ..domain.scopes import Scope, parse_scope
from ..domain.tags import state_of, without_reserved
from ..engine.reflector.classify import classify, extract_metadata, instructivity
from ..privacy import PrivacySanitizer
from ..text.inert import inert

ID = re.compile(r"[A-Za-z0-9_\-]{1,100}")
# Knowledge older than the tools it is about, or from the future, is a broken record, not a memory.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
E = TypeVar("E", bound=StrEnum)


@dataclass(frozen=True)
class Draft:
    """What a door asks to store, as it arrived (``object``: an imported JSON record is untrusted). ``None``
    means "derive it": classified, scored or extracted from the content, or now."""

    content: object
    scope: object = None  # None: the caller's default scope
    source: object = "manual"
    confidence: object = 1.0
    origin: object = ""
    tags: object = ()
    extra_tags: bool = True  # add the tags extracted from the content (remember) or not (a restored record)
    state: tuple[str, ...] = ()  # the state names it keeps (``domain/tags.py``): only a stored bullet's own
    tools: object = None
    entities: object = None
    section: object = None
    knowledge_type: object = None
    instructivity_score: object = None
    id: object = None
    created_at: object = None
    updated_at: object = None
    last_recalled_at: object = None
    recall_count: object = 0
    status: object = None
    vector: object = None

    @classmethod
    def of(cls, b: Bullet, **changes: object) -> Draft:
        """A stored bullet (with changes) sent back through the checks: an edit, a merge."""
        kept = {f.name: getattr(b, f.name) for f in fields(Bullet)}
        return cls(extra_tags=False, **{"state": state_of(b.tags), **kept, **changes})


@dataclass(frozen=True)
class Checked:
    """A bullet that passed ``check``."""

    bullet: Bullet


def with_vector(c: Checked, vector: Sequence[float]) -> Checked:
    """The checked bullet with its embedding (made ahead of the write, from its checked content)."""
    return Checked(c.bullet.with_changes(vector=tuple(vector)))


def check(draft: Draft, *, sanitizer: PrivacySanitizer, dim: int, now: datetime, scope: Scope) -> Checked:
    """The bullet ``draft`` describes, or InvalidInputError naming the field and what to do. ``scope`` is
    the default (and the current scope short forms resolve against it); ``dim`` the store's vector size."""
    # Masked, then made inert: a bullet's text can never close or forge the frame the hooks print it in.
    content = inert(_mask(sanitizer, clean_text(draft.content, "content", MAX_CONTENT_CHARS), MAX_CONTENT_CHARS))
    content = content[:MAX_CONTENT_CHARS]
    confidence = _number(draft.confidence, "confidence", 0.0, 1.0)
    cls = classify(content) if draft.section is None or draft.knowledge_type is None else None
    derive_tags = draft.extra_tags or draft.tags is None
    meta = extract_metadata(content) if None in (draft.tools, draft.entities) or derive_tags else None
    given_tags = _terms(sanitizer, draft.tags, "tag", MAX_TAGS, MAX_TAG_CHARS)
    # a state name is never taken from a door or from the text; a stored bullet keeps its own (Draft.of)
    tags = (*state_of(draft.state), *without_reserved((*given_tags, *(meta.tags if meta and derive_tags else ()))))
    created = _time(draft.created_at, "created_at", now)
    score = draft.instructivity_score
    return Checked(
        Bullet(
            id=_id(draft.id, sanitizer),
            content=content,
            section=cls.section if cls and draft.section is None else _enum(Section, draft.section, "section"),
            knowledge_type=cls.knowledge_type
            if cls and draft.knowledge_type is None
            else _enum(KnowledgeType, draft.knowledge_type, "knowledge_type"),
            instructivity_score=instructivity(content, confidence).score
            if score is None
            else _number(score, "instructivity_score", 0.0, 100.0),
            confidence=confidence,
            source=_mask(sanitizer, clean_line(draft.source, "source", MAX_SOURCE_CHARS), MAX_SOURCE_CHARS),
            scope=str(scope if draft.scope is None else parse_scope(clean_line(draft.scope, "scope", 300), scope)),
            created_at=created,
            updated_at=_time(draft.updated_at, "updated_at", created),
            tools=_terms(sanitizer, meta.tools if draft.tools is None and meta else draft.tools, "tool"),
            entities=_terms(sanitizer, meta.entities if draft.entities is None and meta else draft.entities, "entity"),
            tags=tuple(dict.fromkeys(tags))[:MAX_TAGS],
            last_recalled_at=None
            if draft.last_recalled_at is None
            else _time(draft.last_recalled_at, "last_recalled_at", now),
            recall_count=_count(draft.recall_count),
            status=Status.ACTIVE if draft.status is None else _enum(Status, draft.status, "status"),
            origin=_origin(sanitizer, draft.origin),
            vector=_vector(draft.vector, dim),
        )
    )


def _mask(sanitizer: PrivacySanitizer, text: str, limit: int) -> str:
    return sanitizer.mask(text)[:limit]


def _origin(sanitizer: PrivacySanitizer, value: object) -> str:
    if value in (None, ""):
        return ""
    return _mask(sanitizer, clean_line(value, "origin", MAX_ORIGIN_CHARS), MAX_ORIGIN_CHARS)


def _terms(
    sanitizer: PrivacySanitizer, values: object, what: str, most: int = MAX_TERMS, chars: int = MAX_TERM_CHARS
) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidInputError(f"{what}s must be a list of text")
    kept = [v for v in values if not (isinstance(v, str) and not v.strip())]
    if len(kept) > most:
        raise InvalidInputError(f"{len(kept)} {what}s; at most {most}")
    cleaned = (_mask(sanitizer, clean_line(v, what, chars), chars) for v in kept)
    return tuple(dict.fromkeys(cleaned))


def _id(value: object, sanitizer: PrivacySanitizer) -> str:
    if value is None or value == "":
        return new_id()
    if not isinstance(value, str) or not ID.fullmatch(value):
        shown = repr(value)[:40]
        raise InvalidInputError(f"id {shown} is not an id: 1 to {MAX_ID_CHARS} letters, digits, '_' or '-'")
    if sanitizer.mask(value) != value:  # ids are shown and exported as they are: one may not carry a secret
        raise InvalidInputError("the id looks like a secret; leave it out and memx makes one")
    return value


def _number(value: object, what: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{what} must be a number, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise InvalidInputError(f"{what} {value!r} is outside {low:g}..{high:g}")
    return number


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RECALLS:
        raise InvalidInputError(f"recall_count must be a whole number from 0 to {MAX_RECALLS}")
    return value


def _enum(kind: type[E], value: object, what: str) -> E:
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        for member in kind:
            if member.value.lower() == value.strip().lower():
                return member
    raise InvalidInputError(f"{what} {str(value)[:40]!r} is not one of: {', '.join(m.value for m in kind)}")


def _time(value: object, what: str, default: datetime) -> datetime:
    if value is None or value == "":
        return default
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and len(value) <= 40:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInputError(f"{what} is not an ISO timestamp: {value!r}") from exc
    else:
        raise InvalidInputError(f"{what} must be an ISO timestamp text")
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if not EARLIEST <= parsed < LATEST:
        raise InvalidInputError(f"{what} {parsed.isoformat()} is outside {EARLIEST.year}..{LATEST.year - 1}")
    return parsed


def _vector(value: object, dim: int) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidInputError("vector must be a list of numbers")
    if len(value) != dim:
        return None  # another model's vector: embedded again with this one
    if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in value):
        raise InvalidInputError("vector holds a value that is not a finite number (NaN, infinity or text)")
    return tuple(float(x) for x in value)


WriteHow = Literal["curate", "curate_each", "restore", "replace"]
