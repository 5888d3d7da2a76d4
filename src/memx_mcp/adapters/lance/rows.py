"""Arrow schemas and the row ↔ domain conversions of the LanceDB store."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from ...domain.models import Bullet, Conflict, KnowledgeType, Section, Status
from ...text.tokenize import tokens

_TS = pa.timestamp("us", tz="UTC")
_STRS = pa.list_(pa.string())


def bullet_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("content", pa.string(), nullable=False),
            pa.field("terms", pa.string(), nullable=False),  # what the full-text index sees
            pa.field("section", pa.string(), nullable=False),
            pa.field("knowledge_type", pa.string(), nullable=False),
            pa.field("instructivity_score", pa.float32(), nullable=False),
            pa.field("confidence", pa.float32(), nullable=False),
            pa.field("source", pa.string(), nullable=False),
            pa.field("tools", _STRS),
            pa.field("entities", _STRS),
            pa.field("tags", _STRS),
            pa.field("scope", pa.string(), nullable=False),
            pa.field("created_at", _TS, nullable=False),
            pa.field("updated_at", _TS, nullable=False),
            pa.field("last_recalled_at", _TS, nullable=True),
            pa.field("recall_count", pa.int32(), nullable=False),
            pa.field("status", pa.string(), nullable=False),
            pa.field("origin", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=True),
        ]
    )


def conflict_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("a_id", pa.string(), nullable=False),
            pa.field("b_id", pa.string(), nullable=False),
            pa.field("similarity", pa.float32(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("evidence", _STRS),
            pa.field("scope", pa.string(), nullable=False),
            pa.field("created_at", _TS, nullable=False),
            pa.field("status", pa.string(), nullable=False),
            pa.field("resolution", pa.string(), nullable=False),
        ]
    )


def index_text(b: Bullet) -> str:
    """The bullet's content and metadata, tokenized the way queries are (code parts, CJK bigrams)."""
    return " ".join(tokens(" ".join((b.content, *b.tools, *b.entities, *b.tags))))


def bullet_to_row(b: Bullet, terms: bool = True) -> dict[str, Any]:
    return {
        "id": b.id,
        "content": b.content,
        "terms": index_text(b) if terms else "",
        "section": b.section.value,
        "knowledge_type": b.knowledge_type.value,
        "instructivity_score": float(b.instructivity_score),
        "confidence": float(b.confidence),
        "source": b.source,
        "tools": list(b.tools),
        "entities": list(b.entities),
        "tags": list(b.tags),
        "scope": b.scope,
        "created_at": b.created_at,
        "updated_at": b.updated_at,
        "last_recalled_at": b.last_recalled_at,
        "recall_count": int(b.recall_count),
        "status": b.status.value,
        "origin": b.origin,
        "vector": list(b.vector) if b.vector is not None else None,
    }


def bullets_table(bullets: Iterable[Bullet], dim: int, terms: bool = True) -> pa.Table:
    """``terms=False``: for a copy that drops the full-text column (tokenizing is the costly part)."""
    return pa.Table.from_pylist([bullet_to_row(b, terms) for b in bullets], schema=bullet_schema(dim))


_SECTIONS = {m.value: m for m in Section}
_TYPES = {m.value: m for m in KnowledgeType}
_STATUSES = {m.value: m for m in Status}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIMES = ("created_at", "updated_at", "last_recalled_at")


def _micros(column: Any) -> list[Any]:
    """Timestamps as integer microseconds: pyarrow's own conversion of zoned timestamps to datetimes is the
    slow part of its row conversion; added to the epoch here, turning rows into Bullets takes less time than
    pyarrow's conversion to dicts alone (``python benchmarks/fulltext.py``)."""
    return list(column.cast(_TS).cast(pa.int64()).to_pylist())


def _vectors(column: Any) -> list[tuple[float, ...] | None]:
    """The vector column as tuples of Python floats: through numpy when no row is null (each float32 becomes
    the same Python float as ``to_pylist`` gives, in a fraction of its time: an import reads thousands of
    neighbours' rows), else row by row."""
    if column.null_count or not pa.types.is_fixed_size_list(column.type) or not len(column):
        return [None if v is None else tuple(v) for v in column.to_pylist()]
    flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return [tuple(row) for row in flat.reshape(len(column), -1).tolist()]


def table_to_bullets(table: pa.Table) -> list[Bullet]:
    """The rows of ``table`` (the bullet schema, ``vector`` and ``terms`` optional) as Bullets, converted
    column by column."""
    names = [n for n in table.column_names if n not in _TIMES and n not in ("terms", "vector")]
    col = {n: table.column(n).to_pylist() for n in names}
    created = [_EPOCH + timedelta(microseconds=m) for m in _micros(table.column("created_at"))]
    updated = [_EPOCH + timedelta(microseconds=m) for m in _micros(table.column("updated_at"))]
    recalled = [None if m is None else _EPOCH + timedelta(microseconds=m) for m in _micros(table["last_recalled_at"])]
    vectors = _vectors(table.column("vector")) if "vector" in table.column_names else [None] * table.num_rows
    return [
        Bullet(
            id=col["id"][k],
            content=col["content"][k],
            section=_SECTIONS[col["section"][k]],
            knowledge_type=_TYPES[col["knowledge_type"][k]],
            instructivity_score=round(col["instructivity_score"][k], 2),
            confidence=round(col["confidence"][k], 4),
            source=col["source"][k],
            tools=tuple(col["tools"][k] or ()),
            entities=tuple(col["entities"][k] or ()),
            tags=tuple(col["tags"][k] or ()),
            scope=col["scope"][k],
            created_at=created[k],
            updated_at=updated[k],
            last_recalled_at=recalled[k],
            recall_count=col["recall_count"][k],
            status=_STATUSES[col["status"][k]],
            origin=col["origin"][k],
            vector=vectors[k],
        )
        for k in range(table.num_rows)
    ]


def _float32(x: float) -> float:
    return float(array("f", (x,))[0])


def as_stored(b: Bullet) -> Bullet:
    """``b`` as ``table_to_bullets`` gives it back once stored (scores and vector at float32, rounded the
    same way; times in UTC), without the table's round trip: a batch reads its own writes through this."""
    utc = {t: getattr(b, t).astimezone(UTC) for t in _TIMES if getattr(b, t) is not None}
    return b.with_changes(
        instructivity_score=round(_float32(b.instructivity_score), 2),
        confidence=round(_float32(b.confidence), 4),
        vector=None if b.vector is None else tuple(array("f", b.vector).tolist()),
        **utc,
    )


def conflict_to_row(c: Conflict) -> dict[str, Any]:
    return {
        "id": c.id,
        "a_id": c.a_id,
        "b_id": c.b_id,
        "similarity": float(c.similarity),
        "kind": c.kind,
        "evidence": list(c.evidence),
        "scope": c.scope,
        "created_at": c.created_at,
        "status": c.status,
        "resolution": c.resolution,
    }


def row_to_conflict(r: dict[str, Any]) -> Conflict:
    created: datetime = r["created_at"]
    return Conflict(
        id=r["id"],
        a_id=r["a_id"],
        b_id=r["b_id"],
        similarity=round(float(r["similarity"]), 4),
        kind=r["kind"],
        evidence=tuple(r.get("evidence") or ()),
        scope=r["scope"],
        created_at=created,
        status=r["status"],
        resolution=r["resolution"],
    )
