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

from .commands import (
    COMMON_CLIS,
    INSTALL,
    clean_command,
    command_key,
    error_signature,
    explanation,
    first_segment,
    is_routine,
    program,
)
from .transcript import Step, Transcript

CONFIDENCE = {
    "ErrorFixRule": 0.8,
    "RetrySuccessRule": 0.7,
    "ConfigChangeRule": 0.6,
    "NewToolRule": 0.65,
    "RepetitiveOpRule": 0.5,
}
LOOKAHEAD = 15
_TOOL_NOISE = re.compile(
    r"doesn't want to proceed|tool use was rejected|Sibling tool call errored|<tool_use_error>|"
    r"exceeds maximum allowed tokens|Request interrupted|InputValidationError"
)
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


def _context(steps: Sequence[Step], start: int, end: int, limit: int = 3000) -> str:
    parts = []
    for s in steps[max(0, start) : end + 1]:
        if s.role == "tool":
            status = "FAILED" if s.is_error else "ok"
            parts.append(f"[{s.tool} {status}] {clean_command(s.command)[:200]}\n{s.result[:600]}")
        else:
            parts.append(f"[{s.role}] {s.text[:600]}")
    return "\n".join(parts)[:limit]


def _candidate(
    rule: str,
    step: Step,
    key: str,
    facts: dict[str, str],
    steps: Sequence[Step],
    context_from: int,
    context_to: int | None = None,
    confidence: float | None = None,
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
        _context(steps, context_from, step.index if context_to is None else context_to),
    )


def _is_exec(step: Step) -> bool:
    return step.role == "tool" and isinstance(step.tool_input.get("command"), str)


def _why_between(steps: Sequence[Step], start: int, end: int, messages: int = 2) -> str:
    """The explanation in the first ``messages`` assistant messages after ``start``: later ones have
    usually moved on to another problem."""
    seen = 0
    for s in steps[start + 1 : end]:
        if s.role == "assistant":
            why = explanation(s.text)
            if why:
                return why
            seen += 1
            if seen >= messages:
                break
    return ""


def _why_before(steps: Sequence[Step], at: int, window: int = 4) -> str:
    for s in reversed(steps[max(0, at - window) : at]):
        if s.role == "assistant":
            why = explanation(s.text)
            if why:
                return why
    return ""


def error_episodes(t: Transcript) -> list[Candidate]:
    """ErrorFix and RetrySuccess: a failed command resolved by a later run of the same command."""
    steps = t.steps
    found: list[Candidate] = []
    consumed: set[int] = set()
    for i, fail in enumerate(steps):
        if i in consumed or not (_is_exec(fail) and fail.is_error) or _TOOL_NOISE.search(fail.result[:300]):
            continue
        key = command_key(fail.command)
        signature = error_signature(fail.result)
        attempts = [fail]
        resolution: Step | None = None
        for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
            s = steps[j]
            if not _is_exec(s) or command_key(s.command) != key:
                continue
            if s.is_error and error_signature(s.result) == signature:
                attempts.append(s)
                consumed.add(j)
                continue
            resolution = s
            break
        if resolution is None or not signature:
            continue
        why = _why_between(steps, i, resolution.index)
        between = [
            clean_command(s.command)
            for s in steps[i + 1 : resolution.index]
            if _is_exec(s) and not s.is_error and not is_routine(s.command) and command_key(s.command) != key
        ]
        edited = [
            PurePosixPath(str(s.tool_input.get("file_path"))).name
            for s in steps[i + 1 : resolution.index]
            if s.role == "tool" and s.tool in ("Edit", "Write", "MultiEdit") and not s.is_error
        ]
        failed_cmd, fixed_cmd = clean_command(fail.command), clean_command(resolution.command)
        if not (why or between or failed_cmd != fixed_cmd):
            continue  # no knowable fix
        rule = "RetrySuccessRule" if len(attempts) >= 2 else "ErrorFixRule"
        facts = {
            "command": failed_cmd,
            "error": signature,
            "why": why,
            "then_ran": "; ".join(dict.fromkeys(between[:2])),
            "worked": fixed_cmd if fixed_cmd != failed_cmd else "",
            "edited": ", ".join(dict.fromkeys(edited[:3])),
            "attempts": str(len(attempts)),
            "outcome": "succeeded" if not resolution.is_error else "got past this error",
        }
        found.append(_candidate(rule, fail, f"{key}:{signature}", facts, steps, i - 1, resolution.index))
    return found


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
            found.append(_candidate("ConfigChangeRule", s, key, facts, t.steps, s.index - 3))
        elif _is_exec(s):
            for var, value in _EXPORT.findall(s.command):
                facts = {"file": "", "changed": "", "set": f"{var}={value}", "why": _why_before(t.steps, s.index)}
                found.append(_candidate("ConfigChangeRule", s, f"export:{var}", facts, t.steps, s.index - 2))
    return found


def new_tools(t: Transcript) -> list[Candidate]:
    """NewTool: a successful install of named packages, or a project-specific CLI used repeatedly."""
    found: list[Candidate] = []
    uses: dict[str, list[Step]] = defaultdict(list)
    for s in t.steps:
        if not _is_exec(s) or s.is_error:
            continue
        cmd = clean_command(s.command)
        m = INSTALL.match(cmd)
        if m:
            packages = [w for w in m.group("rest").split() if not w.startswith(("-", ".", "/")) and w != "&&"]
            if packages:
                facts = {"install": cmd, "packages": ", ".join(packages[:4]), "why": _why_before(t.steps, s.index)}
                found.append(_candidate("NewToolRule", s, f"install:{cmd}", facts, t.steps, s.index - 2))
            continue
        prog = program(cmd)
        if prog and prog not in COMMON_CLIS and re.fullmatch(r"[a-z][\w.-]{0,30}", prog):
            uses[prog].append(s)
    for prog, steps in uses.items():
        if len(steps) < 2:
            continue
        by_key: dict[str, str] = {}
        for s in steps:
            by_key.setdefault(command_key(s.command), first_segment(s.command)[:60])
        variants = list(by_key)
        examples = list(by_key.values())[:4]
        facts = {
            "program": prog,
            "subcommands": ", ".join(variants[:5]),
            "examples": " | ".join(examples),
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
        if _is_exec(s) and _worth_repeating(s.command, cli_programs or set()):
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


def detect(t: Transcript, start_step: int = 0) -> list[Candidate]:
    """Every rule over the transcript; candidates before ``start_step`` (already reflected) are left out,
    and two candidates with the same key are one."""
    from .prose import prose_candidates

    tools = new_tools(t)
    clis = {c.facts["program"] for c in tools if "program" in c.facts}
    everything = [*error_episodes(t), *config_changes(t), *tools, *repetitive_ops(t, clis), *prose_candidates(t)]
    unique: dict[str, Candidate] = {}
    for c in sorted(everything, key=lambda c: c.step):
        if c.step >= start_step:
            unique.setdefault(c.key, c)
    return list(unique.values())
