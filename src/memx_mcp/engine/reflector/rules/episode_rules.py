"""ErrorFix and RetrySuccess candidates from episodes (``episodes.py``, ``reported.py``): what failed, the
action credited, what was observed after it, and why when the session says why."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....text.clip import shorten
from ..episodes.episodes import Episode, _signature, edited_file, episodes, is_edit, stalled
from ..episodes.reported import edit_change, reported_episodes
from ..shell.commands import ERROR_CODE, clean_command, explanation, first_line
from ..shell.goals import action_kind, goal_key, workdir
from ..transcripts.transcript import Step, Transcript
from .structural import _CONFIG_FILE, Candidate, _candidate, _is_exec


def _edited_between(steps: Sequence[Step], start: int, end: int) -> list[str]:
    return list(
        dict.fromkeys(
            edited_file(s) for s in steps[start + 1 : end] if is_edit(s) and not s.is_error and edited_file(s)
        )
    )


def _actions(steps: Sequence[Step], start: int, fix: int) -> list[tuple[str, str]]:
    """The credited action, told as a person would: the edited file, or the command (with the files
    edited just before it, as in "add lazy_html to mix.exs, then `mix deps.get`")."""
    s = steps[fix]
    if is_edit(s):
        edits = [x for x in steps[start + 1 : fix + 1] if is_edit(x) and not x.is_error and edited_file(x)]
        last = {edited_file(x): x for x in edits}  # the last edit of each file says what it became
        files = list(dict.fromkeys(reversed([edited_file(x) for x in edits])))[:2][::-1]
        return [("edit", _told(f, last[f])) for f in files]
    out: list[tuple[str, str]] = []
    for x in reversed(steps[start + 1 : fix]):
        if x.role == "tool" and not x.is_error:
            if is_edit(x) and edited_file(x):
                out.insert(0, ("edit", _told(edited_file(x), x)))
            elif _is_exec(x) and action_kind(x.command) != "diagnostic":
                break
        if len(out) >= 2:
            break
    return [*dict.fromkeys(out), ("run", clean_command(s.command))]


def _told(name: str, step: Step) -> str:
    """An edited file with what the edit changed when it is small ("app.py (`input()` → `time.sleep(3)`)")."""
    change = edit_change(step)
    return f"{name} ({change})" if change else name


def _blocked_what(step: Step) -> str:
    if _is_exec(step):
        return clean_command(step.command)
    target = edited_file(step) or str(step.tool_input.get("url") or step.tool_input.get("pattern") or "")
    return f"{step.tool} {target}".strip()


def _episode_candidate(steps: Sequence[Step], ep: Episode) -> Candidate | None:
    fail = steps[ep.first]
    last = steps[ep.attempts[-1]]
    if ep.kind in ("blocked", "hook"):
        lines = [ln.strip() for ln in fail.result.strip().splitlines() if ln.strip()]
        reason = " ".join(lines[:3]) if ep.kind == "hook" else (lines[0] if lines else "")
        message = shorten(explanation(fail.result) or reason, 200 if ep.kind == "hook" else 90)
        facts = {
            "kind": ep.kind,
            "blocked": _blocked_what(fail),
            "message": message,
            "attempts": str(len(ep.attempts)),
            "user_said": ep.user_said,
            "instead": "",
            "ran_later": "",
        }
        if ep.end >= 0:
            other = _blocked_what(steps[ep.end])
            facts["ran_later" if other == facts["blocked"] else "instead"] = other
        key = f"{ep.kind}:{goal_key(fail.command) if _is_exec(fail) else fail.tool}"
        return _candidate(
            "ErrorFixRule", fail, key, facts, steps, ep.first - 1, max(ep.end, ep.attempts[-1]), episode=True
        )
    if ep.kind == "denied":
        denied = re.search(r"(?:\[Errno \d+\] )?Permission denied|EACCES[^\n]{0,60}", fail.result, re.I)
        facts = {
            "kind": "denied",
            "file": edited_file(fail),
            "message": denied.group(0) if denied else shorten(fail.result.strip(), 80),
            "attempts": str(len(ep.attempts)),
            "user_said": ep.user_said,
        }
        return _candidate(
            "ErrorFixRule", fail, f"denied:{facts['file']}", facts, steps, ep.first - 1, ep.end, episode=True
        )
    if ep.kind == "reported":
        changes: list[str] = []
        for e in dict.fromkeys(reversed(ep.edits)):
            name = edited_file(steps[e])
            change = edit_change(steps[e])
            if change and not any(c.startswith(name) for c in changes):
                changes.append(f"{name} ({change})")
        files = list(dict.fromkeys(edited_file(steps[e]) for e in ep.edits))
        facts = {
            "kind": "reported",
            "complaint": shorten(" ".join(steps[ep.attempts[-1]].text.split()), 140),
            "why": ep.why,
            "changes": "; ".join(changes[:2]),
            "files": ", ".join(files[-3:]),
            "confirmed": shorten(" ".join(ep.user_said.split()), 60),
        }
        if not ep.why and not changes:
            return None
        key = f"reported:{facts['files']}"
        return _candidate("ErrorFixRule", fail, key, facts, steps, ep.first, ep.end, episode=True)
    if ep.kind == "stall":
        facts = {"kind": "stall", "command": clean_command(fail.command), "error": stalled(fail)}
        facts["attempts"] = str(len(ep.attempts))
        tried = [clean_command(steps[a].command) for a in ep.attempts[1:]]
        facts["tried"] = next((t for t in tried if t != facts["command"]), "")
        key = f"stall:{goal_key(fail.command)}"
        return _candidate("RetrySuccessRule", fail, key, facts, steps, ep.first - 1, ep.attempts[-1], episode=True)
    resolved = steps[ep.end]
    signature = _signature(fail)
    facts = {
        "kind": ep.kind,
        "command": clean_command(fail.command),
        "error": signature,
        "why": ep.why,
        "attempts": str(len(ep.attempts)),
        "outcome": "succeeded" if ep.success else "got past this error",
        "fix_kind": "",
        "fix_what": "",
        "worked": "",
    }
    if ep.fix >= 0:
        if ep.fix == ep.end:
            old_dir, new_dir = workdir(fail.command), workdir(resolved.command)
            if clean_command(resolved.command) == clean_command(fail.command) and new_dir != old_dir and new_dir:
                facts["fix_kind"], facts["fix_what"] = "dir", new_dir
            else:
                facts["fix_kind"], facts["worked"] = "form", clean_command(resolved.command)
        else:
            actions = _actions(steps, last.index, ep.fix)
            edits_only = all(kind == "edit" for kind, _ in actions)
            files = [what.split(" (", 1)[0] for kind, what in actions if kind == "edit"]  # the name, not the change
            gate_code = bool(ERROR_CODE.search(signature))  # a lint rule or compiler code: the convention
            if edits_only and not ep.why and not gate_code and not any(_CONFIG_FILE.search(f) for f in files):
                return None  # "fixed by an edit of app.py" without what or why teaches nothing
            facts["fix_kind"] = "actions"
            facts["fix_what"] = "\n".join(f"{kind}:{what}" for kind, what in actions)
    facts["fix_step"] = str(ep.fix) if ep.fix >= 0 else ""
    rule = "RetrySuccessRule" if len(ep.attempts) >= 2 else "ErrorFixRule"
    key = f"{goal_key(fail.command)}:{signature}"
    return _candidate(rule, fail, key, facts, steps, ep.first - 1, ep.end, episode=True)


_CWD_RESET = re.compile(r"Shell cwd was reset to (\S+)")
_BARE_CD = re.compile(r"^\s*cd\s+[^;&|]+$")


def harness_notices(t: Transcript) -> list[Candidate]:
    """What the agent's own shell said about itself: a ``cd`` that does not survive the call."""
    for s in t.steps:
        m = _CWD_RESET.search(s.result) if s.role == "tool" else None
        # only a lone `cd` relies on the directory surviving; `cd x && cmd` ran where it meant to, and the
        # notice after it is the harness talking, not a failure
        if m and _BARE_CD.match(s.command):
            story = (
                f"A `cd` in the agent's shell does not persist between calls here (after {_code_of(s.command)} it "
                f'said "Shell cwd was reset to {m.group(1)}"): use absolute paths or `cd <dir> && <command>` '
                "in one call."
            )
            return [_candidate("ErrorFixRule", s, "harness:cwd-reset", {"story": story, "error": ""}, t.steps, s.index)]
    return []


def _code_of(command: str) -> str:
    return "`" + (shorten(first_line(command), 120) or "cd …").replace("`", "'") + "`"


def error_episodes(t: Transcript) -> list[Candidate]:
    """ErrorFix and RetrySuccess from episodes: a failure, the actions, the first observed success; and
    approval blocks with their way out."""
    found = []
    for ep in [*episodes(t.steps), *reported_episodes(t.steps)]:
        c = _episode_candidate(t.steps, ep)
        if c is not None:
            found.append(c)
    return found
