"""BulletDistiller: one concise, self-contained bullet per candidate ("When X, do Y, because Z"), with
commands and identifiers kept verbatim."""

from __future__ import annotations

from ..models import KnowledgeType, Section
from .rules import Candidate

MAX_BULLET_CHARS = 400


def _code(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"`{text.replace('`', chr(39))}`"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _error_fix(f: dict[str, str]) -> str:
    head = f"When {_code(f['command'])} fails with {_quote(f['error'])}"
    if int(f.get("attempts", "1")) >= 2:
        head = f"{_code(f['command'])} failed {f['attempts']} times with {_quote(f['error'])}"
    fixes = []
    if f.get("why"):
        fixes.append(f["why"].rstrip("."))
    if f.get("then_ran"):
        fixes.append(f"run {_code(f['then_ran'], 80)} first")
    if f.get("worked"):
        fixes.append(f"{_code(f['worked'])} worked")
    if f.get("edited") and not f.get("why"):
        fixes.append(f"the fix was in {f['edited']}")
    return f"{head}: {'; '.join(fixes)}."


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
    examples = ", ".join(_code(e, 60) for e in f["examples"].split(" | ") if e)
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
    else:
        text = _repetitive(f)
    text = " ".join(text.split())
    return text if len(text) <= MAX_BULLET_CHARS else text[: MAX_BULLET_CHARS - 1] + "…"


# The rule says more about the kind of knowledge than keyword cues do.
RULE_CLASSES: dict[str, tuple[Section, KnowledgeType]] = {
    "ErrorFixRule": (Section.DEBUGGING, KnowledgeType.PITFALL),
    "RetrySuccessRule": (Section.DEBUGGING, KnowledgeType.TRICK),
    "ConfigChangeRule": (Section.TOOLS, KnowledgeType.KNOWLEDGE),
    "NewToolRule": (Section.TOOLS, KnowledgeType.METHOD),
    "RepetitiveOpRule": (Section.WORKFLOW, KnowledgeType.METHOD),
}
