"""The notes of bullets waiting for review (voice, reasons, transcript excerpt), kept beside the tables in a
small JSON file, written under the store's write lock (a mixin of LanceStore). A store from before review
has no such file and opens as it was; a note whose bullet is gone is ignored and dropped with it."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ...domain.review import ReviewNote
from ...files import atomic_write

log = logging.getLogger(__name__)
FILE = "review.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        log.warning("%s unreadable: pending bullets show without their notes", FILE)
        data = {}
    return data if isinstance(data, dict) else {}


def _note(entry: object) -> ReviewNote | None:
    if not isinstance(entry, dict):
        return None
    reasons = entry.get("reasons")
    return ReviewNote(
        voice=str(entry.get("voice", "")),
        reasons=tuple(str(r) for r in reasons) if isinstance(reasons, list) else (),
        excerpt=str(entry.get("excerpt", "")),
    )


class ReviewNotes:
    root: Path

    def write_lock(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def review_notes(self, ids: Sequence[str]) -> dict[str, ReviewNote]:
        """The notes kept for ``ids`` (those without one are left out)."""
        data = _read(self.root / FILE)
        found = {i: _note(data.get(i)) for i in ids}
        return {i: n for i, n in found.items() if n is not None}

    def keep_review_notes(self, notes: Mapping[str, ReviewNote]) -> None:
        if not notes:
            return
        with self.write_lock():
            path = self.root / FILE
            data = _read(path)
            for i, n in notes.items():
                data[i] = {"voice": n.voice, "reasons": list(n.reasons), "excerpt": n.excerpt}
            atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False))

    def drop_review_notes(self, ids: Sequence[str]) -> None:
        with self.write_lock():
            path = self.root / FILE
            data = _read(path)
            if any(i in data for i in ids):
                kept = {k: v for k, v in data.items() if k not in ids}
                atomic_write(path, json.dumps(kept, indent=1, ensure_ascii=False))
