"""What the agent's environment cannot do, as the tool output says it: sudo needs a password nobody can
type, a program is not installed, a sandbox breaks every command until the call is let out of it. Each is a
fact about this machine a teammate (or the next session) would otherwise rediscover the same way.

Only what the output states is told; what was done instead is added when a later run shows it working."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....text.clip import shorten
from ..episodes.episodes import is_exec, succeeded
from ..shell.commands import clean_command, first_line
from ..shell.goals import _TARGET, action_kind, core_words, main_segment
from ..transcripts.transcript import Step, Transcript
from .structural import Candidate, _candidate

_SUDO = re.compile(r"sudo: (?:a password is required|a terminal is required to read the password|no tty present)")
_MISSING = re.compile(
    r"(?:^|[\s:])(?P<a>[A-Za-z][\w.+-]{1,30}): command not found|"
    r"The term '(?P<b>[\w.+-]{2,30})' is not recognized|'(?P<c>[\w.+-]{2,30})' is not recognized as an internal"
)
_SANDBOX = re.compile(r"(?:windows )?sandbox(?::? runner)? error: [^\"})\n]{3,120}")
_NO_PIP = re.compile(r"(\S*python[\d.]*): No module named pip")
LOOKAHEAD = 8


def _code(command: str, limit: int = 120) -> str:
    return "`" + (shorten(first_line(command), limit) or "…").replace("`", "'") + "`"


def _programs(step: Step) -> set[str]:
    return {w[0].rsplit("/", 1)[-1] for w in [core_words(p) for p in step.command.split("|")] if w}


def _instead(steps: Sequence[Step], fail: Step, missing: str) -> str:
    """A later run that did the job without the missing program: on the same files, with a tool of its own."""
    targets = {t for t in _TARGET.findall(fail.command) if len(t) > 3 and missing not in t}
    for s in steps[fail.index + 1 : fail.index + 1 + LOOKAHEAD]:
        if not is_exec(s) or missing in s.command or not succeeded(s):
            continue
        new = _programs(s) - _programs(fail)
        if new and targets and any(t in s.command for t in targets):
            return clean_command(s.command)
    return ""


def environment_facts(t: Transcript, told: set[int] | None = None) -> list[Candidate]:
    """``told``: steps an error episode already tells (a missing `jq` with the `python3 -c` that replaced it)."""
    found: list[Candidate] = []
    seen: set[str] = set()
    steps = t.steps
    for s in steps:
        if not is_exec(s) or not s.result:
            continue
        head = s.result[:2000]
        sudo = _SUDO.search(head)
        if sudo and "sudo" not in seen:
            seen.add("sudo")
            story = (
                f"The agent cannot run sudo here ({_code(s.command)} said {_quote(sudo.group(0))}): "
                "give the sudo commands to the user to run in their own terminal."
            )
            found.append(_candidate("ErrorFixRule", s, "env:sudo", {"story": story, "error": ""}, steps, s.index))
            continue
        m = _MISSING.search(head) if s.is_error else None
        name = next((g for g in m.groups() if g), "") if m else ""
        fresh = name and name not in seen and s.index not in (told or set())
        if fresh and name in _programs(s) and not _runs_later(steps, s, name):
            seen.add(name)
            instead = _instead(steps, s, name)
            tail = f"; {_code(instead)} did the job instead" if instead else ""
            said = "command not found" if m and m.group("a") else "not recognized"
            # the program's name is checked against the command memx saw run; the rest of the output line is a
            # tool's words (anyone's, in a build log or a fetched page): not quoted into the bullet
            story = f"`{name}` is not installed in this environment ({_code(s.command)} failed: {said}){tail}."
            found.append(
                _candidate("ErrorFixRule", s, f"env:missing:{name}", {"story": story, "error": ""}, steps, s.index)
            )
            continue
        pip = _NO_PIP.search(head)
        if pip and "pip" not in seen and pip.group(1) in s.command:
            seen.add("pip")
            story = (
                f"The interpreter `{pip.group(1)}` has no pip ({_quote(pip.group(0))}): list or add its packages "
                "with the tool that made the environment (uv, conda), not with `python -m pip`."
            )
            found.append(_candidate("ErrorFixRule", s, "env:no-pip", {"story": story, "error": ""}, steps, s.index))
            continue
        box = _SANDBOX.search(head)
        if box and "sandbox" not in seen:
            way = _out_of_sandbox(steps, s)
            if way:
                seen.add("sandbox")
                # only that the output said "sandbox error" and how the same command then ran: what follows the
                # marker in the output is a tool's text, not memx's to repeat as advice
                said = f'{_code(s.command)} said "sandbox error"'
                story = f"Commands fail inside the agent's sandbox here ({said}); {way} ran them."
                found.append(
                    _candidate("ErrorFixRule", s, "env:sandbox", {"story": story, "error": ""}, steps, s.index)
                )
    return found


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _runs_later(steps: Sequence[Step], fail: Step, name: str) -> bool:
    """The program ran fine later in the session (it was installed): then the install episode tells it."""
    return any(
        is_exec(s) and succeeded(s) and name in _programs(s) and action_kind(main_segment(s.command)) != "state"
        for s in steps[fail.index + 1 :]
    )


def _out_of_sandbox(steps: Sequence[Step], fail: Step) -> str:
    """How the same command got to run after the sandbox broke it: the permission it was rerun with."""
    for s in steps[fail.index + 1 : fail.index + 1 + LOOKAHEAD * 2]:
        if is_exec(s) and s.command == fail.command and succeeded(s) and not _SANDBOX.search(s.result[:2000]):
            permission = str(s.tool_input.get("sandbox_permissions") or "")
            return f"rerunning with sandbox_permissions {permission}" if permission else "rerunning outside the sandbox"
    return ""
