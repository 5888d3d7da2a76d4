"""Episodes: a failure (or a blocked call) → the actions taken → the first observed success.

An episode opens at a failed command. It closes at the first later run that reaches the same goal: the
same command, or the same program formed differently (the interpreter's full path instead of a shim,
another flag spelling, an environment variable in front, another working directory). What gets the
credit is the state-changing action just before that success (an edit, a config write, an install, a
restart), never a diagnostic (``cat``, ``ls``, ``grep``, ``git status``); when nothing changed state in
between, the differently formed command is the fix. Calls blocked by the approval system or refused by
the user are episodes of their own: the way out (or the loop) is the lesson."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..shell.commands import clean_command, error_signature, explanation, is_question, segments, strip_ansi
from ..shell.goals import (
    _MISSING_TOOL,
    _TARGET,
    DIAGNOSTIC,
    _related_segment,
    _script,
    _segment_kind,
    action_kind,
    core_words,
    goal_key,
    looks_only,
    main_goal,
    main_segment,
    workdir,
)
from ..transcripts.transcript import Step

LOOKAHEAD = 30  # steps after a failure in which its resolution is looked for


EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "create_file",
        "write_file",
        "edit_file",
        "replace_in_file",
        "insert_edit_into_file",
        "search_replace",
    }
)


# Harness refusals: the call never ran, so its "error" says nothing about the project's code.
BLOCKED = re.compile(
    r"requires approval|requested permissions? to|haven't granted it|"
    r"permission to use \w+.{0,200}?(?:has been|was) denied|"
    r"PreToolUse:\w+ hook|hook (?:error|blocked|denied)|blocked by (?:a |the )?\w+ hook|"
    r"doesn't want to proceed with this tool use|doesn't want to take this action|STOP what you are doing|"
    r"Request interrupted by user|tool use was rejected|was blocked by (?:a |the )?(?:hook|policy)|"
    r"not allowed by (?:the )?(?:user|permission|policy)|approval (?:is )?required|rejected by (?:the )?user|"
    r"user (?:denied|declined|rejected)",
    re.I,
)


_USAGE_NOISE = re.compile(
    r"Sibling tool call errored|<tool_use_error>|exceeds maximum allowed tokens|Request interrupted|"
    r"InputValidationError|File has not been read yet|String to replace not found|File has been modified since"
)


# The session said the failed result out loud even though the command's exit code (a pipe's last stage)
# was 0: ``pytest | tail`` that printed "3 failed" is not an observed success.
_LOOKS_FAILED = re.compile(
    r"(?m)^(?:FAILED\b|FAIL\b|ERROR\b|Error:|error(?:\[\w+\])?:|fatal:|npm ERR!|Traceback \(most recent)|"
    r"\b\d+ (?:failed|errors?)\b(?!.*\b0 failed)|command not found|No such file or directory|"
    r"failed to solve|Build failed|BUILD FAILED|Failed to compile|\berror TS\d{4}\b|"
    r"HTTP/[\d.]+ [45]\d\d\b|\b(?:502 Bad Gateway|503 Service Unavailable|504 Gateway Time-?out)\b"
)


_HTTP_CODES = re.compile(r"^(?:\s*[45]\d\d\b\s*)+$")


# An interactive prompt waiting for an answer that will never come in an agent's shell.
_PROMPT = re.compile(r"\?.{0,120}›|\((?:y/N|Y/n|yes/no)\)|\[(?:y/N|Y/n)\]|Press (?:any key|Enter|RETURN)", re.I)


_NO_FAILURE = re.compile(r"\b0 (?:failed|errors?)\b|\bno errors?\b", re.I)


def is_exec(step: Step) -> bool:
    return step.role == "tool" and isinstance(step.tool_input.get("command") or step.tool_input.get("cmd"), str)


def is_edit(step: Step) -> bool:
    name = step.tool.lower()
    return step.role == "tool" and "todo" not in name and (name in EDIT_TOOLS or name.endswith(("edit", "write")))


def edited_file(step: Step) -> str:
    path = str(step.tool_input.get("file_path") or step.tool_input.get("path") or "")
    if not path:
        m = re.search(r"\*\*\* (?:Update|Add) File: (\S+)", str(step.tool_input.get("input") or ""))
        path = m.group(1) if m else ""
    return PurePosixPath(path.replace("\\", "/")).name if path else ""


def is_blocked(step: Step) -> bool:
    return step.role == "tool" and step.is_error and bool(BLOCKED.search(step.result[:500]))


# the OS refused the agent's write of a file (it belongs to another user): like a refused call, the way out
# is what the person does or says (fix the ownership), not the agent's code
_WRITE_DENIED = re.compile(r"Permission denied|EACCES|Errno 13", re.I)


# what the person says about the refused write: its permissions or owner, not another problem
_ABOUT_ACCESS = re.compile(r"permission|ownership|owner|chmod|chown|sudo|writable|read-only|权限|権限|所有者", re.I)


def write_denied(step: Step) -> bool:
    return is_edit(step) and step.is_error and bool(_WRITE_DENIED.search(step.result[:500]))


def is_usage_noise(step: Step) -> bool:
    return bool(_USAGE_NOISE.search(step.result[:300]))


def stalled(step: Step) -> str:
    """The interactive prompt a command stopped at (its output ends there), or ''."""
    lines = [ln.strip() for ln in strip_ansi(step.result[-600:]).splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return last if _PROMPT.search(last) and "✔" not in last else ""


def succeeded(step: Step) -> bool:
    """An observed success: no error flag, no failure printed by a command whose exit code hid it (a
    pipe's last stage, curl printing 504), not stopped at an interactive prompt."""
    if step.is_error or stalled(step):
        return False
    head = step.result[:3000]
    if "curl" in step.command and _HTTP_CODES.match(head.strip() or "200"):
        return False
    return not (_LOOKS_FAILED.search(head) and not _NO_FAILURE.search(head))


def hidden_failure(step: Step) -> bool:
    """A run that failed although its exit code says 0: ``build | tail`` printing "failed to solve",
    ``curl -w %{http_code}`` printing 504, a prompt nobody answers. Only for commands that do something
    (a ``grep error log`` that prints errors has not failed)."""
    if step.is_error or not is_exec(step) or (action_kind(step.command) == "diagnostic" and "curl" not in step.command):
        return False
    masked = "|" in step.command or "curl" in step.command or bool(stalled(step))
    return masked and not succeeded(step)


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{2,}|[\u4e00-\u9fff\u3040-\u30ff]{2,}")


_STOP = frozenset(
    """the and for that this with from into not but are was were has have had been can cannot could should would
    will just now then than when what which where there here its it's our your you they them need needs needed
    must use used using run runs running ran file files error errors fail fails failed failing failure issue
    problem fix fixed test tests code line lines make sure also only still again let see like get got set one two
    new old all any some more most other same because since instead expects expected requires required missing
    doesn't isn't can't won't don't does did done way work works worked working output result results command
    commands""".split()
)


def tokens(text: str) -> set[str]:
    out: set[str] = set()
    for t in _TOKEN.findall(text):
        low = t.lower().strip(".:/-")
        if low in _STOP or len(low) < 3:
            continue
        out.add(low)
        out.update(p for p in re.split(r"[.:/_-]+", low) if len(p) >= 4 and p not in _STOP)
        if re.match(r"[\u4e00-\u9fff\u3040-\u30ff]", low):
            out.update(low[i : i + 2] for i in range(len(low) - 1))
    return out


def relevant(why: str, evidence: str) -> bool:
    """An explanation belongs to this episode when it names something the episode shows: a word of the
    error, the commands, the files edited. One about another problem shares none of them."""
    return bool(tokens(why) & tokens(evidence))


@dataclass(frozen=True)
class Episode:
    kind: str  # "error" (a failed command), "gate" (a commit/CI check refused it), "blocked" (approval),
    # "hook" (a project hook refused the call: its message is the project's rule)
    first: int  # index of the first failed or blocked step
    attempts: tuple[int, ...]  # the failed runs of the same goal with the same error
    end: int  # the resolving step (a success, or for kind error a run that got past this error); -1: none
    success: bool  # end is an observed success
    fix: int  # the state-changing step credited (-1: none; == end when the new form itself is the fix)
    why: str
    user_said: str = ""  # for blocked calls: what the person said right after refusing
    edits: tuple[int, ...] = ()  # for kind "reported": the edits made after the last complaint


_GATE = re.compile(
    r"pre-commit|pre-push|commit-msg|husky|lint-staged|\bhook\b|hooks/|validation failed|check(?:s)? failed|"
    r"\bCI\b|lefthook|prettier --check|would reformat|not formatted|--no-verify",
    re.I,
)


def _same_goal(fail: Step, other: Step) -> bool:
    a = main_goal(fail.command)
    if not a or a not in {goal_key(seg) for seg in segments(other.command)}:
        return False
    script = _script(core_words(main_segment(fail.command)))
    others = {_script(core_words(seg)) for seg in segments(other.command)} - {""}
    return not script or not others or script in others  # another script is another program


def _new_tool(fail: Step, other: Step) -> bool:
    """The replacement brings a tool of its own (`python3 -c` for `jq`), not the same pipe minus it."""
    before = {core_words(seg)[0] for seg in segments(fail.command) if core_words(seg)}
    after = {core_words(seg)[0] for seg in segments(other.command) if core_words(seg)}
    return bool({p for p in after - before if p not in DIAGNOSTIC})


def _same_targets(fail: Step, other: Step) -> bool:
    """Another tool on the same files: a path or file name of the failed command reappears."""
    targets = {t for t in _TARGET.findall(fail.command) if len(t) > 3} - {fail.command.split()[0]}
    return bool(targets) and any(t in other.command for t in targets)


def _related_form(fail: Step, other: Step) -> bool:
    """Another spelling of the failed command (its goal in a chain: ``git checkout main && git pull``
    is a pull): the same program (after wrappers and paths) on the same targets, a per-package run of a
    root-level command, or an env var in front."""
    if action_kind(other.command) == "diagnostic":
        return False
    main = main_segment(fail.command)
    return any(_related_segment(main, seg) for seg in segments(other.command))


def _why(steps: Sequence[Step], start: int, end: int, evidence: str) -> str:
    """The first relevant explanation in the assistant's messages after the failure (at most the first
    three: later ones have usually moved on to another problem)."""
    seen = 0
    for s in steps[start + 1 : end]:
        if s.role == "assistant":
            why = explanation(s.text)
            if why and not is_question(why) and relevant(why, evidence):
                return why
            seen += 1
            if seen >= 3:
                break
    return ""


def _evidence(steps: Sequence[Step], first: int, end: int) -> str:
    parts = []
    for s in steps[first : end + 1]:
        if s.role == "tool":
            parts.append(s.command)
            parts.append(s.result[:1500])
            if is_edit(s):
                parts.append(edited_file(s))
                parts.extend(str(v)[:1500] for v in s.tool_input.values() if isinstance(v, str))
    return "\n".join(parts)


def _credit(steps: Sequence[Step], after: int, end: int) -> int:
    """The state-changing step just before ``end`` (after the last failed attempt): an edit or a
    state-changing command first, another non-diagnostic command else; -1 when only diagnostics ran."""
    fallback = -1
    for s in reversed(steps[after + 1 : end]):
        if s.role != "tool" or s.is_error:
            continue
        if is_edit(s):
            return s.index
        if is_exec(s):
            kind = action_kind(s.command)
            if kind == "state":
                return s.index
            if kind == "other" and fallback < 0:
                fallback = s.index
    return fallback


def _changed_state(steps: Sequence[Step], after: int, end: int) -> bool:
    """An edit or a state-changing command ran (and did not fail) between ``after`` and ``end``."""
    return any(
        s.role == "tool" and not s.is_error and (is_edit(s) or (is_exec(s) and action_kind(s.command) == "state"))
        for s in steps[after + 1 : end]
    )


def same_error(a: str, b: str) -> bool:
    """Two runs failed the same way: the same start of the message (the file it names may differ:
    "could conflict: README.md", then "…: README.md.bak"), or both stopped at a prompt."""

    def key(x: str) -> str:
        return re.sub(r"\d+", "", x.lower())[:40]

    return key(a) == key(b)


def _signature(step: Step) -> str:
    prompt = stalled(step)
    return "stops at an interactive prompt" if prompt else error_signature(step.result, step.command)


# Failures every user of the tool knows, whatever the project: a file utility pointed at a path that is not
# there (yet), git refusing to merge over uncommitted changes. The way out is the tool's own message.
_FILE_UTILITIES = frozenset({"cp", "mv", "cat", "rm", "ln", "touch", "chmod", "chown", "head", "tail", "cd", "sed"})


def generic_failure(step: Step) -> bool:
    """A failure that teaches nothing about this project: a file utility pointed at a missing path, git
    refusing to overwrite local changes."""
    head = step.result[:1500]
    if re.search(r"would be overwritten by (?:merge|checkout)|Please commit your changes or stash them", head):
        return True
    first = core_words(main_segment(step.command))
    missing_path = re.search(r"No such file or directory|cannot stat", head)
    return bool(missing_path) and bool(first) and first[0] in _FILE_UTILITIES


def error_episode(steps: Sequence[Step], i: int, consumed: set[int]) -> Episode | None:
    fail = steps[i]
    if generic_failure(fail):
        return None
    prompt = stalled(fail)
    signature = _signature(fail)
    missing = bool(_MISSING_TOOL.search(fail.result[:600]))
    named = re.search(r"([\w.-]+): (?:command )?not found|'([\w.-]+)' is not recognized", fail.result[:600])
    tool = (named.group(1) or named.group(2)) if named else ""
    attempts = [i]
    end, success, via_form = -1, False, False
    for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
        s = steps[j]
        if not is_exec(s) or is_blocked(s):
            continue
        if missing and tool and tool not in s.command and not _new_tool(fail, s):
            continue  # `head x | jq` without jq is not the way around a missing jq
        if _same_goal(fail, s):
            if succeeded(s) and action_kind(s.command) == "diagnostic" and action_kind(fail.command) != "diagnostic":
                continue  # looking at the state (`docker compose ps`) is not reaching the goal
            if not succeeded(s) and same_error(_signature(s), signature):
                attempts.append(j)
                consumed.add(j)
                continue
            end, success = j, succeeded(s)
            break
        if succeeded(s) and action_kind(s.command) != "diagnostic" and _related_form(fail, s):
            end, success, via_form = j, True, True
            break
        if missing and succeeded(s) and _same_targets(fail, s) and _new_tool(fail, s):
            end, success, via_form = j, True, True  # `jq . a.jsonl` not installed → `python3 -c … a.jsonl` did the job
            break
    if end < 0 and prompt and len(attempts) >= 2:
        return Episode("stall", i, tuple(attempts), -1, False, -1, "")
    if end < 0 or not signature:
        return None
    # another form of the command that reached the goal is the fix itself, not what ran before it; so is a
    # chain that changes state before retrying (`git remote set-url origin git@… && git push`)
    chained = end >= 0 and any(_segment_kind(seg) == "state" for seg in segments(steps[end].command)[:-1])
    if chained and _changed_state(steps, attempts[-1], end):
        chained = False  # `mkdir -p …` ran before `rm -rf junk; retry`: the earlier change did the work
    fix = end if via_form or (chained and success) else _credit(steps, attempts[-1], end)
    resolved = steps[end]
    differs = clean_command(resolved.command) != clean_command(fail.command) or workdir(resolved.command) != workdir(
        fail.command
    )
    if fix < 0 and differs and success:
        fix = end
    evidence = _evidence(steps, i, end)
    # the explanation after the last failed attempt is the one the fix acted on; earlier ones may be wrong
    why = next((w for a in reversed(attempts) if (w := _why(steps, a, end, evidence))), "")
    if fix < 0 and not why:
        return None  # the same command simply worked again: nothing to learn
    gate = bool(_GATE.search(fail.result[:2000])) and goal_key(fail.command).startswith(("git", "pre-commit"))
    return Episode("gate" if gate else "error", i, tuple(attempts), end, success, fix, why)


_HOOK = re.compile(r"\bhook\b|PreToolUse", re.I)

# After a refusal, "continue" / "go on" lets the same call run again: that is no instruction. Only words
# that redirect the work ("use X instead", "don't", "不要", "ではなく") make what the person said a lesson.
_GO_ON = re.compile(
    r"^\W*(?:continue|go on|go ahead|proceed|carry on|keep going|resume|ok(?:ay)?|yes|继续|続けて)\W*$", re.I
)
_REDIRECT = re.compile(
    r"\b(?:instead|don't|do not|never|rather|use|try|not|stop|without|avoid|only)\b|"
    r"不要|别|改用|而是|不用|ではなく|使って|しないで|やめて",
    re.I,
)


def redirects(text: str) -> bool:
    """What the person said after refusing a call tells the agent to do it another way."""
    return not _GO_ON.match(text) and bool(_REDIRECT.search(text))


def _same_call(a: Step, b: Step) -> bool:
    """The same tool, and for shell calls the same goal: a refused `git push` after a refused `git commit`
    is two refusals, not one call blocked twice."""
    return a.tool == b.tool and (not is_exec(a) or goal_key(a.command) == goal_key(b.command))


def blocked_episode(steps: Sequence[Step], i: int, consumed: set[int]) -> Episode | None:
    """Calls refused by the approval system or the user, and what happened next: the same call allowed
    later, another form that ran, or what the person said to do instead."""
    first = steps[i]
    attempts = [i]
    user_said = ""
    end, success = -1, False
    for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
        s = steps[j]
        if s.role == "user" and not user_said and not attempts[-1] < j - 6:
            text = " ".join(s.text.split())
            if 8 <= len(text) <= 300 and not is_question(text) and not text.startswith("[") and redirects(text):
                user_said = text
            continue
        if s.role != "tool":
            continue
        if is_blocked(s):
            if _same_call(first, s):
                attempts.append(j)
                consumed.add(j)
            continue
        if s.tool == first.tool and succeeded(s) and not (is_exec(s) and action_kind(s.command) == "diagnostic"):
            end, success = j, True
            break
        if j - attempts[-1] > 8:
            break
    hook = bool(_HOOK.search(first.result[:500]))
    if len(attempts) < 2 and not user_said and not (hook and end >= 0):
        return None  # one refusal then on with the work: no loop, nothing to pre-approve
    return Episode("hook" if hook else "blocked", i, tuple(attempts), end, success, end, "", user_said)


def denied_episode(steps: Sequence[Step], i: int, consumed: set[int]) -> Episode | None:
    """Writes of one file the OS refused, up to the write of that file that went through; what the person
    said last before it (\"I've fixed the ownership\") is how it got through."""
    first = steps[i]
    attempts, user_said, end = [i], "", -1
    for j in range(i + 1, min(len(steps), i + 1 + LOOKAHEAD)):
        s = steps[j]
        if s.role == "user":
            text = " ".join(s.text.split())
            if 8 <= len(text) <= 300 and not is_question(text) and _ABOUT_ACCESS.search(text):
                user_said = text
        elif is_edit(s) and edited_file(s) == edited_file(first):
            if write_denied(s):
                attempts.append(j)
                consumed.add(j)
            elif not s.is_error:
                end = j
                break
    if end < 0 or not user_said:
        return None  # never written, or written without anyone doing anything: nothing to learn
    return Episode("denied", i, tuple(attempts), end, True, end, "", user_said)


def episodes(steps: Sequence[Step]) -> list[Episode]:
    found: list[Episode] = []
    consumed: set[int] = set()
    for i, s in enumerate(steps):
        if i in consumed or s.role != "tool" or not (s.is_error or hidden_failure(s)):
            continue
        if write_denied(s):
            ep = denied_episode(steps, i, consumed)
        elif is_blocked(s):
            ep = blocked_episode(steps, i, consumed)
        elif (
            is_exec(s)
            and not is_usage_noise(s)
            and (not looks_only(s.command) or _MISSING_TOOL.search(s.result[:600]) or "curl" in s.command)
        ):  # `ls x` finding nothing is looking, not a problem; a missing `jq` or a failing test is one
            ep = error_episode(steps, i, consumed)
        else:
            continue
        if ep is not None and not any(e.end == ep.end >= 0 and e.kind == ep.kind for e in found):
            found.append(ep)  # two failures resolved by the same run are one lesson, told from the first
    return found
