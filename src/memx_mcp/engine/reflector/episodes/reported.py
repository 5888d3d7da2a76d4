"""Episodes a person reports: "it does not work" → the assistant's edits → "it works now"."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from ..shell.commands import is_question
from ..transcripts.transcript import Step
from .episodes import Episode, _why, edited_file, is_edit

# What a person says when something they asked for still does not work, and when it finally does.
_COMPLAINT = re.compile(
    r"(?i)\b(?:doesn't|does not|isn't|is not|won't|still not|not) (?:work|working|switch\w*|show\w*|load\w*|"
    r"chang\w*|appl\w*|render\w*)|\bstill (?:broken|fails?|failing|the same)|\bbroken\b|"
    r"動作しない|動かない|うまく動作していない|うまくいかない|切り替わらない|反映されない|表示されない|効かない|"
    r"変わらない|不行|没用|没反应|不起作用|不生效|无效|还是不|報錯|报错|出错|不工作"
)


_CONFIRMED = re.compile(
    r"(?i)\b(?:works now|it works|that worked|it worked|(?:that |this )?fixed it|all good now|works perfectly)\b|"
    r"解決しました|直りました|動きました|うまくいきました|できました|好了|可以了|解决了|成功了|没问题了|搞定了"
)


_NOT_PROJECT = re.compile(r"(?:^|/)\.claude/|(?:^|/)plans?/[\w-]+\.md$")


def reported_episodes(steps: Sequence[Step], window: int = 120) -> list[Episode]:
    """A person says it does not work → the assistant edits → the person says it works now. The edits
    after the last complaint get the credit; the person's word is the observed success."""
    found: list[Episode] = []
    i = 0
    while i < len(steps):
        s = steps[i]
        if s.role != "user" or not _COMPLAINT.search(s.text) or is_question(s.text.strip()):
            i += 1
            continue
        last = i
        end = -1
        for j in range(i + 1, min(len(steps), i + window)):
            u = steps[j]
            if u.role != "user" or u.text.startswith("<"):
                continue
            if _CONFIRMED.search(u.text) and not _COMPLAINT.search(u.text) and not is_question(u.text.strip()):
                end = j
                break
            if _COMPLAINT.search(u.text):
                last = j
        if end < 0:
            i += 1
            continue
        edits = tuple(
            x.index
            for x in steps[last + 1 : end]
            if is_edit(x) and not x.is_error and edited_file(x) and not _NOT_PROJECT.search(_path_of(x))
        )
        if edits:
            evidence = "\n".join(
                [steps[last].text, *(edited_file(steps[e]) for e in edits)]
                + [str(v)[:1500] for e in edits for v in steps[e].tool_input.values() if isinstance(v, str)]
            )
            why = _why(steps, last, end, evidence) or _why(steps, i, last, evidence)
            found.append(Episode("reported", i, (i, last), end, True, edits[-1], why, steps[end].text, edits))
        i = end + 1
    return found


def _path_of(step: Step) -> str:
    return str(step.tool_input.get("file_path") or step.tool_input.get("path") or "").replace("\\", "/")


_EDIT_TOKEN = re.compile(r"[\w.$#@:-]+|[^\s\w]")


def edit_change(step: Step, limit: int = 90) -> str:
    """What a small edit changed, as "`document.body` → `document.documentElement`", or ''."""
    old = str(step.tool_input.get("old_string") or "")
    new = str(step.tool_input.get("new_string") or "")
    if not old or not new:
        return ""
    a, b = _EDIT_TOKEN.findall(old), _EDIT_TOKEN.findall(new)
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or len(ops) > 2:
        return ""
    parts = []
    for _tag, i1, i2, j1, j2 in ops:
        before, after = "".join(_join(a[i1:i2])), "".join(_join(b[j1:j2]))
        if len(before) > limit or len(after) > limit or not after.strip():
            return ""
        parts.append(f"`{before}` → `{after}`" if before.strip() else f"added `{after}`")
    return parts[0] + (" …" if len(parts) > 1 else "")  # the first change names it; more is marked


def _join(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if out and (t[0].isalnum() or t[0] in "_$") and (out[-1][-1].isalnum() or out[-1][-1] in "_$"):
            out.append(" ")
        out.append(t)
    return out
