"""Advice must be backed by what happened (issue 31, point 1).

A lesson that tells the agent to run a command, install a package or set a setting or variable is advice. It
is held for review unless what it advises happened in the session: the assistant ran the command in a shell
and it succeeded, or the user typed it. A file read, a fetched page or a command's output (content) never
backs advice, however it is worded: that is what an attacker controls. Settings may also be backed by what the
assistant wrote into a file itself (``voices`` keeps text the assistant copied from content in content's
voice).

Commands are compared by what distinguishes them, not character for character: the program (``python -m
pip`` is ``pip``, ``npx tsc`` is ``tsc``), ``sudo``, the sub-command, packages and other plain arguments,
long flags, variable assignments (``PORT=8001``) and addresses (URLs, ``user@host:path``). Paths, numbers,
short flags, quoted messages and placeholders are left out, so ``PORT=8001 make dev`` is backed by
``cd web && PORT=8001 make dev 2>&1 | tail`` and ``pytest tests/test_api.py`` by ``pytest -q tests``, while
``sudo chmod …`` is not backed by ``chmod …`` nor ``pip install requests2`` by ``pip install requests``.

A command a lesson only reports ("when `npm run build` fails with …") or warns against ("never run `x`",
"instead of `x`") is not advice to run it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .shell.commands import COMMON_CLIS, INSTALL, words_of
from .transcripts.transcript import Step
from .voices import quotes

_ASSIGN = re.compile(r"^[A-Za-z_][\w.]*=[^=]")
_URL = re.compile(r"^(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]+:)", re.I)
_PLACEHOLDER = re.compile(r"^<.*>$|^\[.*\]$|^\{.*\}$|…|\.\.\.|REDACTED|^\$")
_PATHLIKE = re.compile(r"[/\\~]|^\.|\.[A-Za-z0-9]{1,6}$")
_PROGRAM = re.compile(r"^(?:\./|~/|/)?[a-z0-9_][\w.+-]*(?:/[\w.+-]+)*$")
_WRAPPERS = {"npx", "pnpx", "bunx", "uvx", "time", "nohup", "env", "exec", "command", "builtin"}
_RUNNERS = {
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("npm", "exec"),
    ("yarn", "dlx"), ("pnpm", "dlx"), ("hatch", "run"), ("pdm", "run"), ("rye", "run"),
}  # fmt: skip
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_REDIRECT = re.compile(r"^\d?>>?&?\d?$|^<$|^\d?>>?\S+$|^2>&1$")
# What is said about a command that shows it is reported, not advised ("fails with", "失败", "で失敗")
_REPORTED_AFTER = re.compile(
    r"^[\s`'\")\]]*(?:\w+\s+){0,3}?(?:fails?|failed|failing|errors?|errored|crash(?:es|ed)?|hangs?|hung|exits?|exited|"
    r"returns?\s+(?:an?\s+)?(?:error|non-?zero)|is\s+(?:refused|denied|rejected)|times?\s+out|timed\s+out|"
    r"报错|失败|出错|失敗|エラー|が失敗|で失敗|が落ち)",
    re.I,
)
_WARNED_BEFORE = re.compile(
    r"(?:\b(?:never|not|don'?t|do\s+not|avoid|instead\s+of|rather\s+than|without|no\s+longer|stop)\b|不要|别|勿|"
    r"而不是|代替|ではなく|の代わりに)[^.;:。；：`]{0,15}$",
    re.I,
)
_WARNED_AFTER = re.compile(r"^[\s`'\"]*(?:は使わない|を使わない|しない|は不要|不要|是不行的)")
# A command in the lesson's prose, unquoted: a known program followed by a flag, an address, an assignment or
# a pipe within a few words ("git config --global core.hooksPath …", "echo … | base64 -d | bash")
_UNQUOTED = re.compile(
    r"(?<![\w./$-])(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S+\s+)*[a-z][\w.+-]*(?:\s+[^\s,;。，；：:、）)]+){1,40}",
)
_SETTING = re.compile(r"(?<![\w.$/-])([A-Za-z_][\w.-]*)\s?=\s?(?!=)([\"']?[^\s,;`'\"()<>\]]+[\"']?)")
_LINKS = re.compile(r"[a-z][\w+.-]*://\S+", re.I)


def _norm_token(word: str) -> str:
    return word.strip("\"'`").lower()


def _program(word: str) -> str:
    name = word.rsplit("/", 1)[-1].lower()
    name = re.sub(r"^(python|pip|pypy)[\d.]*$", r"\1", name)
    return name


def _simple(command: str) -> list[list[str]]:
    """The simple commands of a command line (first line, here-doc bodies out): their shell words."""
    first = command.strip().split("\n", 1)[0]
    first = re.sub(r"<<-?\s*['\"]?\w+['\"]?.*$", "", first)
    return [w for w in (words_of(part) for part in _SPLIT.split(first) if part.strip()) if w]


def _canonical(words: list[str]) -> list[tuple[str, bool]]:
    """A simple command's words, normalised, each with whether it distinguishes the command."""
    out: list[tuple[str, bool]] = []
    rest = [w for w in words if not _REDIRECT.match(w)]
    while rest and _ASSIGN.match(rest[0]):
        out.append((_norm_token(rest[0]), True))
        rest = rest[1:]
    if rest and rest[0] == "sudo":
        out.append(("sudo", True))
        rest = rest[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
    while rest and _program(rest[0]) in _WRAPPERS and len(rest) > 1:
        rest = rest[1:]
        while rest and (rest[0].startswith("-") or _ASSIGN.match(rest[0])):
            rest = rest[1:]
    if len(rest) >= 3 and _program(rest[0]) in {"python", "pypy"} and rest[1] == "-m":
        rest = rest[2:]
    if len(rest) >= 2 and (_program(rest[0]), rest[1]) in _RUNNERS:
        rest = rest[2:]
    if not rest:
        return out
    out.append((_program(rest[0]), True))
    for w in rest[1:]:
        t = _norm_token(w)
        if not t:
            continue
        if t.startswith("--"):
            name, _, value = t.partition("=")
            out.append((name, True))
            if value:
                out.append((value, not (_PATHLIKE.search(value) or value.isdigit() or _PLACEHOLDER.search(value))))
        elif t.startswith("-"):
            out.append((t, False))
        elif _ASSIGN.match(t) or _URL.match(t):
            out.append((t, True))
        elif _PLACEHOLDER.search(w) or _PATHLIKE.search(t) or t.replace(".", "").isdigit() or " " in t:
            out.append((t, False))
        else:
            out.append((t, True))
    return out


def distinctive(command: str) -> list[frozenset[str]]:
    """What distinguishes each simple command of ``command`` (cd and pagers left out)."""
    out = []
    for words in _simple(command):
        canon = _canonical(words)
        if not canon or (canon[0][0] in {"cd", "pushd", "tail", "head", "less", "more", "cat"} and len(canon) <= 3):
            continue
        out.append(frozenset(t for t, keep in canon if keep))
    return [d for d in out if d]


def _all_tokens(command: str) -> frozenset[str]:
    return frozenset(t for words in _simple(command) for t, _ in _canonical(words)) | frozenset(
        _norm_token(w) for w in command.split()
    )


def looks_like_command(text: str) -> bool:
    """``text`` is a command line: a lower-case program word followed by arguments, and a known program, a
    path, a flag, an assignment, a pipe or an address."""
    words = text.strip().split()
    lead = 0
    while lead < len(words) and _ASSIGN.match(words[lead]):
        lead += 1
    body = words[lead:]
    if not body or (len(body) < 2 and not lead) or not _PROGRAM.match(body[0]):
        return False
    if (len(body) >= 2 and not re.match(r"^[\w@./:=+~\"'$<\[-]", body[1])) or any(
        re.fullmatch(r"[A-Z]{2,}[!:]?", w) for w in body[1:3]
    ):
        return False  # `npm ERR! code EACCES`: an error line naming a program
    program = _program(body[0])
    rest = " ".join(body[1:])
    return bool(
        lead
        or program in COMMON_CLIS
        or body[0].startswith(("./", "~/", "/"))
        or re.search(r"(?:^|\s)-{1,2}\w|\s[|&;>]|\$\(|://", " " + rest)
        or INSTALL.match(" ".join(body))
    )


@dataclass(frozen=True)
class Advice:
    """What a lesson tells the agent to run or set."""

    commands: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()  # NAME=VALUE, normalised


def advice(text: str) -> Advice:
    """The commands and settings ``text`` tells the agent to run or set (reported and warned-against ones left
    out), quoted or not."""
    commands: list[str] = []
    spans = []
    for q in quotes(text):
        at = text.find(q)
        spans.append((at, at + len(q)))
        before, after = text[max(0, at - 40) : max(0, at - 1)], text[at + len(q) : at + len(q) + 40]
        if _REPORTED_AFTER.match(after) or _WARNED_BEFORE.search(before) or _WARNED_AFTER.match(after):
            continue
        for line in q.splitlines():
            if looks_like_command(line):
                commands.append(line.strip())
    prose = _LINKS.sub(" ", re.sub(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」", " ", text))
    for m in _UNQUOTED.finditer(prose):
        words = m.group(0).split()
        lead = next((i for i, w in enumerate(words) if not _ASSIGN.match(w) and w != "sudo"), len(words))
        if lead >= len(words) or _program(words[lead]) not in COMMON_CLIS:
            continue
        head = " ".join(words[lead : lead + 5])
        if not (lead or re.search(r"\s-{1,2}\w|\s\||://|=", " " + head) or INSTALL.match(head)):
            continue
        before = prose[max(0, m.start() - 40) : m.start()]
        if _WARNED_BEFORE.search(before) or _REPORTED_AFTER.match(prose[m.end() : m.end() + 40]):
            continue
        commands.append(re.split(r"(?<=\S)[.。](?:\s|$)", m.group(0), maxsplit=1)[0])
    settings = [
        f"{k.lower()}={_norm_token(v)}"
        for k, v in _SETTING.findall(_LINKS.sub(" ", text))
        if not _PLACEHOLDER.search(v) and not k.isdigit()
    ]
    return Advice(tuple(dict.fromkeys(commands)), tuple(dict.fromkeys(settings)))


@dataclass(frozen=True)
class Backing:
    """What happened in a session that can back advice: the commands the assistant ran successfully, what the
    user typed, and what the assistant itself wrote (its own tool inputs, content's copies left out)."""

    ran: tuple[frozenset[str], ...] = ()  # the tokens of each successful shell command
    user: str = ""
    written: str = ""

    def backs_command(self, command: str) -> bool:
        return all(
            any(d <= ran for ran in self.ran) or all(_said(t, self.user) for t in d) for d in distinctive(command)
        )

    def backs_setting(self, setting: str) -> bool:
        key, _, value = setting.partition("=")
        texts = (self.user, self.written, *(" ".join(sorted(r)) for r in self.ran))
        return any(re.search(re.escape(key) + r"\s*[=:]\s*[\"']?" + re.escape(value), t) for t in texts)


def _said(token: str, text: str) -> bool:
    return bool(re.search(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", text))


def backing(steps: Iterable[Step], written: str = "") -> Backing:
    """What of ``steps`` backs advice. ``written``: the assistant's own written words (``voices``)."""
    ran: list[frozenset[str]] = []
    user: list[str] = []
    for s in steps:
        if s.role == "user":
            user.append(s.text)
        elif s.role == "tool" and not s.is_error:
            command = s.tool_input.get("command") or s.tool_input.get("cmd")
            if isinstance(command, list):
                command = " ".join(str(c) for c in command)
            if isinstance(command, str) and command.strip():
                ran.append(_all_tokens(command))
    return Backing(tuple(ran), " ".join(" ".join(user).split()).lower(), written)


def unbacked(text: str, backed: Backing) -> list[str]:
    """The commands and settings ``text`` advises that nothing in the session backs."""
    said = advice(text)
    out = [c for c in said.commands if distinctive(c) and not backed.backs_command(c)]
    covered = " ".join(out).lower()
    out += [s for s in said.settings if s not in covered and not backed.backs_setting(s)]
    return out
