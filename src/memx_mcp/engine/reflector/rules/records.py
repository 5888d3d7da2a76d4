"""Fix records a session writes out itself: a work log or a summary that lists, per problem, the symptom,
the cause and the fix ("**症状**: … **原因**: … **修正**: …", "Root cause: … Fix: …"). The author has already
distilled the lesson; the rule keeps the three together, and only from a text that reports the work done
(tests passing, "全件パス", "fixed"), never from a plan."""

from __future__ import annotations

import re

from ....text.clip import shorten

_HEADING = re.compile(r"^\s*(?:#{2,6}\s+|\d+\.\s+\*\*|\*\*\d+\.)")
_LABEL = r"\s*[-*•]?\s*\**\s*(?:{})\s*\**\s*[:：]\s*\**\s*(?P<body>.+)$"
_SYMPTOM = re.compile(_LABEL.format(r"症状|現象|现象|问题|問題|Symptom|Problem|Issue|Error"), re.I)
_CAUSE = re.compile(_LABEL.format(r"原因(?:その\d|\d)?|根本原因|根因|Root cause|Cause"), re.I)
_FIX = re.compile(_LABEL.format(r"修正|修复|修復|対策|对策|解決|解决|解决方法|Fix|Solution|Resolution"), re.I)
_DONE = re.compile(
    r"\b\d+ passed\b|全件パス|パスさせた|成功しました|全部通过|已通过|测试通过|"
    r"\ball (?:\d+ )?tests? pass|\bnow pass(?:es)?\b|✅",
    re.I,
)


def fix_records(text: str) -> list[tuple[str, str, str]]:
    """(symptom, cause, fix) per section of a text that reports finished work; '' where a part is not said."""
    if not _DONE.search(text):
        return []
    out: list[tuple[str, str, str]] = []
    symptom = cause = ""
    fixes: list[str] = []

    def close() -> None:
        if fixes and (symptom or cause):
            out.append((symptom, cause, "; ".join(fixes)))

    for line in text.splitlines():
        if _HEADING.match(line):
            close()
            symptom, cause, fixes = "", "", []
            continue
        for pattern, part in ((_SYMPTOM, "s"), (_CAUSE, "c"), (_FIX, "f")):
            m = pattern.match(line)
            if not m:
                continue
            body = m.group("body").strip().strip("*").strip()
            if part == "s" and not symptom:
                symptom = body
            elif part == "c":
                cause = f"{cause}; {body}" if cause else body
            elif part == "f":
                fixes.append(body)
            break
    close()
    return out


def told(symptom: str, cause: str, fix: str) -> str:
    head = shorten(symptom, 120) or shorten(cause, 160)
    because = f" (cause: {shorten(cause, 160)})" if symptom and cause else ""
    return f"{head.rstrip('.。')}{because}: fixed by {shorten(fix, 200).rstrip('.。')}."
