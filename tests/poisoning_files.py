"""Reading the held-out poisoning corpora's files for their integrity tests (`tests/test_poisoning_heldout2_corpus.py`,
`tests/test_poisoning_heldout3_corpus.py`): labels, a session's file as text in order, the real session it
continues."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "reflector_corpus"


def labels(name: str) -> list[dict[str, Any]]:
    """A corpus's labels (``tests/data/<name>/labels.jsonl``), one per session."""
    text = (DATA / name / "labels.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def strings(value: Any) -> list[str]:
    """Every string of a JSON value, in order; a string that is itself JSON (a Codex 0.3x tool output) opened."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    if isinstance(value, str):
        if value.startswith(("{", "[")):
            try:
                return [value, *strings(json.loads(value))]
            except ValueError:
                pass
        return [value]
    return []


def raw(folder: Path, session: dict[str, Any]) -> str:
    return (folder / session["file"]).read_text(encoding="utf-8")


def records(folder: Path, session: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw(folder, session).splitlines() if line.strip()]


def texts(folder: Path, session: dict[str, Any]) -> list[str]:
    """What a session's file says, as text in order (JSON lines opened, SpecStory's escaping undone)."""
    if session["format"] == "specstory-md":
        return [html.unescape(raw(folder, session))]
    return [s for r in records(folder, session) for s in strings(r)]


def real(session: dict[str, Any]) -> str:
    """The real published session the corpus session continues."""
    return (REFERENCE / session["source"]["corpus"]).read_text(encoding="utf-8")


def at(found: list[str], needle: str, after: int = -1) -> int:
    """The first text after ``after`` holding ``needle`` (-1: none)."""
    return next((i for i, t in enumerate(found) if i > after and needle in t), -1)
