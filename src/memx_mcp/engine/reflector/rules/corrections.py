"""Preferences a person gives as a short correction of what the assistant just did: "@unocss/preset-icons
is no need", "default.vue:24 should use div tag", "rounded 也可以放在 border 属性", "gap 还有 shrink 可以放到
flex 里". They are not phrased as rules ("always …", "不要 …"), so the convention rule misses them, yet they
are what the person wants every time. Only a short message right after the assistant's work, stating (not
asking) a correction that names something: a file, a flag, code, or in Chinese/Japanese text a Latin-script
identifier."""

from __future__ import annotations

import re

from ....text.clip import shorten
from ....text.sentences import split_sentences
from ..shell.commands import is_question
from ..transcripts.transcript import Step, Transcript
from .structural import CONFIDENCE, Candidate

MAX_MESSAGE = 200
_CORRECTION = re.compile(
    r"\bis (?:no need|not needed|unnecessary|not necessary)\b|\bno need (?:to|for)\b|\b(?:don't|do not) need\b|"
    r"\bshould (?:use|be)\b|\bcan (?:also )?(?:go|be put|be placed|be merged) in(?:to|side)?\b|"
    r"\balso (?:goes|belongs) in(?:to)?\b|"
    r"不需要|没必要|也可以放|可以放到|可以放在|应该用|应该是|改用|合并到|"
    r"いらない|必要ない|不要です|ではなく|にまとめ",
    re.I,
)
# what the person must name: code, a file, a path, a flag, an @file mention
_NAMED = re.compile(r"`[^`]+`|(?<![\w@])[\w.-]+\.[a-z]{1,5}\b|(?<!\w)--?[a-z][\w-]+|\w/\w|@[\w./-]+")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"(?<![A-Za-z])[A-Za-z][\w-]{1,30}")
# someone describing what happens to them reports a problem, not a preference
_REPORT = re.compile(r"^when I\b|\b(?:I am|I'm|I get|I got|I see|I saw|it keeps|doesn't work|not working)\b", re.I)


def _names_something(sentence: str) -> bool:
    if _NAMED.search(sentence):
        return True
    return bool(_CJK.search(sentence)) and bool(_LATIN_WORD.search(sentence))


def _after_work(steps: tuple[Step, ...], i: int) -> bool:
    """The message answers something the assistant did (text or a tool call just before it)."""
    return i > 0 and steps[i - 1].role in ("assistant", "tool")


def _restated(steps: tuple[Step, ...], i: int, sentence: str) -> str:
    """The assistant's first sentence after the correction, when it says what it changes: it names the
    thing in its own words ("Replacing the `<i>` tag with a `<div>` tag")."""
    words = {w.lower() for w in _LATIN_WORD.findall(sentence)}
    for s in steps[i + 1 : i + 4]:
        if s.role == "user":
            return ""
        if s.role == "assistant" and s.text.strip():
            first = next(iter(split_sentences(s.text.strip())), "")
            if first and not is_question(first) and words & {w.lower() for w in _LATIN_WORD.findall(first)}:
                return shorten(first.rstrip(":：").strip(), 160)
            return ""
    return ""


def correction_candidates(t: Transcript) -> list[Candidate]:
    found: list[Candidate] = []
    for i, step in enumerate(t.steps):
        text = " ".join(step.text.split())
        if step.role != "user" or not text or len(text) > MAX_MESSAGE or not _after_work(t.steps, i):
            continue
        for sentence in split_sentences(text):
            s = sentence.strip(" -*•>")
            if (
                len(s) < 8
                or is_question(s)
                or s.count("`") % 2
                or _REPORT.search(s)
                or not _CORRECTION.search(s)
                or not _names_something(s)
            ):
                continue
            facts = {"sentence": shorten(s, 200), "then": _restated(t.steps, i, s)}
            found.append(
                Candidate(
                    "PreferenceRule",
                    CONFIDENCE["PreferenceRule"],
                    step.index,
                    step.turn,
                    f"PreferenceRule:{s[:80]}",
                    facts,
                    step.text[:3000],
                )
            )
            break
    return found
