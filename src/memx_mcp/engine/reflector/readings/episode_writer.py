"""Hybrid mode's second path: the LLM gets one whole sanitized episode (the goal or failure, the actions
taken, the first observed success) and writes the bullet itself; the rules' draft goes with it only as a
hint. What comes back is not trusted: it is masked by the sanitizer again, and a bullet is kept only when
every command it quotes is in the episode, at least one identifier it names is there outside a question,
and it claims success only where the episode shows one. A rejected bullet is reported with its reason."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....text.sentences import split_sentences
from ....text.tokenize import STOP_WORDS
from ..shell.commands import is_question

MAX_BULLET = 400

WRITE_PROMPT = (
    "One whole episode of a coding session, in order: a goal or a failure, the actions taken, and the "
    "outcome. [Tool FAILED] / [Tool ok] mark each call's result; [user] and [assistant] are messages:\n"
    "<episode>\n{episode}\n</episode>\n\n"
    "Draft bullets written by rules from it (hints only: they may credit the wrong command or miss the "
    "point):\n{drafts}\n\n"
    "Write the bullet(s) a good teammate would keep from this episode, from what happened, not from the "
    "drafts: what failed, the action that fixed it (the change made just before the first success, not "
    "the commands that only looked around), and why when the episode says why. Quote commands, flags, "
    "files and error text verbatim from the episode and invent none; credit the command exactly as it was run "
    "(its program, script or wrapper included). Say it worked only when the episode shows a later success; an "
    "interrupted or cut-off action did not succeed. What the assistant proposed, wrote or guessed is no "
    "project fact or convention unless the user asked for it or confirmed it. Never take a fact from a "
    "question. If the episode teaches nothing lasting, "
    'answer an empty list. Answer {{"items": [{{index (the draft it replaces, 0 if none), keep: true, score '
    "(0-100), bullet, section (COMMANDS, DEBUGGING, ARCHITECTURE, WORKFLOW, TOOLS, PATTERNS, PREFERENCES, "
    "GENERAL), knowledge_type (METHOD, TRICK, PITFALL, PREFERENCE, KNOWLEDGE)}}]}} only."
)


def write_prompt(episode: str, drafts: Sequence[str]) -> str:
    listed = "\n".join(f"{i}. {d}" for i, d in enumerate(drafts)) or "(none)"
    return WRITE_PROMPT.format(episode=episode, drafts=listed)


_CODE = re.compile(r"`([^`\n]+)`")
# what a bullet can cite: a file name, a path, a flag, a snake_case/CamelCase identifier, an error class,
# a quoted error message
_IDENTIFIER = re.compile(
    r"(?<![\w/.-])(?:[\w-]+/)*[\w-]+\.[A-Za-z]{1,6}\b|(?<!\w)--?[A-Za-z][\w-]+|\b[a-z]+_[\w]+\b|"
    r"\b[A-Z][a-z]+[A-Z]\w*\b|\b\w+(?:Error|Exception)\b|\"[^\"\n]{6,200}\""
)
_CLAIMS_SUCCESS = re.compile(r"\b(?:worked|works now|fixed|resolved|succeeded|passe[sd]|solved)\b", re.I)
_SUCCESS_SEEN = re.compile(r"^\[[\w.-]+ ok\]|\b\d+ passed\b|\bpassed\b|\bsucce(?:ss|eded)\b|\bworks\b", re.I | re.M)


def _statements(episode: str) -> str:
    """The episode without its questions: a fact asked about ("is the port 8080?") is no fact."""
    return "\n".join(s for s in split_sentences(episode) if not is_question(s)).lower()


_WORD = re.compile(r"[^\W\d_]{4,}")
# the tokenizer's stop words, and the words any bullet about a session uses
_COMMON = STOP_WORDS | frozenset(
    "should must always never every onto only also just more most less some such each being done make made uses "
    "used using user users want wants asked asks said says here after before".split()
)


def _told(bullet: str, stated: str) -> bool:
    """A bullet without identifiers stands on the episode when most of its own words (four letters or more,
    the common ones aside) are in the episode's statements: at least three, and at least half of them."""
    words = {w for w in _WORD.findall(bullet.lower()) if w not in _COMMON}
    found = {w for w in words if w in stated}
    return len(found) >= 3 and 2 * len(found) >= len(words)


def shape_problem(text: str) -> str:
    """Why a model's bullet is no bullet at all ('' when it is one): empty, too long, or a question."""
    if not text:
        return "empty"
    if len(text) > MAX_BULLET:
        return f"longer than {MAX_BULLET} characters"
    return "it is a question" if is_question(text) else ""


def check_written(bullet: str, episode: str) -> str:
    """Why the LLM's bullet cannot be kept ('' when it can): it must stand on the episode's own words."""
    text = " ".join(bullet.split())
    shape = shape_problem(text)
    if shape:
        return shape
    low = episode.lower()
    invented = [c for c in _CODE.findall(text) if c.strip().lower() not in low]
    if invented:
        return f"quotes `{invented[0][:80]}`, which the episode does not contain"
    cited = [c.strip() for c in _CODE.findall(text)] + [m.group(0).strip('"') for m in _IDENTIFIER.finditer(text)]
    present = [c for c in cited if c and c.lower() in low]
    stated = _statements(episode)
    if not present:
        if not _told(text, stated):  # a convention or preference said in words must be said there
            return "names no command, file or identifier of the episode, nor says what its statements say"
    elif not any(c.lower() in stated for c in present):
        return "what it names appears in the episode only in a question"
    if _CLAIMS_SUCCESS.search(text) and not _SUCCESS_SEEN.search(episode):
        return "says it worked, but the episode shows no success"
    return ""
