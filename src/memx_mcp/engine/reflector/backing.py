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

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .shell.commands import COMMON_CLIS, INSTALL, words_of
from .transcripts.transcript import Step

_ASSIGN = re.compile(r"^[A-Za-z_][\w.]*=[^=]")
_URL = re.compile(r"^(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]+:)", re.I)
_PLACEHOLDER = re.compile(r"^<.*>$|^\[.*\]$|^\{.*\}$|…|\.\.\.|REDACTED|^\$")
_PATHLIKE = re.compile(r"[/\\~]|^\.|\.[A-Za-z0-9]{1,6}$")
_PROGRAM = re.compile(r"^(?:(?:\./|~/|/)[\w.+-]+(?:/[\w.+-]+)*|[a-z0-9_][\w.+-]*)$")  # not `golang.org/x/net`
_SLASH_COMMAND = re.compile(r"^/[\w-]+$")  # `/run`, `/grep`: a chat client's command, not a program
_WRAPPERS = {"npx", "pnpx", "bunx", "uvx", "time", "nohup", "env", "exec", "command", "builtin"}
_RUNNERS = {
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("npm", "exec"),
    ("yarn", "dlx"), ("pnpm", "dlx"), ("hatch", "run"), ("pdm", "run"), ("rye", "run"),
}  # fmt: skip
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_REDIRECT = re.compile(r"^\d?>>?&?\d?$|^<$|^\d?>>?\S+$|^2>&1$")
# What is said about a command that shows it is reported, not advised ("fails with", "失败", "で失敗")
_REPORTED_AFTER = re.compile(
    r"^[\s`'\")\]]*(?:[\w,]+\s+){0,3}?(?:expect(?:s|ed)?\s+(?:it|them|this|that)\s+to\s+)?(?:fails?|failed|failing|errors?|errored|crash(?:es|ed)?|hangs?|hung|exits?|exited|"
    r"was\s+(?:refused|rejected|denied)|"
    r"returns?\s+(?:an?\s+)?(?:error|non-?zero)|is\s+(?:refused|denied|rejected)|times?\s+out|timed\s+out|"
    r"报错|失败|出错|失敗|エラー|が失敗|で失敗|が落ち)",
    re.I,
)
_WARNED_BEFORE = re.compile(
    r"(?:\b(?:never|not|don'?t|do\s+not|avoid|instead\s+of|rather\s+than|without|no\s+longer|stop)\b|不要|别|勿|"
    r"而不是|代替|ではなく|の代わりに)[^.;:。；：`]{0,15}$",
    re.I,
)
# What a command does or did, said of it as the subject of a fact ("`npm run build` runs `tsc`", "`x` prints …",
# "Running `x` twice gives …"), and a command quoted as a configuration value (`"test": "yarn run mocha"`)
_FACT_AFTER = re.compile(
    r"^[`'\"]?\s*(?:\([^)]{0,80}\)\s*)?(?:(?:script|command|cli|call|step|run)\s+)?(?:runs|ran|prints|printed|reports|reported|gives|gave|shows|showed|returns|"
    r"returned|finds|found|exposes|creates|created|produces|produced|outputs|did\s+not|does\s+not|doesn'?t|didn'?t|"
    r"is|was|were|has|had|only|already|twice|again|on\s+a)\b",
    re.I,
)
_FACT_BEFORE = re.compile(
    r"(?:\b(?:running|after|started\s+with|ran|runs|(?:that|which|scripts?)\s+runs?|rejected|refused|denied|"
    r"(?:the\s+)?user\s+(?:to\s+|will\s+|must\s+|should\s+)?runs?)\s*\(?$)|"
    r"[\"'`][\w.:-]+[\"'`]\s*[:=]\s*$|\b[\w.-]+\s*=\s*$",
    re.I,
)
# Between two quotes of one list ("the user runs `a` and `b` themselves", "never `a` or `b`"): the second is
# said what the first is
_LISTED = re.compile(r"^\s*(?:,|/|,?\s*(?:and|or|nor|und|et)|、|和|或|と|や)\s*$", re.I)
_LOG_LEVEL = re.compile(r"^(?:warn|warning|error|err!?|notice|info|debug|fatal|verbose|:)$", re.I)
_WARNED_AFTER = re.compile(r"^[\s`'\"]*(?:は使わない|を使わない|しない|は不要|不要|是不行的)")
# A command in the lesson's prose, unquoted: a known program followed by a flag, an address, an assignment or
# a pipe within a few words ("git config --global core.hooksPath …", "echo … | base64 -d | bash")
_UNQUOTED = re.compile(
    r"(?:[:：]|\b(?:run|execute|type|use)\b|运行|执行|実行|(?<![\w./$-])(?=(?:sudo\s+)?(?:pip3?|npm|pnpm|yarn|bun|"
    r"cargo|gem|brew|apt(?:-get)?|uv|poetry|pipx|composer|go)\s+(?:install|add|i|get)\s+[\w@.-]))\s*"  # or an install
    r"(?P<cmd>(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S+\s+)*[a-z][\w.+-]*(?:\s+(?!and\b|then\b|to\b|so\b)[^\s,;。，；：:、）)]+){1,40})",
)
# A setting the lesson tells the agent to make: a verb of setting, then `NAME=value` ("set `FOO=1`", "pass
# verify=False", "export …", 设置 …, … を設定); a `NAME=value` it only reports is a fact
_SETTING = re.compile(
    r"(?:\b(?:set|setting|export|exporting|add|adding|put|pass|passing|use|using|define|configure|enable|change)\b|"
    r"设置|设定|設定|配置|添加|加上|追加|指定)[^.;。；\n]{0,20}?"
    r"(?<![\w.$/-])([A-Za-z_][\w.-]*)\s?=\s?(?!=)([\"']?[^\s,;`'\"()<>\]]+[\"']?)|"
    r"(?<![\w.$/-])([A-Za-z_][\w.-]*)\s?=\s?(?!=)([\"']?[^\s,;`'\"()<>\]]+[\"']?)`?\s*(?:を設定|に設定|を追加)",
    re.I,
)
_QUOTE = re.compile(r"`[^`\n]{2,400}`|\"[^\"\n]{4,400}\"|“[^”\n]{4,400}”|「[^」\n]{2,400}」")
_SPAN = re.compile(r"`([^`\n]{2,400})`")
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
    if not rest or _PLACEHOLDER.search(rest[0]):
        return []  # a template (`cd <dir> && <command>`), not a command
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
            out.append((t, not re.search(r"<[^>]*>|…|\.\.\.", t)))
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
    if not body or (len(body) < 2 and not lead) or not _PROGRAM.match(body[0]) or _SLASH_COMMAND.match(body[0]):
        return False
    if (len(body) >= 2 and (not re.match(r"^[\w@./:=+~\"'$<\[-]", body[1]) or _LOG_LEVEL.match(body[1]))) or any(
        re.fullmatch(r"[A-Z]{2,}[!:]?", w) for w in body[1:3]
    ):
        return False  # `npm ERR! code EACCES`, `npm warn …`: a line of output naming a program
    if len(body) >= 2 and body[1] in {"=", ":"}:
        return False  # `addopts = "…"`: a line of configuration
    if body[0] == "export" and not (len(body) > 1 and _ASSIGN.match(body[1])):
        return False  # `export const x = …`: code
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


def _command_words(words: list[str]) -> list[str]:
    """The words of an unquoted command, up to the prose that follows it: after a program and its
    sub-command, a plain word (letters only) ends it, unless a pipe or a chain starts the next command."""
    out: list[str] = []
    since = 0  # words since the last program
    for w in words:
        if re.search(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]", w):
            break  # Chinese or Japanese prose resumes
        if since >= 2 and re.fullmatch(r"[A-Za-z]+[.,]?", w) and w.lower() not in {"sh", "bash", "zsh"}:
            break
        out.append(w)
        since = 0 if w in {"|", "&&", "||", ";"} else since + 1
    return out


def advice(text: str) -> Advice:
    """The commands and settings ``text`` tells the agent to run or set (reported and warned-against ones left
    out), quoted or not."""
    commands: list[str] = []
    # every quoted string and every code span, those inside a quoted string too ("… resolved by `x` …")
    found = [(m.start(), m.group(0)[1:-1]) for m in _QUOTE.finditer(text)]
    found += [(m.start(), m.group(1)) for m in _SPAN.finditer(text) if (m.start(), m.group(1)) not in found]
    skipped_to = -1  # where the last quote said not to be advice ends: the next one of its list shares that
    for at, q in sorted(found):
        before, after = text[max(0, at - 40) : at], text[at + len(q) + 2 : at + len(q) + 42]
        listed = skipped_to >= 0 and _LISTED.match(text[skipped_to:at])
        if (
            listed
            or _REPORTED_AFTER.match(after)
            or _WARNED_BEFORE.search(before)
            or _WARNED_AFTER.match(after)
            or _FACT_AFTER.match(after)
            or _FACT_BEFORE.search(before)
        ):
            skipped_to = at + len(q) + 2
            continue
        skipped_to = -1
        for line in q.splitlines():
            if looks_like_command(line):
                commands.append(line.strip())
    prose = _LINKS.sub(" ", re.sub(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」", " ", text))
    for m in _UNQUOTED.finditer(prose):
        words = _command_words(m.group("cmd").split())
        lead = next((i for i, w in enumerate(words) if not _ASSIGN.match(w) and w != "sudo"), len(words))
        if lead >= len(words) or _program(words[lead]) not in COMMON_CLIS:
            continue
        head = " ".join(words[lead : lead + 5])
        if not (lead or re.search(r"\s-{1,2}\w|\s\||://|=", " " + head) or INSTALL.match(head)):
            continue
        before = prose[max(0, m.start("cmd") - 40) : m.start("cmd")]
        rest = prose[m.start("cmd") :].split(" ".join(words), 1)[-1][:40]
        if _WARNED_BEFORE.search(before) or _FACT_BEFORE.search(before) or _REPORTED_AFTER.match(rest):
            continue
        if _FACT_AFTER.match(rest.strip()):
            continue
        commands.append(re.split(r"(?<=\S)[.。](?:\s|$)", " ".join(words), maxsplit=1)[0])
    settings = []
    unlinked = _LINKS.sub(" ", text)
    for m in _SETTING.finditer(unlinked):
        k, v = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        after = unlinked[m.end() : m.end() + 40].lstrip("`'\" ")
        if _REPORTED_AFTER.match(after) or _FACT_AFTER.match(after):
            continue  # reported, as a command is ("setting `X=1` did not make …", "… `X=1` failed")
        if not _PLACEHOLDER.search(v) and not k.isdigit():
            settings.append(f"{k.lower()}={_norm_token(v)}")
    return Advice(tuple(dict.fromkeys(commands)), tuple(dict.fromkeys(settings)))


@dataclass(frozen=True)
class Backing:
    """What happened in a session that can back advice: the commands the assistant ran successfully, what the
    user typed, and what the assistant itself wrote (its own tool inputs, content's copies left out)."""

    ran: tuple[frozenset[str], ...] = ()  # the tokens of each successful shell command
    user: str = ""
    written: str = ""
    narrated: str = ""  # the assistant's own messages, when the transcript records no tool call at all

    def backs_command(self, command: str) -> bool:
        return all(
            any(d <= ran for ran in self.ran) or all(_said(t, self.user) or _said(t, self.narrated) for t in d)
            for d in distinctive(command)
        )

    def backs_setting(self, setting: str) -> bool:
        key, _, value = setting.partition("=")
        texts = (self.user, self.written, *(" ".join(sorted(r)) for r in self.ran))
        return any(re.search(re.escape(key) + r"\s*[=:]\s*[\"']?" + re.escape(value), t) for t in texts)


def _said(token: str, text: str) -> bool:
    return bool(re.search(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", text))


# A shell command inside a tool's script input (Codex's `exec`: `tools.exec_command({"cmd": "cargo test"})`)
_EMBEDDED = re.compile(r'"(?:cmd|command)"\s*:\s*("(?:[^"\\]|\\.)*")')


_SHELL_TOOL = re.compile(r"bash|shell|terminal|exec|command|powershell", re.I)
_SHOWN_CALL = re.compile(r"\A(?:[^\n`]*\n){0,3}\s*`([^`\n]+)`\s*\n```")


def _shell_commands(step: Step) -> list[str]:
    """The shell commands a tool call ran. A SpecStory export shows a shell call's command at the head of its
    result ("Check the build\n\n`npm run build`\n```\n…output"), its input only a summary."""
    command = step.tool_input.get("command") or step.tool_input.get("cmd")
    if command is None and _SHELL_TOOL.search(step.tool) and set(step.tool_input) <= {"summary"}:
        shown = _SHOWN_CALL.match(step.result)
        return [shown.group(1)] if shown else []
    if isinstance(command, list):
        return [" ".join(str(c) for c in command)]
    if isinstance(command, str):
        return [command]
    out = []
    for value in step.tool_input.values():
        if (isinstance(value, str) and '"cmd"' in value) or (isinstance(value, str) and '"command"' in value):
            for m in _EMBEDDED.finditer(value):
                try:
                    out.append(str(json.loads(m.group(1))))
                except ValueError:
                    continue
    return out


_EDGE = "\"'`()[]{}<>,;:!?"


def _bare(word: str) -> str:
    return word.strip(_EDGE).rstrip(".").strip(_EDGE).lower()


def _line_tokens(line: str) -> frozenset[str]:
    """The words of a line of content, as ``_canonical`` normalises a command's (``python3`` is ``python``)."""
    out: set[str] = set()
    for w in line.split():
        t = _bare(w)
        if t:
            out |= {t, _program(t), *(t.split("=", 1) if t.startswith("--") else ())}
    return frozenset(out)


class _Content:
    """The lines of content seen so far, each as its set of words, indexed by word."""

    def __init__(self) -> None:
        self._by_word: dict[str, list[frozenset[str]]] = {}

    def add(self, text: str) -> None:
        for line in text.splitlines():
            words = _line_tokens(line)
            for w in words:
                self._by_word.setdefault(w, []).append(words)

    def has_line_with(self, words: frozenset[str]) -> bool:
        lines = min((self._by_word.get(w, []) for w in words), key=len)
        return any(words <= line for line in lines)


def _told_by_content(part: frozenset[str], content: _Content, own: list[frozenset[str]]) -> bool:
    """A simple command's distinctive parts, more than a program and its sub-command (which tools name in
    their hints: `use "git add <file>"`), all stand in one line of content seen before it ran, and in none
    of the assistant's own earlier runs: content wrote that command."""
    bare = frozenset(_bare(t) for t in part) - {""}
    return len(bare) >= 3 and content.has_line_with(bare) and not any(part <= r for r in own)


def _own_run(command: str, content: _Content, own: list[frozenset[str]], user: str) -> frozenset[str]:
    """The tokens of ``command`` that back advice: those of its simple commands content did not write first
    (unless the user typed them too)."""
    canons = [_canonical(words) for words in _simple(command)]
    parts = [frozenset(t for t, keep in canon if keep) for canon in canons]
    whole = frozenset().union(*parts)
    if _told_by_content(whole, content, own) and not all(_said(t, user) for t in whole):
        return frozenset()  # the whole line, as a page wrote it
    kept: set[str] = set()
    told = False
    for words, canon, part in zip(_simple(command), canons, parts, strict=True):
        if _told_by_content(part, content, own) and not all(_said(t, user) for t in part):
            told = True
            continue
        kept |= {t for t, _ in canon} | {_norm_token(w) for w in words}
    return frozenset(kept) if told else _all_tokens(command)


def backing(steps: Iterable[Step], written: str = "") -> Backing:
    """What of ``steps`` backs advice. ``written``: the assistant's own written words (``voices``).

    A run backs advice only if the assistant chose it: a command whose distinctive parts a tool's result
    (a page, a file read, an output) laid out before the assistant ran it is content's advice, however well it
    went, unless the user typed those parts too."""
    ran: list[frozenset[str]] = []
    user: list[str] = []
    prose: list[str] = []
    content = _Content()
    tools = False
    for s in steps:
        tools = tools or s.role == "tool"
        if s.role == "user":
            user.append(s.text)
        elif s.role == "assistant":
            prose.append(s.text)
        elif s.role == "tool":
            if not s.is_error:
                typed = " ".join(" ".join(user).split()).lower()
                runs = [_own_run(c, content, ran, typed) for c in _shell_commands(s) if c.strip()]
                ran += [r for r in runs if r]
            content.add(s.result)
    # a transcript without tool calls (a chat export) shows neither what ran nor any content: what the
    # assistant says it ran is the only record of its actions
    narrated = "" if tools else " ".join(" ".join(prose).split()).lower()
    return Backing(tuple(ran), " ".join(" ".join(user).split()).lower(), written, narrated)


def unbacked(text: str, backed: Backing) -> list[str]:
    """The commands and settings ``text`` advises that nothing in the session backs."""
    said = advice(text)
    out = [c for c in said.commands if distinctive(c) and not backed.backs_command(c)]
    covered = " ".join(out).lower()
    out += [s for s in said.settings if s not in covered and not backed.backs_setting(s)]
    return out
