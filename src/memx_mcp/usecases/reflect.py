"""The Reflector use case: read a transcript, distill it, and store what survives through the Curator."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..domain.errors import InvalidInputError
from ..domain.models import Bullet, RememberResult, Status
from ..domain.review import MAX_EXCERPT_CHARS, ReviewNote, waits
from ..domain.scopes import Scope
from ..engine.reflector.readings import registry
from ..ports import Repositories, Where
from ..text.clip import head_and_tail
from ..text.inert import inert
from .deps import Deps
from .writes import Draft
from .writing import checked, write

if TYPE_CHECKING:
    from ..engine.reflector.pipeline import Reflector
    from ..engine.reflector.readings.report import Distilled, ReflectReport
    from ..engine.reflector.transcripts.transcript import Transcript

log = logging.getLogger(__name__)
MAX_TRANSCRIPT_BYTES = 50 * 1024 * 1024
KNOWN_BULLETS = 200  # of the target scope, the newest, handed to session mode (it shows the model 60)
UNREAD = "not a session format memx reads (Claude Code or Codex JSONL, Aider, SpecStory, session-export markdown)"


@dataclass
class ReflectResult:
    key: str
    scope: str
    start_step: int
    dry_run: bool
    report: ReflectReport
    stored: list[RememberResult] = field(default_factory=list)


# Where the clients keep their session transcripts, under the home folder.
SESSION_FOLDERS = (
    ".claude/projects",  # Claude Code
    ".codex/sessions",  # Codex CLI
    ".cursor/projects",  # Cursor's agent transcripts
    ".gemini/tmp",  # Gemini CLI
)
# Folders and files that hold credentials: never read, whoever asks and wherever they sit.
CREDENTIAL_FOLDERS = {
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".password-store",
    ".terraform.d",
    ".git",
    ".vault",
}
CREDENTIAL_SUBFOLDERS = {(".config", "gcloud"), (".config", "gh"), (".config", "op"), (".local", "share", "keyrings")}
CREDENTIAL_FILES = {".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".vault-token", ".my.cnf"}


def _credentials(path: Path) -> str | None:
    """The part of ``path`` that makes it a credential store, if any."""
    parts = path.parts
    for i, part in enumerate(parts):
        if part in CREDENTIAL_FOLDERS or any(parts[i : i + len(sub)] == sub for sub in CREDENTIAL_SUBFOLDERS):
            return part
    name = path.name
    if name in CREDENTIAL_FILES or name == ".env" or name.startswith(".env.") or name.endswith(".env"):
        return name
    if (name.startswith("id_") and (name.endswith(".pub") or "." not in name)) or name.endswith((".pem", ".key")):
        return name
    return None


def transcript_file(raw: str | Path, cwd: Path) -> Path:
    """A file a person names (``memx reflect FILE``): any file but a credential store."""
    text = str(raw)
    if "\x00" in text:
        raise InvalidInputError(f"{text!r}: a path cannot hold a NUL character")
    path = (cwd / Path(text).expanduser()).resolve()
    found = _credentials(path)
    if found:
        raise InvalidInputError(f"{text}: memx never reads credential files ({found}); give a session transcript")
    return path


def transcript_roots(cwd: Path, repositories: Repositories) -> list[Path]:
    """Where the MCP tool may read transcripts: the clients' session folders and the project's repository
    (never the file system's root or the home folder as such: a server started in / or ~ gets no more)."""
    home = Path.home().resolve()
    roots = [(home / folder).resolve() for folder in SESSION_FOLDERS]
    project = repositories.root(cwd)
    if project is not None and not (project == home or project in home.parents or project == Path(project.anchor)):
        roots.append(project.resolve())
    return roots


def allowed_path(raw: str, cwd: Path, repositories: Repositories) -> Path:
    """A transcript path the MCP tool may read: under a client's session folder or the project's repository,
    never a credential file. ``memx reflect FILE`` reads any other file its user names."""
    path = transcript_file(raw, cwd)
    roots = transcript_roots(cwd, repositories)
    if not any(path.is_relative_to(r) for r in roots):
        folders = ", ".join("~/" + f for f in SESSION_FOLDERS)
        raise InvalidInputError(
            f"{raw}: the reflect tool reads transcripts only from the clients' session folders ({folders}) or "
            "the project's repository; `memx reflect FILE` in a terminal reads a file you name"
        )
    return path


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _unpacked(path: Path, data: bytes) -> bytes:
    """A zstd-compressed transcript (Codex compresses rollouts older than 7 days to ``.jsonl.zst``)
    decompressed, up to the size a transcript may have; any other file as it is."""
    if not data.startswith(ZSTD_MAGIC):
        return data
    import pyarrow as pa  # its zstd codec: no extra dependency for a format only old Codex rollouts use

    try:
        stream = pa.CompressedInputStream(pa.BufferReader(data), "zstd")
        out = stream.read(MAX_TRANSCRIPT_BYTES + 1)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InvalidInputError(f"{path}: a zstd file that does not decompress ({exc})") from exc
    if len(out) > MAX_TRANSCRIPT_BYTES:
        raise InvalidInputError(f"{path}: over {MAX_TRANSCRIPT_BYTES // 10**6} MB once decompressed")
    return bytes(out)


def read_transcript(path: Path) -> str:
    """Read a transcript file: a clear error for what is missing, huge, binary or not UTF-8 text."""
    if not path.is_file():
        raise InvalidInputError(f"{path}: no such file")
    size = path.stat().st_size
    if size > MAX_TRANSCRIPT_BYTES:
        raise InvalidInputError(f"{path}: {size / 1e6:.0f} MB; transcripts up to {MAX_TRANSCRIPT_BYTES // 10**6} MB")
    data = _unpacked(path, path.read_bytes())
    if b"\x00" in data[:65536]:
        raise InvalidInputError(f"{path}: binary file; give a JSONL, JSON or text transcript")
    try:  # line ends as Python reads text files: a CRLF export reads as the same session as its LF copy
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{path}: not UTF-8 text (byte {exc.start}); give a JSONL, JSON or text transcript"
        ) from exc


def transcript_key(text: str, session_id: str, path: Path | None) -> str:
    """The key under which progress through a transcript is kept. A session id written inside the text is
    trusted only when the file is named after it (as clients name theirs): otherwise any transcript could
    claim another session's id and mark that session reflected."""
    if session_id and path is not None and path.stem == session_id:
        return f"session:{session_id}"
    if path is not None:  # hashed: a path may name the user (/home/NAME/…), and keys are stored
        return "path:" + hashlib.sha256(str(path.resolve()).encode("utf-8", "replace")).hexdigest()[:24]
    return "sha:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]


def make_reflector(deps: Deps, mode: str | None, text: str = "") -> tuple[Reflector, list[str]]:
    from ..domain.catalog import ENABLE_LEARNING
    from ..engine.reflector.pipeline import Reflector  # the rules load with the first reflect, not at start-up

    settings = deps.settings
    chosen = mode or settings.reflector_mode
    reading = registry.mode(chosen)  # auto: the mode a model reads with
    notes: list[str] = []
    refiner = None
    if reading.needs_model:
        timeout = settings.session_timeout if reading.whole_session else settings.llm_timeout
        refiner, note = deps.refiners(settings.llm_model, settings.llm_base_url, timeout)
        if note:
            notes.append(note)
    if refiner is None and (reading.needs_model or reading.name == registry.WITHOUT_A_MODEL):
        notes.append(f"rules mode, the quiet floor: it keeps little and rarely anything false; {ENABLE_LEARNING}")
    sanitizer = deps.sanitizer.learning(text) if text else deps.sanitizer
    window = settings.session_window_chars
    reflector = Reflector(
        sanitizer,
        reading.name,
        refiner,
        settings.min_score,
        writes=True,
        window_chars=window,
        floor=settings.rules_floor,
    )
    return reflector, notes


def _is_dir(text: str) -> bool:
    try:  # the folder a transcript names is its author's text: it may hold a NUL or be too long
        return Path(text).is_dir()
    except (OSError, ValueError):
        return False


def _scope_for(deps: Deps, scope: str | None, cwd: str) -> Scope:
    if scope and scope.strip():
        return deps.workspace.resolve(scope)
    if cwd and _is_dir(cwd):
        return deps.workspace.detect(Path(cwd)).project_scope()
    return deps.workspace.current().project_scope()


def reflect(
    deps: Deps,
    text: str,
    *,
    path: Path | None = None,
    mode: str | None = None,
    dry_run: bool = False,
    scope: str | None = None,
    session_key: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReflectResult:
    from ..engine.reflector.transcripts.transcript import parse_transcript

    try:
        transcript = parse_transcript(text)
    except RecursionError as exc:
        raise InvalidInputError("the transcript is nested too deeply to be a session transcript") from exc
    key = session_key or transcript_key(text, transcript.session_id, path)
    start = 0 if dry_run else deps.store.reflected_upto(key)
    reflector, notes = make_reflector(deps, mode, transcript.text)  # learns from what bullets quote
    target = _scope_for(deps, scope, transcript.cwd)
    weighs_known = registry.mode(reflector.mode).whole_session
    known = [b.content for b in deps.store.active_in([str(target)])] if weighs_known else []
    report = reflector.reflect(transcript, start, progress, known=known[-KNOWN_BULLETS:])
    report.notes.extend(notes)
    failed = list(reflector.refiner.call_errors) if reflector.refiner is not None else []
    if failed:  # the rules took over for what those calls were to read: said, never silent
        report.notes.append(f"{len(failed)} model call(s) could not be made ({failed[-1]}): memx went on without them")
    if transcript.skipped_lines:
        report.notes.append(f"{transcript.skipped_lines} malformed line(s) skipped")
    report.notes.extend(transcript.notes)  # what the reader says: a thread not read, no tool results kept …
    if len(text) > 10 * 1024 and len(transcript.steps) <= 1:  # an unknown format is said, never silent
        report.notes.append(
            f"{len(text) // 1024} KB read as {transcript.format!r} gave {len(transcript.steps)} step(s): {UNREAD}"
        )
    result = ReflectResult(key, str(target), start, dry_run, report)
    if dry_run:
        return result
    if report.deferred:  # a rate limit: nothing is stored and the session stays unreflected, for later
        report.notes.append(f"the session was left for later: {report.deferred}")
        return result
    result.stored = keep(deps, report, transcript, key, target)
    return result


def keep(deps: Deps, report: ReflectReport, transcript: Transcript, key: str, target: Scope) -> list[RememberResult]:
    """Store what the Reflector distilled (``report.bullets``) through the write path, and mark the
    transcript read, under one lock. A bullet the ``review`` setting holds is stored pending, with its note
    (voice, reasons, the cited steps' excerpt); one the write path refuses is dropped with the reason."""
    from ..engine.reflector.readings.report import Dropped

    ready = []
    held: dict[str, ReviewNote] = {}
    waiting: set[tuple[str, str]] | None = None  # (scope, words) of what already waits for review
    again = 0
    client = transcript.format  # claude-code, codex, cursor, gemini, aider, specstory …
    for d in list(report.bullets):
        reasons = waits(deps.settings.review, d.held)
        try:
            one = checked(deps, draft(d, provenance(key, d.evidence, client), pending=bool(reasons)), target)
        except InvalidInputError as exc:  # a bullet the write path refuses is dropped, with the reason
            report.bullets.remove(d)
            report.dropped.append(Dropped(d.rule, d.step, d.content[:200], str(exc)))
            continue
        if reasons:  # held again with the same words: it is the one already waiting, not a second to review
            if waiting is None:
                waiting = {_waits_as(b) for b in deps.store.all_bullets(Where(status=Status.PENDING))}
            if _waits_as(one.bullet) in waiting:
                again += 1
                continue
            waiting.add(_waits_as(one.bullet))
        ready.append(one)
        if reasons:
            held[one.bullet.id] = ReviewNote(
                d.voice, reasons, excerpt(deps, transcript, d.evidence or (d.step,), d.content)
            )
    steps = len(transcript.steps)

    def then() -> None:  # under the same lock as the writes: a pending bullet never stands without its note
        deps.store.keep_review_notes(held)
        deps.store.mark_reflected(key, steps)

    outcomes = write(deps, ready, then=then)
    released = release_verified(deps, transcript, key, target)
    if released:
        report.notes.append(
            f"{len(released)} bullet(s) that waited for review only because their session never ran their advice: "
            "this session ran it, so they are active now"
        )
    if held:
        report.notes.append(f"{len(held)} learned bullet(s) wait for your review: run `memx review`")
    if again:
        report.notes.append(f"{again} held bullet(s) already waiting for review with the same words: not added twice")
    return [o for o in outcomes if o]


def release_verified(deps: Deps, transcript: Transcript, key: str, target: Scope) -> list[str]:
    """The bullets of ``target`` that wait for review only because the session they came from never ran what
    they advise (``UNBACKED``), which ``transcript`` (another session) ran successfully by the assistant's own
    choice with nothing else to hold them: approved through the Curator, as the user's key would. Their ids."""
    from ..engine.reflector.pipeline import verified_by
    from ..engine.reflector.quarantine import UNBACKED
    from .review import approve

    waiting = deps.store.all_bullets(Where(status=Status.PENDING, scopes=(str(target),)))
    notes = deps.store.review_notes([b.id for b in waiting])
    only_unrun = [
        b
        for b in waiting
        if b.origin.split()[:1] != [key]  # its own session cannot verify it
        and notes.get(b.id) is not None
        and notes[b.id].reasons
        and all(r.startswith(UNBACKED) for r in notes[b.id].reasons)
    ]
    verified = [
        b for b, ok in zip(only_unrun, verified_by(transcript, [b.content for b in only_unrun]), strict=True) if ok
    ]
    for b in verified:
        approve(deps, b.id)
    return [b.id for b in verified]


def _waits_as(bullet: Bullet) -> tuple[str, str]:
    """What makes two bullets waiting for review the same one: their scope and their words."""
    return bullet.scope, " ".join(bullet.content.split()).casefold()


EXCERPT_STEP_CHARS = 1400  # of one step; a longer one shows its start, the bullet's words in it, and its end
_WORD = re.compile(r"[\w./:-]{6,}")


def excerpt(deps: Deps, transcript: Transcript, steps: tuple[int, ...], content: str = "") -> str:
    """The transcript's cited steps as a reviewer reads them: who spoke or which tool ran, its text, input
    and result (a long one around where the bullet's words are), masked and made inert, within
    ``MAX_EXCERPT_CHARS``."""
    by_index = {s.index: s for s in transcript.steps}
    parts = []
    for i in dict.fromkeys(steps):
        step = by_index.get(i)
        if step is None:
            continue
        who = f"tool {step.tool}" if step.tool else step.role
        body = "\n".join(t for t in (step.command, step.text, step.result) if t)
        head = f"[step {i} · {who}{' · error' if step.is_error else ''}]\n"
        parts.append(head + around(body, content, EXCERPT_STEP_CHARS))
    text = inert(deps.sanitizer.mask("\n\n".join(parts)))
    return text if len(text) <= MAX_EXCERPT_CHARS else text[: MAX_EXCERPT_CHARS - 1] + "…"


def around(body: str, content: str, size: int) -> str:
    """``body`` whole when it fits; else its start, the stretch where the bullet's longest word first
    appears (what the reviewer must see), and its end, each cut marked."""
    body = body.strip()
    if len(body) <= size:
        return body
    lowered = body.lower()
    words = sorted(set(_WORD.findall(content.lower())), key=len, reverse=True)
    at = next((k for k in (lowered.find(w) for w in words) if k >= 0), -1)
    head, tail = size // 6, size // 8
    if at < head + 100 or at > len(body) - tail - 100:  # not found, or in the start or the end anyway
        return head_and_tail(body, size - tail, tail)
    middle = size - head - tail
    start = max(head, at - middle // 3)
    end = min(len(body) - tail, start + middle)
    cut = "\n[… {} characters left out …]\n"
    return body[:head] + cut.format(start - head) + body[start:end] + cut.format(len(body) - tail - end) + body[-tail:]


def provenance(key: str, steps: tuple[int, ...], client: str) -> str:
    """Where a bullet came from: the transcript key, the steps that show it (session mode), the client."""
    shown = ",".join(map(str, steps[:12])) + ("…" if len(steps) > 12 else "")
    return " · ".join(p for p in (key, f"steps {shown}" if steps else "", client) if p)


def draft(d: Distilled, origin: str, *, pending: bool = False) -> Draft:
    """What the Reflector distilled, as the write path takes it. ``origin`` is the transcript key: a session
    id or a hash, never a raw path. ``pending``: it waits for the user's review."""
    return Draft(
        status=Status.PENDING if pending else Status.ACTIVE,
        content=d.content,
        source=d.source,
        confidence=d.confidence,
        origin=origin,
        tags=d.tags,
        extra_tags=False,
        tools=d.tools,
        entities=d.entities,
        section=d.section,
        knowledge_type=d.knowledge_type,
        instructivity_score=d.score,
    )
