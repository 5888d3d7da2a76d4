"""The moment of need: a tool call of the agent, and the one or two notes memx has for it right then.

- After a shell command failed: the bullets that are a fix for the same program and the same error
  signature (the error line with its paths, numbers, hashes and quoted names taken out; the program, the
  error class and the message's words kept).
- Before an edit of a file (after a read of it, for clients whose before-hook cannot add context): the
  bullets that warn about that file (its path, or a distinctive file name, in the bullet's text).
- A successful command: nothing, unless a bullet warns about that exact command.

Each bullet at most once per session (remembered in ``MEMX_HOME/run/moments/``, so a restarted helper
still knows), within ``BUDGET`` tokens, nothing at all below the floors (calibrated on the tune part of
``benchmarks/moment_replay.py``), never a bullet waiting for review, and framed as data (``frame.py``)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from ..config import Settings
from ..domain.models import Bullet, KnowledgeType, Status
from ..domain.tool_events import ToolEvent
from ..engine.reflector.shell.commands import clean_command, error_signature, program, strip_ansi
from ..engine.retrieval.budget import estimate_tokens
from ..files import atomic_write
from ..text.inert import inert
from . import frame
from .deps import Deps
from .injection import log_injection
from .staleness import fresh as still_there

BUDGET = 150  # tokens, the frame included
FIX_FLOOR = 0.6  # share of the failure's error words a fix must carry (benchmarks/moment_replay.py, tune part)
FILE_FLOOR = 0.7  # path 1.0, distinctive name or folder 0.8, times 1 for a warning and 0.6 otherwise (tune part)
CANDIDATES = 30
Need = Literal["fix", "file", "command"]

HEADINGS = {
    "fix": "memx: an earlier session met this error:",
    "file": "memx: an earlier session noted about this file:",
    "command": "memx: an earlier session noted about this command:",
}
_STOP = frozenset(
    "the a an and or of to in on at for is are was were be been not no with from by as it this that "
    "error errors failed fail failure fatal cannot could can't did does do has have had into your you "
    "found line file files exit code status while when then than there please see more run use".split()
)
_QUOTED = re.compile(r"'[^'\n]{1,120}'|\"[^\"\n]{1,120}\"|`[^`\n]{1,120}`|‘[^’\n]{1,120}’")
_PATHLIKE = re.compile(r"(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])+[\w.@+-]*(?::\d+)*")
_NUMBERS = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,64}\b|\d+(?:\.\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{2,}")
_WARNING = re.compile(
    r"(?i)\b(?:never|don't|do not|must not|careful|avoid|breaks?|broke|overwrit\w*|generated|"
    r"auto-?generated|before (?:editing|changing)|instead|warning|pitfall|caution|only via|not by hand|"
    r"git-?ignored|ignored by)\b"
)
_FIX_HEAD = re.compile(
    r"(?is)^\s*(?:a commit check runs here:\s*)?(?:when\s+)?`[^`]*`\s+fail(?:s|ed)(?:\s+\d+\s+times)?"
    r'(?:\s+with\s+"(?:[^"]|"(?!:))*")?\s*:'
)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_FIX = re.compile(r"(?i)\bfail(?:s|ed)?\b(?: \d+ times)?(?: with)?|\berror\b")
_GENERIC_NAMES = frozenset(
    "__init__.py index.ts index.js index.tsx index.jsx mod.rs lib.rs main.rs main.py main.go app.py "
    "utils.py utils.ts types.ts readme.md setup.py".split()
)


def error_words(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words of an error line that say what kind of error it is (lower-cased, no stop words), and the
    variable details taken out of it (quoted names), which only add to a match."""
    line = strip_ansi(text)
    details = frozenset(w.lower() for q in _QUOTED.findall(line) for w in _WORD.findall(q))
    line = _QUOTED.sub(" ", line)
    line = _PATHLIKE.sub(" ", line)
    line = _NUMBERS.sub(" ", line)
    words = frozenset(w.lower() for w in _WORD.findall(line)) - _STOP
    return words, details - words - _STOP


def _program(command: str) -> str:
    name = program(command).lower()
    return re.sub(r"\d+(?:\.\d+)*$", "", name) or name  # python3 → python


def _bullet_words(b: Bullet) -> frozenset[str]:
    return frozenset(w.lower() for w in re.findall(r"[\w.+-]+", b.content)) | {
        re.sub(r"\d+(?:\.\d+)*$", "", w.lower()) for w in _WORD.findall(b.content)
    }


def _warning_like(b: Bullet) -> bool:
    """Whether ``b`` reads as a warning: its words say so, or it is a pitfall that is no fix of a failure."""
    if _WARNING.search(b.content):
        return True
    return b.knowledge_type is KnowledgeType.PITFALL and not _FIX_HEAD.match(b.content)


def _body(b: Bullet) -> str:
    """A bullet's text without the command and the error a fix starts with ("When `git add a.ex b.ex` fails
    with "…":") and without the command lines it quotes: files named there are what a command touched, not
    what the bullet is about (a quoted single path, `src/schema.ts`, stays)."""
    text = _FIX_HEAD.sub("", b.content, count=1)
    return _CODE_SPAN.sub(lambda m: " " if any(c.isspace() for c in m.group(0)) else m.group(0), text)


@dataclass(frozen=True)
class Signature:
    """What a failed command is matched on: its program and its error's words."""

    program: str
    words: frozenset[str]
    details: frozenset[str]

    @classmethod
    def of(cls, event: ToolEvent) -> Signature:
        command = event.command or ""
        line = error_signature(event.output, command) or event.output[:300]
        words, details = error_words(line)
        prog = _program(command)
        return cls(prog, words - {prog}, details)


def fix_score(sig: Signature, b: Bullet) -> float:
    """How well ``b`` is a fix for this failure: 0 unless it names the same program; else the share of
    the error's words it carries (a quoted name it shares adds a little)."""
    if not sig.program or not sig.words:
        return 0.0
    words = _bullet_words(b)
    if sig.program not in words and sig.program not in {t.lower() for t in b.tools}:
        return 0.0
    share = len(sig.words & words) / len(sig.words)
    return min(1.0, share + (0.1 if sig.details & words else 0.0))


def _relative(path: str, cwd: str) -> str:
    p, root = PurePosixPath(path), PurePosixPath(cwd) if cwd else None
    if root is not None and p.is_absolute():
        try:
            return str(p.relative_to(root))
        except ValueError:
            return str(p)
    return str(p).removeprefix("./")


def _names(text: str, part: str, before: str = r"[\w/.-]", after: str = r"[\w/-]") -> bool:
    return bool(part) and re.search(rf"(?<!{before}){re.escape(part)}(?!{after})", text) is not None


def file_score(paths: Iterable[str], cwd: str, b: Bullet) -> float:
    """How much ``b`` warns about one of ``paths``: its relative path in the bullet's text (1.0), its
    distinctive file name or its folder (at least two levels deep) there (0.8); times 1 for a warning and 0.6
    for any other note. The command and error a fix starts with do not count (``_body``)."""
    text = _body(b)
    best = 0.0
    for path in paths:
        rel = _relative(path, cwd)
        name, folder = PurePosixPath(rel).name, str(PurePosixPath(rel).parent)
        if "/" in rel and _names(text, rel):
            best = max(best, 1.0)
            continue
        distinctive = name.lower() not in _GENERIC_NAMES and _names(text, name, r"[\w.-]", r"[\w-]")
        if distinctive or (folder.count("/") >= 1 and _names(text, folder, after=r"[\w.-]")):
            best = max(best, 0.8)
    return best * (1.0 if _warning_like(b) else 0.6)


def command_score(command: str, b: Bullet) -> float:
    """1 when ``b`` is a warning (not a fix for its failure) that quotes this exact command, else 0."""
    clean = clean_command(command).strip()
    if not clean or f"`{clean}`" not in b.content or _FIX.search(b.content):
        return 0.0  # a fix for when the command fails says nothing when it worked
    return 1.0 if _WARNING.search(b.content) else 0.0


def need_of(event: ToolEvent) -> Need | None:
    if event.tool == "shell" and event.command:
        return "fix" if event.failed else "command"
    if event.paths and (
        (event.tool == "edit" and event.phase == "before") or (event.tool == "read" and event.phase == "after")
    ):
        return "file"
    return None


def _terms(event: ToolEvent, need: Need) -> list[str]:
    if need == "fix":
        sig = Signature.of(event)
        return [sig.program, *sorted(sig.words)][:16]
    if need == "file":
        names = [PurePosixPath(p).name for p in event.paths]
        return [t for n in names for t in (n, PurePosixPath(n).stem) if t][:8]
    return [w for w in re.findall(r"[\w.-]+", clean_command(event.command or ""))][:8]


def scored(deps: Deps, event: ToolEvent) -> tuple[Need | None, list[tuple[float, Bullet]]]:
    """Every candidate bullet for ``event`` with its score, best first (the floors not applied)."""
    need = need_of(event)
    if need is None:
        return None, []
    terms = [t for t in _terms(event, need) if t]
    if not terms:
        return need, []
    scopes = list(deps.workspace.current().visible())
    found = deps.store.keyword_search(terms, scopes, CANDIDATES)
    sig = Signature.of(event) if need == "fix" else None
    out: list[tuple[float, Bullet]] = []
    for b, _ in found:
        if b.status is not Status.ACTIVE:
            continue  # waiting for review (or archived): never handed back
        if sig is not None:
            score = fix_score(sig, b)
        elif need == "file":
            score = file_score(event.paths, event.cwd, b)
        else:
            score = command_score(event.command or "", b)
        if score > 0:
            out.append((score, b))
    out.sort(key=lambda sb: (-sb[0], sb[1].id))
    return need, out


def floor_of(need: Need) -> float:
    return {"fix": FIX_FLOOR, "file": FILE_FLOOR, "command": 1.0}[need]


def hand_back(deps: Deps, event: ToolEvent) -> str:
    """The framed note(s) for this tool call, '' for none."""
    started = time.monotonic()
    need, ranked = scored(deps, event)
    if need is None:
        return ""
    seen = handed_back(deps.settings, event.session_id) if event.session_id else set()
    hits = [b for s, b in ranked if s >= floor_of(need) and b.id not in seen][:3]
    if hits:
        standing = {b.id for b in still_there(deps, hits)}
        hits = [b for b in hits if b.id in standing]
    where = inert(str(deps.workspace.current()))
    room = BUDGET - estimate_tokens(frame.chrome(where)) - 3
    lines, ids = [HEADINGS[need]], []
    used = estimate_tokens(lines[0])
    for b in hits:
        line = frame.line(b)
        if used + estimate_tokens(line) > room:
            continue
        lines.append(line)
        ids.append(b.id)
        used += estimate_tokens(line)
    if ids:
        deps.store.mark_recalled(dict.fromkeys(ids, 1), deps.clock())
        if event.session_id:
            remember(deps.settings, event.session_id, ids)
    log_injection(deps.settings, f"moment:{need}", len(ids), time.monotonic() - started)
    return frame.framed(where, lines) if ids else ""


# -- what each session was handed, on disk (the helper may restart mid-session) ---------------------


def _session_file(settings: Settings, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode()).hexdigest()[:24]  # the id itself is not stored
    return settings.home / "run" / "moments" / f"{digest}.json"


def handed_back(settings: Settings, session_id: str) -> set[str]:
    try:
        data = json.loads(_session_file(settings, session_id).read_text(encoding="utf-8"))
        return {str(i) for i in data} if isinstance(data, list) else set()
    except (OSError, ValueError):
        return set()


def remember(settings: Settings, session_id: str, ids: Iterable[str]) -> None:
    path = _session_file(settings, session_id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, json.dumps(sorted(handed_back(settings, session_id) | set(ids))))
    cutoff = time.time() - 7 * 86_400
    for old in path.parent.glob("*.json"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
