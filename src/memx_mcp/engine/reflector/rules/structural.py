"""PatternDetector: the five rules of SPEC §4.2 over transcript structure.

Tool calls, their results and the ``is_error`` flag are the evidence: a failed command followed by a
change and a successful (or differently failing) run of the same command is an ErrorFix; the same error
twice before that is a RetrySuccess; an edit that changes a configuration value is a ConfigChange; an
install or a project-specific CLI is a NewTool; a non-routine command run three times is a RepetitiveOp.
Prose rules (``prose.py``) cover text-only transcripts in English, Chinese and Japanese."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ....text.clip import head_and_tail as _clip
from ..episodes.episodes import relevant
from ..shell.commands import (
    COMMON_CLIS,
    INSTALL,
    clean_command,
    command_key,
    explanation,
    first_segment,
    is_routine,
    program,
)
from ..transcripts.transcript import Step, Transcript

CONFIDENCE = {
    "ErrorFixRule": 0.8,
    "RetrySuccessRule": 0.7,
    "ConfigChangeRule": 0.6,
    "NewToolRule": 0.65,
    "RepetitiveOpRule": 0.5,
    "ConventionRule": 0.6,
    "PreferenceRule": 0.6,
}
_CONFIG_FILE = re.compile(
    r"(?:^|/)(?:\.env[\w.]*|[\w.-]+\.(?:toml|ya?ml|ini|cfg|conf|properties)|config/[\w./-]+|[\w.-]*\.config\.[jt]s|"
    r"package\.json|tsconfig[\w.]*\.json|settings\.json|Dockerfile|docker-compose[\w.-]*|mix\.exs|setup\.cfg|"
    r"\.\w+rc(?:\.json)?|Makefile|Cargo\.toml|go\.mod)$"
)
_ASSIGN = re.compile(
    r"""^\s*(?:export\s+|config\s+:\w+,\s*(?:[\w.]+,\s*)?)?["']?(?P<key>[A-Za-z_][\w.-]{1,60})["']?(?:\s*=|:)\s*"""
    r"""(?P<value>[^\s,#][^#]{0,80}?)\s*,?\s*$"""
)
_EXPORT = re.compile(r"(?:^|&&|;)\s*export\s+([A-Z_][A-Z0-9_]*)=(\S+)")


@dataclass(frozen=True)
class Candidate:
    """Something a rule thinks is worth keeping, with the evidence the distiller and the LLM need."""

    rule: str
    confidence: float
    step: int
    turn: int
    key: str  # what makes two candidates the same (deduplicated within a transcript)
    facts: dict[str, str] = field(default_factory=dict)
    context: str = ""  # an excerpt of the transcript around the evidence


EPISODE_CHARS = 12000  # the most of one episode handed to the LLM in hybrid mode (about 3k tokens)


def _context(steps: Sequence[Step], start: int, end: int, limit: int = 3000, per_step: int = 600) -> str:
    """The steps from ``start`` to ``end`` as text, in order: messages, commands whole, outputs clipped."""
    parts = []
    for s in steps[max(0, start) : end + 1]:
        if s.role == "tool":
            status = "FAILED" if s.is_error else "ok"
            what = s.command.strip() if s.command else ", ".join(f"{k}={v}" for k, v in s.tool_input.items())[:300]
            body = _clip(s.result, per_step * 2 // 3, per_step // 3)
            if s.tool.lower() in ("edit", "multiedit", "write") and s.tool_input.get("new_string") is not None:
                body = _clip(f"- {s.tool_input.get('old_string')}\n+ {s.tool_input.get('new_string')}", 300, 100)
            parts.append(f"[{s.tool} {status}] {_clip(what, 400, 100)}\n{body}")
        else:
            parts.append(f"[{s.role}] {_clip(s.text, per_step * 2 // 3, per_step // 3)}")
    text = "\n".join(parts)
    return text if len(text) <= limit else _clip(text, limit * 2 // 3, limit // 3)


def _candidate(
    rule: str,
    step: Step,
    key: str,
    facts: dict[str, str],
    steps: Sequence[Step],
    context_from: int,
    context_to: int | None = None,
    confidence: float | None = None,
    episode: bool = False,
) -> Candidate:
    """A candidate of ``rule`` at ``step``; its key is prefixed by the rule, its context is the steps
    from ``context_from`` to ``context_to`` (default: the step itself)."""
    return Candidate(
        rule,
        CONFIDENCE[rule] if confidence is None else confidence,
        step.index,
        step.turn,
        f"{rule}:{key}",
        facts,
        _context(steps, context_from, step.index if context_to is None else context_to)
        if not episode
        else _context(steps, context_from, context_to or step.index, EPISODE_CHARS, 1200),
    )


def _is_exec(step: Step) -> bool:
    return step.role == "tool" and isinstance(step.tool_input.get("command"), str)


def _why_before(steps: Sequence[Step], at: int, window: int = 4) -> str:
    for s in reversed(steps[max(0, at - window) : at]):
        if s.role == "assistant":
            why = explanation(s.text)
            if why:
                return why
    return ""


def _assignments(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m and not m.group("value").startswith(("{", "[", "(", "fn", "def", "do")):
            out[m.group("key")] = m.group("value").strip().rstrip(",")
    return out


def config_changes(t: Transcript) -> list[Candidate]:
    """ConfigChange: an edit of a configuration file that changes or sets values, or an ``export``."""
    found: list[Candidate] = []
    edits: list[tuple[Candidate, str, dict[str, tuple[str, str]]]] = []
    for s in t.steps:
        if s.role != "tool" or s.is_error:
            continue
        path = str(s.tool_input.get("file_path") or "")
        if s.tool in ("Edit", "Write", "MultiEdit") and _CONFIG_FILE.search(path):
            old = _assignments(str(s.tool_input.get("old_string") or ""))
            new = _assignments(str(s.tool_input.get("new_string") or s.tool_input.get("content") or ""))
            changed = {k: (old[k], v) for k, v in new.items() if k in old and old[k] != v}
            added = {k: v for k, v in new.items() if k not in old}
            why = _why_before(t.steps, s.index)
            if why and not relevant(why, f"{path}\n{s.tool_input.get('old_string')}\n{new}"):
                why = ""  # an explanation of another problem is not this change's cause
            if not changed and not (added and why):
                continue  # an unexplained addition is routine editing
            name = "/".join(PurePosixPath(path).parts[-2:])
            facts = {
                "file": name,
                "changed": "; ".join(f"{k} from {a} to {b}" for k, (a, b) in list(changed.items())[:3]),
                "set": "; ".join(f"{k}: {v}" for k, v in list(added.items())[:3]) if not changed else "",
                "why": why,
            }
            key = f"{name}:{sorted(changed or added)}"
            c = _candidate("ConfigChangeRule", s, key, facts, t.steps, s.index - 3)
            found.append(c)
            edits.append((c, path, changed))
        elif _is_exec(s):
            for var, value in _EXPORT.findall(s.command):
                why = _why_before(t.steps, s.index)
                why = why if relevant(why, s.command) else ""
                if not why:
                    continue  # an export among others (`LD_LIBRARY_PATH=…` next to `CUDA_HOME=…`) says nothing alone
                facts = {"file": "", "changed": "", "set": f"{var}={value}", "why": why}
                found.append(_candidate("ConfigChangeRule", s, f"export:{var}", facts, t.steps, s.index - 2))
    undone = _reverted(edits)
    return [c for c in found if id(c) not in undone]


def _reverted(edits: list[tuple[Candidate, str, dict[str, tuple[str, str]]]]) -> set[int]:
    """Changes set back later in the session (a toggle switched off and on again a minute later): a
    one-off, not a setting to remember. Both edits are dropped."""
    undone: set[int] = set()
    for n, (c, path, changed) in enumerate(edits):
        for later, later_path, later_changed in edits[n + 1 :]:
            if later_path == path and any(later_changed.get(k) == (b, a) for k, (a, b) in changed.items()):
                undone.update((id(c), id(later)))
    return undone


def _asked_for(steps: Sequence[Step], at: int, packages: list[str], window: int = 12) -> str:
    """The line of the task that called for a package installed at ``at`` (the person's request or the
    issue being worked on names it): that makes the install a project decision, not routine."""
    names = [p.lstrip("@").split("@")[0].split("==")[0].lower() for p in packages]
    names = [n for n in names if len(n) >= 4]
    for s in reversed(steps[max(0, at - window) : at]):
        text = s.text if s.role == "user" else s.result if _is_exec(s) and not is_routine(s.command) else ""
        for line in text.splitlines():
            low = line.lower()
            if any(n in low for n in names) and not INSTALL.search(line) and 8 <= len(line.strip()) <= 300:
                return line.strip(" ·○●*#-\t")
    return ""


def new_tools(t: Transcript, credited: set[int] | None = None) -> list[Candidate]:
    """NewTool: an install the session explains or the task called for (a plain install is not a lesson by
    itself; one that fixed an error is told by its episode), or a project-specific CLI used often."""
    found: list[Candidate] = []
    uses: dict[str, list[Step]] = defaultdict(list)
    for s in t.steps:
        if not _is_exec(s) or s.is_error:
            continue
        cmd = clean_command(s.command)
        m = INSTALL.match(cmd)
        if m:
            packages = [w for w in m.group("rest").split() if not w.startswith(("-", ".", "/", "<")) and w != "&&"]
            if packages and s.index not in (credited or set()):
                why = _why_before(t.steps, s.index)
                why = why if relevant(why, " ".join(packages)) else ""
                why = why or _asked_for(t.steps, s.index, packages)
                if why:
                    facts = {"install": cmd, "packages": ", ".join(packages[:4]), "why": why}
                    found.append(_candidate("NewToolRule", s, f"install:{cmd}", facts, t.steps, s.index - 2))
            continue
        prog = program(cmd)
        if prog == t.format or s.tool_input.get("runs") == t.format:
            continue  # the assistant that wrote the transcript (its runs of `aider --model …`) is no project tool
        if prog and prog not in COMMON_CLIS and re.fullmatch(r"[a-z][\w.-]{0,30}", prog):
            uses[prog].append(s)
    for prog, steps in uses.items():
        if len(steps) < 3:
            continue
        by_key: dict[str, str] = {}
        for s in steps:
            by_key.setdefault(command_key(s.command), first_segment(s.command))
        variants = list(by_key)
        examples = [e for e in by_key.values() if len(e) <= 60 and program(e) == prog][:4]
        facts = {
            "program": prog,
            "subcommands": ", ".join(variants[:5]),
            "examples": "\n".join(examples),
            "uses": str(len(steps)),
        }
        found.append(_candidate("NewToolRule", steps[0], f"cli:{prog}", facts, t.steps, steps[0].index - 1))
    return found


def _worth_repeating(command: str, cli_programs: set[str]) -> bool:
    """A repeated command teaches something when it carries the project's own flags (``mix credo
    --strict``): not a bare ``mix test``, not one file being iterated on, not git, not a CLI already
    reported as a NewTool."""
    cmd = clean_command(command)
    words = cmd.split()
    return (
        _is_flagged(words)
        and not is_routine(command)
        and program(command) not in cli_programs | {"git"}
        and "<paths>" not in cmd
        and not any("/" in w or re.search(r"\.\w{1,4}$", w) for w in words[1:])
        and not INSTALL.match(cmd)
    )


def _is_flagged(words: list[str]) -> bool:
    return any(w.startswith("-") for w in words[1:])


def repetitive_ops(t: Transcript, cli_programs: set[str] | None = None) -> list[Candidate]:
    """RepetitiveOp: the same non-routine command run three times or more (confidence grows with it)."""
    runs: dict[str, list[Step]] = defaultdict(list)
    for s in t.steps:
        if (
            _is_exec(s)
            and program(clean_command(s.command)) != t.format
            and _worth_repeating(s.command, cli_programs or set())
        ):
            runs[clean_command(s.command)].append(s)
    found: list[Candidate] = []
    for cmd, steps in runs.items():
        if len(steps) < 3 or not any(not s.is_error for s in steps) or len(cmd) > 160:
            continue
        descriptions = Counter(str(s.tool_input.get("description") or "") for s in steps)
        description = next((d for d, _ in descriptions.most_common() if d), "")
        confidence = min(0.8, 0.5 + 0.05 * (len(steps) - 3))
        facts = {"command": cmd, "times": str(len(steps)), "description": description}
        found.append(
            _candidate(
                "RepetitiveOpRule", steps[0], cmd, facts, t.steps, steps[0].index, confidence=round(confidence, 2)
            )
        )
    return found
