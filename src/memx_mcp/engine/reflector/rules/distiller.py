"""BulletDistiller: one concise, self-contained bullet per candidate ("When X, do Y, because Z"), with
commands and identifiers kept verbatim."""

from __future__ import annotations

from ....domain.models import KnowledgeType, Section
from ....text.clip import shorten
from .structural import Candidate

MAX_BULLET_CHARS = 400


def _code(text: str, limit: int = 160) -> str:
    """A command verbatim in backticks: whole, or shortened at an argument boundary with a marked " …"."""
    short = shorten(text, limit) or "…"
    return f"`{short.replace('`', chr(39))}`"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _why(f: dict[str, str]) -> str:
    return shorten(f["why"], 220).rstrip(".:;。：") if f.get("why") else ""


def _blocked(f: dict[str, str]) -> str:
    what = _code(f["blocked"], 120)
    if f.get("kind") == "hook":
        instead = f.get("instead") or f.get("ran_later")
        tail = f"; {_code(instead, 120)} ran instead" if instead else ""
        return f"A hook in this project blocks {what}: {_quote(f.get('message', ''))}{tail}."
    times = int(f.get("attempts", "1"))
    said = f" ({_quote(f['message'])})" if f.get("message") else ""
    if f.get("user_said"):
        return f"When {what} was refused{said}, the user said instead: {_quote(shorten(f['user_said'], 240))}."
    if f.get("instead"):
        return f"{what} is blocked by the approval settings here{said}; {_code(f['instead'], 120)} ran instead."
    if f.get("ran_later"):
        return f"{what} needs approval in this project: blocked {times} times{said} before it ran; pre-approve it."
    return f"{what} was blocked {times} times{said} and never ran in this session: pre-approve it or do it another way."


def _actions(listed: str, success: bool) -> str:
    """ "after running `mix format` and editing app.ex, it succeeded" from "run:mix format" and "edit:app.ex" lines."""
    done = []
    for item in listed.split("\n"):
        kind, _, what = item.partition(":")
        done.append(f"running {_code(what, 120)}" if kind == "run" else f"editing {what}")
    said = ", ".join(done[:-1]) + f" and {done[-1]}" if len(done) > 1 else done[0]
    return f"after {said}, " + ("it succeeded" if success else "that error went away")


def _error_fix(f: dict[str, str]) -> str:
    if f.get("kind") in ("blocked", "hook"):
        return _blocked(f)
    if f.get("kind") == "denied":
        times = int(f.get("attempts", "1"))
        count = f" {times} times" if times > 1 else ""
        return (
            f"The agent's write of {f['file']} was refused by the OS{count} ({_quote(f['message'])}); after the "
            f"user said {_quote(shorten(f['user_said'], 200))}, the edit applied."
        )
    if f.get("kind") == "reported":
        why = f" {shorten(_why(f), 150).rstrip('.:;。：')};" if f.get("why") else ""
        what = f"changed {f['changes']}" if f.get("changes") else f"edited {f['files']}"
        confirmed = _quote(f["confirmed"])
        return f"When the user reported {_quote(f['complaint'])}:{why} {what}; then the user confirmed: {confirmed}."
    if f.get("kind") == "stall":
        tried = f" (also tried {_code(f['tried'], 120)})" if f.get("tried") else ""
        return (
            f"{_code(f['command'])} stops at the interactive prompt {_quote(f['error'])} in the agent's shell, "
            f"{f['attempts']} attempts{tried}: it never got past it in this session."
        )
    command = _code(f["command"])
    error = f" with {_quote(f['error'])}" if f.get("error") else ""
    attempts = int(f.get("attempts", "1"))
    if f.get("kind") == "gate":
        head = f"A commit check runs here: when {command} fails{error}"
    elif attempts >= 2:
        head = f"{command} failed {attempts} times{error}"
    else:
        head = f"When {command} fails{error}"
    parts = [_why(f)] if f.get("why") else []
    success = f.get("outcome") == "succeeded"
    kind = f.get("fix_kind", "")
    if kind == "form" and f.get("worked"):
        parts.append(f"{_code(f['worked'])} worked" if success else f"{_code(f['worked'])} got past that error")
    elif kind == "dir":
        parts.append(f"it worked when run from `{f['fix_what']}`")
    elif kind == "actions" and f.get("fix_what"):
        parts.append(_actions(f["fix_what"], success))
    # old candidates (before episodes) carry then_ran/worked/edited
    if f.get("then_ran"):
        parts.append(f"run {_code(f['then_ran'], 120)} first")
    if not kind and f.get("worked"):
        parts.append(f"{_code(f['worked'])} worked")
    if not parts:
        return ""
    return f"{head}: {'; '.join(parts)}."


def _config(f: dict[str, str]) -> str:
    if "sentence" in f:
        return f["sentence"]
    where = f"In {_code(f['file'], 60)}, " if f.get("file") else ""
    what = f"change {f['changed']}" if f.get("changed") else f"set {_code(f['set'], 120)}"
    why = f" ({f['why'].rstrip('.')})" if f.get("why") else ""
    text = f"{where}{what}{why}."
    return text[0].upper() + text[1:]


def _new_tool(f: dict[str, str]) -> str:
    if "sentence" in f:
        return f["sentence"]
    if "install" in f:
        why = f": {f['why'].rstrip('.')}" if f.get("why") else ""
        return f"Install {f['packages']} with {_code(f['install'])}{why}."
    examples = ", ".join(_code(e, 60) for e in f["examples"].split("\n") if e)
    return f"This project uses the {_code(f['program'], 30)} CLI ({f['uses']} runs in one session), e.g. {examples}."


def _repetitive(f: dict[str, str]) -> str:
    if "sentence" in f:
        return f["sentence"]
    what = f"{f['description'].rstrip('.')}: " if f.get("description") else ""
    return f"{what}{_code(f['command'], 140)} (run {f['times']} times in one session)."


def distill(c: Candidate) -> str:
    f = c.facts
    if c.rule in ("ErrorFixRule", "RetrySuccessRule"):
        if "story" in f:
            text = f["story"]
        elif "fix" in f:
            text = f["fix"] if not f["error"] or f["error"] in f["fix"] else f"{f['error'].rstrip('.')} → {f['fix']}"
        else:
            text = _error_fix(f)
    elif c.rule == "ConfigChangeRule":
        text = _config(f)
    elif c.rule == "NewToolRule":
        text = _new_tool(f)
    elif c.rule == "ConventionRule":
        text = f"The user's rule here: {f['sentence']}"
    elif c.rule == "PreferenceRule":
        then = f" (the assistant then: {f['then']})" if f.get("then") else ""
        text = f"The user's preference here, given as a correction: \u201c{f['sentence']}\u201d{then}."
    else:
        text = _repetitive(f)
    return shorten(text, MAX_BULLET_CHARS)


# The rule says more about the kind of knowledge than keyword cues do.
RULE_CLASSES: dict[str, tuple[Section, KnowledgeType]] = {
    "ErrorFixRule": (Section.DEBUGGING, KnowledgeType.PITFALL),
    "RetrySuccessRule": (Section.DEBUGGING, KnowledgeType.TRICK),
    "ConfigChangeRule": (Section.TOOLS, KnowledgeType.KNOWLEDGE),
    "NewToolRule": (Section.TOOLS, KnowledgeType.METHOD),
    "RepetitiveOpRule": (Section.WORKFLOW, KnowledgeType.METHOD),
    "ConventionRule": (Section.WORKFLOW, KnowledgeType.METHOD),
    "PreferenceRule": (Section.PREFERENCES, KnowledgeType.PREFERENCE),
}
