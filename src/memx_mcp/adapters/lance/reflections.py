"""What the store remembers about reflected transcripts: how many steps of each were already reflected.
A small JSON file beside the tables, written under the store's write lock (a mixin of LanceStore)."""

from __future__ import annotations

import json
import logging
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from ...files import atomic_write

log = logging.getLogger(__name__)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        log.warning("reflected.json unreadable: starting over (the Curator still merges duplicates)")
        data = {}
    return data if isinstance(data, dict) else {}


class ReflectionLog:
    root: Path

    def write_lock(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def reflected_upto(self, key: str) -> int:
        """How many steps of transcript ``key`` were already reflected (0 for a new one)."""
        entry = _read(self.root / "reflected.json").get(key)
        return int(entry.get("steps", 0)) if isinstance(entry, dict) else 0

    def mark_reflected(self, key: str, steps: int) -> None:
        with self.write_lock():
            path = self.root / "reflected.json"
            state = _read(path)
            state[key] = {"steps": steps, "at": datetime.now().astimezone().isoformat()}
            atomic_write(path, json.dumps(state, indent=1))
