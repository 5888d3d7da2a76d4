"""Who said it: which words of a session belong to whom, and where a lesson's words come from.

Decided by memx from the transcript, never taken from a model's answer. A session's words have three voices:

- the **user**'s own messages;
- the **assistant**'s actions (a command it ran, a file it wrote or edited: a tool call's inputs) and its
  own messages; what it observed of an action's result (failed or not) is memx's own flag, not text;
- **content**: what a tool returned (its output, a fetched page, a file read, an issue or PR body, a code
  comment, a commit message). Strangers write it; it may support a fact ("the build fails with X") but a
  lesson must not take its advice from it.

A lesson's words are traced by what it quotes (code spans, quoted strings, the command it says to run) and
by long runs of words it copies verbatim."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from .shell.commands import COMMON_CLIS
from .transcripts.transcript import Step

Voice = Literal["user", "assistant", "content"]
Owner = Literal["user", "action", "prose", "content"]  # where a quote was found: the three voices, the
# assistant's split into what it did (tool inputs) and what it wrote (its messages)

_MASKED = re.compile(r"\[REDACTED:[\w-]+\]")
_GAPS = re.compile(r"\[REDACTED:[\w-]+\]|…|\.\.\.|\[…\]")  # a masked secret, a shortened command
_QUOTED = re.compile(r"`([^`\n]{2,400})`|\"([^\"\n]{4,400})\"|“([^”\n]{4,400})”|「([^」\n]{2,400})」")
# A command a lesson tells the agent to run, unquoted: "run make setup before the tests"
_RUN = re.compile(
    r"(?:\b(?:run|execute|invoke|source|type)\b|运行|执行|実行(?:して|する)?)\s*(?:the\s+command\s+)?[:：]?\s*"
    r"(?P<cmd>[^\s,;.。，；`\"“「][^,;。，；`\"“「\n]*?)"
    r"(?=\s+(?:before|after|when|whenever|because|first|every|each|to|so|then|and|or|if|in)\b|[,;。，；\n]|\.(?:\s|$)|$)",
    re.I,
)
_INJECTED = re.compile(
    r"<(system-reminder|local-command-stdout|command-stdout|user-prompt-submit-hook|hook-output)>.*?</\1>", re.S
)
_WORD = re.compile(r"[A-Za-z0-9_][\w'.-]*|[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_CJK_GAP = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]) (?=[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
RUN_WORDS = 7  # a run of this many words copied verbatim from content, and from nowhere else, is content's
RUN_CJK = 12  # the same, counted in characters, for Chinese and Japanese
_PROGRAM = re.compile(r"^(?:sudo\s+)?(?:\./|~/|/)?[\w.+-]+(?:/[\w.+-]+)*$")
_URL = re.compile(r"https?://|\bwww\.", re.I)
_SHELL = re.compile(r"\s[|&;>]|\$\(|`")
# What a lesson points the agent at to run: a script or a program, by its path or by a URL. One that only
# content names (a page, an output) is content's pointer, whatever the lesson's words around it. A URL that is
# not a script (a default base URL, a dev server's address, the download an error names) is a fact it may
# report: holding those held 12 judged-keep bullets of the tuning sets' recorded answers.
_EXECUTABLE = r"\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|command|exe|msi|pkg|dmg|run|bin|appimage)"
_LINK = re.compile(r"https?://[^\s`\"'<>)\]}，。、）」]+", re.I)
_RUNNABLE_LINK = re.compile(
    r"https?://[^\s`\"'<>)\]}，。、）」?#]+" + _EXECUTABLE + r"(?=$|[?#\s`\"'<>)\]}，。、）」.,;:!])", re.I
)
_SCRIPT = re.compile(r"(?<![\w/.-])(?:\.{1,2}/|~/|/)?[\w.-]+(?:/[\w.-]+)*" + _EXECUTABLE + r"\b", re.I)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _unescape(text: str) -> str:
    """Code inside a JSON string (a patch in a script): its escapes undone, so a quote of it is found."""
    return text.replace("\\n", "\n").replace('\\"', '"').replace("\\t", "\t")


def _tokens(text: str) -> list[str]:
    return [w.lower().strip("'.-") or w for w in _WORD.findall(text)]


@dataclass(frozen=True)
class SessionWords:
    """The words of a session by owner, normalised (lower case, one space) for finding quotes, and as
    word sequences for finding copied runs."""

    user: str
    action: str
    prose: str
    content: str
    runs: tuple[str, str, str, str] = ("", "", "", "")  # the same, as " word word … " (user, action, prose, content)

    def owners(self, quote: str) -> frozenset[Owner]:
        """Who wrote ``quote`` (a masked secret or an elision inside it splits it: each piece must be found)."""
        pieces = [p for p in (_norm(x) for x in _GAPS.split(quote)) if len(p) >= 3]
        if not pieces:
            return frozenset()
        found: set[Owner] = set()
        for owner, text in (("user", self.user), ("action", self.action), ("prose", self.prose)):
            if all(p in text for p in pieces):
                found.add(owner)  # type: ignore[arg-type]
        if all(p in self.content for p in pieces):
            found.add("content")
        return frozenset(found)


# Tool inputs that hold text written into a file (Write, Edit, MultiEdit, apply_patch, create_file …)
_WRITTEN_KEYS = frozenset({"content", "contents", "new_string", "new_str", "file_text", "patch", "input", "text",
                           "code", "body", "diff"})  # fmt: skip
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)(?:^\s*\1\s*$|\Z)", re.S | re.M)


class _Seen:
    """Runs of words (a run of ``RUN_WORDS`` words, or of ``RUN_CJK`` characters of Chinese or Japanese) seen in
    content so far, to trace text the assistant writes back to content it copied it from."""

    def __init__(self) -> None:
        self.runs: set[int] = set()

    @staticmethod
    def _windows(tokens: list[str]) -> Iterable[int]:
        for at, token in enumerate(tokens):
            size = RUN_CJK if _CJK.match(token) else RUN_WORDS
            if at + size <= len(tokens):
                yield hash(tuple(tokens[at : at + size]))

    def add(self, text: str) -> None:
        self.runs.update(self._windows(_tokens(text)))

    def holds(self, line: str) -> bool:
        return any(w in self.runs for w in self._windows(_tokens(line)))


_DIFF_BLOCK = re.compile(r"^```diff\n(.*?)^```", re.S | re.M)


def _diff_added(text: str) -> list[str]:
    """The added lines (``+ …``) of the fenced diff blocks of a message."""
    return [
        ln[1:].strip()
        for block in _DIFF_BLOCK.findall(text)
        for ln in block.splitlines()
        if ln.startswith("+") and not ln.startswith("+++") and ln[1:].strip()
    ]


def _written(step: Step) -> list[str]:
    """The text a tool call writes into a file: its written inputs and the bodies of its shell here-docs."""
    out = [v for k, v in step.tool_input.items() if k in _WRITTEN_KEYS and isinstance(v, str)]
    command = step.tool_input.get("command") or step.tool_input.get("cmd")
    if isinstance(command, str) and "<<" in command:
        out += [m.group(2) for m in _HEREDOC.finditer(command)]
    return out


def session_words(steps: Iterable[Step]) -> SessionWords:
    """Every step's words, by owner: a user message is the user's; an assistant message and a tool call's
    inputs are the assistant's; a tool call's result is content. A line the assistant writes into a file
    that copies a run of words from content seen earlier (a page's text pasted into a script or a Makefile)
    stays content's: writing it does not make it the assistant's own."""
    user: list[str] = []
    action: list[str] = []
    prose: list[str] = []
    content: list[str] = []
    seen = _Seen()
    for s in steps:
        if s.role == "user":
            # what the client put inside the user's message (a reminder holding a file, a hook's output) is
            # not the user's words
            injected = [m.group(0) for m in _INJECTED.finditer(s.text)]
            user.append(_INJECTED.sub(" ", s.text) if injected else s.text)
            content.extend(injected)
            seen.add(" ".join(injected))
        elif s.role == "assistant":
            prose.append(s.text)
            # a chat export's edit (SpecStory / Cursor: a bare ```diff block between the messages): its added
            # lines are what the assistant wrote into the file, unless copied from content
            added = [ln for ln in _diff_added(s.text) if not seen.holds(ln)]
            action.extend(added)
        else:
            written = _written(s)
            copied = [line for text in written for line in text.splitlines() if seen.holds(line)]
            inputs = [v for v in s.tool_input.values() if isinstance(v, str)]
            if copied:
                inputs = ["\n".join(ln for ln in v.splitlines() if ln not in copied) for v in inputs]
                content.extend(copied)
            action.extend(inputs)
            content.append(s.result)
            seen.add(s.result)

    def joined(texts: list[str]) -> str:
        whole = "\n".join(texts)
        return _norm(whole + "\n" + _unescape(whole)) if "\\" in whole else _norm(whole)

    texts = (joined(user), joined(action), joined(prose), joined(content))
    runs = tuple(" " + " ".join(_tokens(t)) + " " for t in texts)
    return SessionWords(*texts, runs=(runs[0], runs[1], runs[2], runs[3]))


def quotes(text: str) -> list[str]:
    """What a lesson quotes: its code spans and quoted strings."""
    return [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]


def _is_action(quote: str, before: str) -> bool:
    """A quote that is something to run: a command line, or whatever follows "run".
    An error message that holds a URL or a program's name (``fatal: could not read … 'https://…'``,
    ``File has not been read yet``) is not one."""
    q = quote.strip()
    if re.search(r"(?:\b(?:run|execute|invoke|source)\b|运行|执行|実行)\W{0,3}$", before, re.I):
        return True
    words = q.split()
    if len(words) < 2 or not _PROGRAM.match(words[0]) or words[0] != words[0].lower():
        return False
    program = words[0].rsplit("/", 1)[-1]
    first = words[1] if program == "sudo" else words[0]
    return (
        program in COMMON_CLIS
        or first.startswith(("./", "~/", "/"))
        or bool(_SHELL.search(q))
        or bool(_URL.search(q))
        or any(w.startswith("-") for w in words[1:])
    )


# What comes just before a command the lesson tells the agent to run ("run `x`", "use `x`", "always `x`"), as
# against one it reports ("fails with `x`", "prints `x`", "(e.g. `x`)")
_ADVISED = re.compile(
    r"(?:\b(?:run|running|rerun|use|using|execute|invoke|call|try|type|install|prefer|always|first|must|should|"
    r"need\s+to|have\s+to|do|then|via|source|instead)\b|运行|执行|使用|実行|使う)\s*"
    r"(?:it\s+|the\s+command\s+|again\s+|this\s+)?(?:with\s+|as\s+)?[:：]?\s*$|"
    r"(?<!fails )(?<!failed )(?<!failing )(?<!errors )(?<!exits )(?<!configured )(?<!configures )\bwith\s*$",
    re.I,
)


# What comes just after it in Japanese, whose verb follows ("`x` で行う", "`x` を実行する")
_ADVISED_AFTER = re.compile(r"^\s*(?:で(?:行|実行|実施|走らせ|やる|やって|する)|を(?:実行|使|走らせ|使用|叩|打))")


# What comes just before a value a lesson tells the agent to put somewhere (a flag, a setting, a line of code):
# an imperative verb, at the start of its clause or after "to", "then", "should" …, within the clause and with
# no other quote between ("Known flaky: add `--deselect x` to addopts", "then set the CSP to `…`"); in Chinese
# a verb of changing or adding ("把 CSP 改成 `…`", "在 sshd_config 里设 `…`"). Not a description ("is set in
# `pyproject.toml`", "fails with `…`").
_SETS_BEFORE = re.compile(
    r"(?:(?:^|[.;:!?,(—–]\s*|\s-\s|\b(?:and|then|to|please|should|must|always|just|first|instead|or|so)\s+)"
    r"(?:add|set|put|switch|change|replace|enable|disable|turn|append|insert|pass|configure|pin|mark|allow|use)\b"
    r"[^.;:。；：\n`\"“「]{0,30}|"
    r"(?:改成|改为|改用|设为|设置为|设成|加上|添加|加入|换成|写入|填入|开启|打开|关闭)[^.;:。；：\n`\"“「]{0,10}|设\s?)$",
    re.I,
)
# and just after it in Japanese ("`…` に切り替えてください", "`…` を追加する")
_SETS_AFTER = re.compile(r"^\s*(?:に(?:切り替え|切替|変更|設定|書き換え)|を(?:追加|入れ|設定|指定|有効|無効|外))")


_WHERE = re.compile(r"\b(?:via|by|from|in|inside|within|at|on|through)\s*$", re.I)  # "set via `f()`": where, not what
_PLAIN_WORD = re.compile(r"^[A-Za-z]+$")  # `prompt`: a name alone tells nobody to do anything


def advised(text: str) -> list[str]:
    """What a lesson tells the agent to run, or to put in a command, a file or a setting: its commands
    (``actions``) and every quote it advises (a flag, a setting, a line of code; not a plain word, nor the
    place or means named after the verb: "set in `pyproject.toml`", "set via `setURL()`")."""
    found = actions(text)
    for m in _QUOTED.finditer(text):
        quote = next(g for g in m.groups() if g)
        before = text[max(0, m.start() - 40) : m.start()]
        if _PLAIN_WORD.match(quote) or _WHERE.search(before):
            continue
        if _SETS_BEFORE.search(before) or _SETS_AFTER.match(text[m.end() :]):
            found.append(quote)
    return list(dict.fromkeys(found))


def actions(text: str) -> list[str]:
    """The commands and scripts a lesson tells the agent to run, quoted or not."""
    found = [
        m.group(0)[1:-1]
        for m in _QUOTED.finditer(text)
        if (_ADVISED.search(text[max(0, m.start() - 40) : m.start()]) or _ADVISED_AFTER.match(text[m.end() :]))
        and _is_action(m.group(0)[1:-1], text[: m.start()])
    ]
    for m in _RUN.finditer(_QUOTED.sub(" ", text)):
        cmd = m.group("cmd").strip()
        if len(cmd.split()) >= 2 and _is_action(cmd, ""):
            found.append(cmd)
    return list(dict.fromkeys(found))


def copied_runs(text: str, words: SessionWords) -> list[str]:
    """Runs of words outside the lesson's quotes copied verbatim from content, found in nobody else's words
    (an instruction lifted from a page or an output)."""
    tokens = _tokens(_MASKED.sub(" ", _QUOTED.sub(" | ", text)))
    if not tokens:
        return []
    *others, content = words.runs

    def lifted(start: int, end: int) -> bool:
        run = " " + " ".join(tokens[start:end]) + " "
        return "|" not in tokens[start:end] and run in content and not any(run in o for o in others)

    found: list[str] = []
    at = 0
    while at < len(tokens):
        size = RUN_CJK if _CJK.match(tokens[at]) else RUN_WORDS
        if at + size <= len(tokens) and lifted(at, at + size):
            end = at + size
            while end < len(tokens) and lifted(end + 1 - size, end + 1):
                end += 1
            found.append(_CJK_GAP.sub("", " ".join(tokens[at:end])))
            at = end
            continue
        at += 1
    return found


def pointers(text: str) -> list[str]:
    """The scripts and programs a lesson names, by URL or by path."""
    links = [m.group(0) for m in _RUNNABLE_LINK.finditer(_MASKED.sub(" ", text))]
    scripts = [m.group(0) for m in _SCRIPT.finditer(_LINK.sub(" ", text))]
    return list(dict.fromkeys(links + scripts))


@dataclass(frozen=True)
class Provenance:
    """Where a lesson's words come from."""

    voice: Voice
    content_actions: tuple[str, ...] = ()  # what it says to run, fetch or put in place that only content says
    copied: tuple[str, ...] = ()  # runs of words it copies from content alone
    content_quotes: tuple[str, ...] = ()  # what it quotes from content alone (an error line, a page's words)
    content_refs: tuple[str, ...] = ()  # the scripts (by URL or path) it names that only content names
    copied_share: float = 0.0  # of its words outside quotes, the share in runs copied from content alone


def provenance(text: str, words: SessionWords, said_by_user: bool = False) -> Provenance:
    """The voice of a lesson, from what it quotes and copies. ``said_by_user``: the step it rests on is the
    user's message (a rule that reads the user's words), the voice when nothing it quotes is found."""
    from_content = tuple(a for a in advised(text) if _only_content(words.owners(a)))
    copied = tuple(copied_runs(text, words))
    share = _share(text, copied)
    quoted = [(q, words.owners(q)) for q in quotes(text)]
    lifted = tuple(q for q, o in quoted if _only_content(o))
    refs = tuple(p for p in pointers(text) if _only_content(words.owners(p)))
    if from_content or copied or refs:
        return Provenance("content", from_content, copied, lifted, refs, share)
    owners = [o for _, o in quoted if o]
    if any("user" in o for o in owners) or (said_by_user and not owners):
        return Provenance("user", content_quotes=lifted)
    if owners and all(o == {"content"} for o in owners):
        return Provenance("content", content_quotes=lifted)
    return Provenance("assistant", content_quotes=lifted)


def _share(text: str, copied: Sequence[str]) -> float:
    """How much of ``text`` (its words outside quotes) the ``copied`` runs cover."""
    words = [t for t in _tokens(_MASKED.sub(" ", _QUOTED.sub(" | ", text))) if t != "|"]
    return min(1.0, sum(len(_tokens(run)) for run in copied) / len(words)) if words else 0.0


def _only_content(owners: frozenset[Owner]) -> bool:
    """Found in what tools returned and neither in the user's words nor in anything the assistant did."""
    return "content" in owners and not owners & {"user", "action"}


def said_by_user(steps: Sequence[Step], indices: Iterable[int]) -> bool:
    return any(0 <= i < len(steps) and steps[i].role == "user" for i in indices)
