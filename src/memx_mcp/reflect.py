"""Memory's Reflector use case: read a transcript, distill it, and store what survives through the Curator.
Kept apart from ``memory.py`` so that each stays small."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInputError
from .models import Bullet, RememberResult, new_id
from .reflector.pipeline import Distilled, Reflector, ReflectReport
from .reflector.transcript import parse_transcript
from .scopes import Scope, detect_scope

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger(__name__)
MAX_TRANSCRIPT_BYTES = 50 * 1024 * 1024
UNREAD = "not a session format memx reads (Claude Code or Codex JSONL, Aider, SpecStory, session-export markdown)"


@dataclass
class ReflectResult:
    key: str
    scope: str
    start_step: int
    dry_run: bool
    report: ReflectReport
    stored: list[RememberResult] = field(default_factory=list)


def read_transcript(path: Path) -> str:
    """Read a transcript file: a clear error for what is missing, huge, binary or not UTF-8."""
    if not path.is_file():
        raise InvalidInputError(f"{path}: no such file")
    size = path.stat().st_size
    if size > MAX_TRANSCRIPT_BYTES:
        raise InvalidInputError(f"{path}: {size / 1e6:.0f} MB; transcripts up to {MAX_TRANSCRIPT_BYTES // 10**6} MB")
    data = path.read_bytes()
    if b"\x00" in data[:65536]:
        raise InvalidInputError(f"{path}: binary file; give a JSONL, JSON or text transcript")
    return data.decode("utf-8", errors="replace")


def allowed_path(raw: str, cwd: Path) -> Path:
    """A transcript path the server may read: a file under the user's home, the working directory or the
    temp folder (never /etc, other users' folders …)."""
    import tempfile

    path = Path(raw).expanduser().resolve()
    roots = [Path.home().resolve(), cwd.resolve(), Path(tempfile.gettempdir()).resolve()]
    if not any(path == r or r in path.parents for r in roots):
        raise InvalidInputError(f"{raw}: reflect reads transcripts under your home, working or temp folder only")
    return path


def transcript_key(text: str, session_id: str, path: Path | None) -> str:
    if session_id:
        return f"session:{session_id}"
    if path is not None:  # hashed: a path may name the user (/home/NAME/…), and keys are stored
        return "path:" + hashlib.sha256(str(path.resolve()).encode("utf-8", "replace")).hexdigest()[:24]
    return "sha:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]


def make_reflector(memory: Memory, mode: str | None, text: str = "") -> tuple[Reflector, list[str]]:
    settings = memory.settings
    chosen = mode or settings.reflector_mode
    if chosen not in ("rules", "hybrid", "llm"):
        raise InvalidInputError(f"mode must be rules, hybrid or llm, not {chosen!r}")
    notes: list[str] = []
    refiner = None
    if chosen != "rules":
        from .anthropic_refiner import make_refiner

        refiner, note = make_refiner(settings.llm_model, settings.llm_base_url, settings.llm_timeout)
        if note:
            notes.append(note)
    sanitizer = memory.sanitizer.learning(text) if text else memory.sanitizer
    return Reflector(sanitizer, chosen, refiner, settings.min_score), notes


def _scope_for(memory: Memory, scope: str | None, cwd: str) -> Scope:
    if scope and scope.strip():
        return memory.resolve_scope(scope)
    if cwd and Path(cwd).is_dir():
        return detect_scope(Path(cwd)).project_scope()
    return memory.current_scope().project_scope()


def reflect(
    memory: Memory,
    text: str,
    *,
    path: Path | None = None,
    mode: str | None = None,
    dry_run: bool = False,
    scope: str | None = None,
    session_key: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReflectResult:
    transcript = parse_transcript(text)
    key = session_key or transcript_key(text, transcript.session_id, path)
    start = 0 if dry_run else memory.store.reflected_upto(key)
    reflector, notes = make_reflector(memory, mode, transcript.text)  # learns from what bullets quote
    report = reflector.reflect(transcript, start, progress)
    report.notes.extend(notes)
    if transcript.skipped_lines:
        report.notes.append(f"{transcript.skipped_lines} malformed line(s) skipped")
    if len(text) > 10 * 1024 and len(transcript.steps) <= 1:  # an unknown format is said, never silent
        report.notes.append(
            f"{len(text) // 1024} KB read as {transcript.format!r} gave {len(transcript.steps)} step(s): {UNREAD}"
        )
    target = _scope_for(memory, scope, transcript.cwd)
    result = ReflectResult(key, str(target), start, dry_run, report)
    if dry_run:
        return result
    vectors, note = memory.embed_texts([d.content for d in report.bullets]) if report.bullets else (None, "")
    now = memory.clock()
    with memory.store.write_lock():
        for i, d in enumerate(report.bullets):
            bullet = _bullet(d, str(target), key, now, vectors[i] if vectors else None)
            result.stored.append(memory._curate(bullet, now, (note,) if note else ()))
        memory.store.mark_reflected(key, len(transcript.steps))
    return result


def _bullet(d: Distilled, scope: str, origin: str, now: datetime, vector: tuple[float, ...] | None) -> Bullet:
    """``origin`` is the transcript key: a session id or a hash, never a raw path."""
    return Bullet(
        id=new_id(),
        content=d.content,
        section=d.section,
        knowledge_type=d.knowledge_type,
        instructivity_score=d.score,
        confidence=d.confidence,
        source=d.source,
        scope=scope,
        created_at=now,
        updated_at=now,
        tools=d.tools,
        entities=d.entities,
        tags=d.tags,
        origin=origin[:500],
        vector=vector,
    )
