"""Aider's chat history (``.aider.chat.history.md``).

``# aider chat started at …`` opens a session; ``#### `` lines are what the person typed; ``> `` lines are
aider's own output (tool output, lint and test runs, "Applied edit to …"); everything else is the model's
answer, whose SEARCH/REPLACE blocks are the edits it made. ``/run CMD`` (or ``!CMD``) and ``/test CMD``
are shell commands whose output follows as ``> `` lines; a lint or test run that aider starts itself
appears as ``> Running CMD`` / ``> ## Running: CMD``."""

from __future__ import annotations

import re

from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText

_START = re.compile(r"^# aider chat started at (.+?)\s*$", re.MULTILINE)
_RUN_INPUT = re.compile(r"^(?:/run|/test|/lint|!)\s*(.+)$", re.DOTALL)
_ASK_INPUT = re.compile(r"^/(?:ask|code|architect|chat)\s+(.+)$", re.DOTALL)
_RUNNING = re.compile(r"^(?:## )?Running:?\s+(.+)$")
# aider's own questions and notes around a run; the command's output itself is not kept in the history
_PROMPTS = re.compile(
    r"^(?:Add .* to the chat\?|Added \d+ lines? of output|You can use /undo|Run shell commands?\?|Tokens: |"
    r"Commit [0-9a-f]{7}|Create new file\?|Please answer with)"
)
_APPLIED = re.compile(r"^Applied edit to (.+)$")
# aider's own yes/no questions, which 0.86 also writes as a "####" line with the answer given: aider's words
# (and a one-word answer), not the person's
_ASKED = re.compile(r"\(Y\)es/\(N\)o")
# aider ends each line it writes itself (what the person typed, its own output) with two spaces; a model's
# code does not, so such a line inside an open code fence means the answer stopped before closing it
_CUT_ANSWER = re.compile(r"^(?:# aider chat started at |(?:####|>) .*\S  $)")
# slash commands that change what aider holds or did (the chat's files, its last commit, its model): steps of
# their own, with what aider answered; /add and the look-around commands say nothing worth a step
_SLASH_ACTION = re.compile(r"^/(?:undo|drop|clear|reset|model|commit|chat-mode|editor-model|weak-model)\b")
# every run of aider names its model; the first model error or the first answer tells whether that model
# worked, so a run with another model name after a failed one is a different command that fixed it
_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+) with ")
# aider could not write an edit (the file belongs to another user): the edit failed, whatever it said
_WRITE_FAILED = re.compile(r"^Unable to write file (\S+?) after \d+ attempts: (.+)$")
_MODEL_ERROR = re.compile(r"^litellm\.\w+: |^\w+(?:Error|Exception): ")
# the command line a run was started with, when aider printed it (before its version banner): the program
# (any path to aider itself, or a launcher script) and its options
_LAUNCH = re.compile(
    r"^(?P<program>(?:[A-Za-z]:)?\S*?(?P<name>aider(?:\.exe)?|__main__\.py|[\w.-]+\.py))(?=\s|$)(?P<args>.*)$"
)
# the request given on the command line is the run's user message, not part of how aider was started
_MESSAGE_ARG = re.compile(r"\s(?:--message|--msg|-m)(?:=|\s+)(?:(?!\s-{1,2}[A-Za-z]).)*")
# a model's reasoning, not its answer
_THINKING = re.compile(r"<(thinking-content-\w+|think|thinking)>(?:(?!<\1>).)*?</\1>", re.S)
_FAILED_BLOCKS = re.compile(r"SEARCH/REPLACE blocks? failed to match")
_EDIT_FAILED = re.compile(r"SearchReplaceNoExactMatch|did not conform to the edit format|failed to match", re.I)


def _edit_blocks(text: str) -> tuple[list[tuple[str, str, str]], str]:
    """The SEARCH/REPLACE blocks of an answer as (path, old, new), and the answer without them. One pass
    over the lines: a block is the file name (above the fence, or just inside it), ``<<<<<<< SEARCH``, the
    old lines, ``=======``, the new lines, ``>>>>>>> REPLACE`` and the closing fence."""
    lines = text.split("\n")
    keep = [True] * len(lines)
    edits: list[tuple[str, str, str]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "<<<<<<< SEARCH":
            i += 1
            continue
        try:
            middle = lines.index("=======", i + 1)
            end = lines.index(">>>>>>> REPLACE", middle + 1)
        except ValueError:
            break  # an unfinished block is left as text
        head = [j for j in (i - 1, i - 2) if j >= 0 and lines[j].strip()][:2]
        path = next((lines[j].strip() for j in head if not lines[j].startswith("```")), "")
        for j in head:
            keep[j] = keep[j] and not (lines[j].startswith("```") or lines[j].strip() == path)
        closing = end + 1 if end + 1 < len(lines) and lines[end + 1].startswith("```") else end
        for j in range(i, closing + 1):
            keep[j] = False
        edits.append((path, "\n".join(lines[i + 1 : middle]) + "\n", "\n".join(lines[middle + 1 : end]) + "\n"))
        i = closing + 1
    return edits, "\n".join(ln for ln, k in zip(lines, keep, strict=True) if k)


def _short(program: str) -> str:
    """A launcher script by its folder and name (``scripts/aider_with_patch.py``), not by the machine's path."""
    parts = [p for p in re.split(r"[\\/]", program) if p]
    return "/".join(parts[-2:])


def is_aider(text: str) -> bool:
    return bool(_START.search(text[:20000]))


class _Reader:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.calls = 0
        self.pending_edits: dict[str, str] = {}  # file name -> call id, until aider says it applied it
        self.open_run: str | None = None  # the call id of a shell run whose output may follow
        self.model = ""  # the model of this run of aider, until its first answer or model error
        self.slash = ""  # the slash command just typed: a step when aider refuses it or when it acts
        self.launch = ""  # the command line of this run of aider, when it printed one
        self.header = False  # aider's lines before its version banner, where it prints its command line

    def model_outcome(self, text: str, failed: bool) -> None:
        """The run is a call of its own once its model's outcome is known: the command line aider printed
        (without its request; with ``--model X`` when the model came from elsewhere), else ``aider --model
        X``. ``runs`` says it starts aider, whatever the launcher."""
        if self.model:
            command = self.launch or "aider"
            if not re.search(r"\s--model[=\s]", f" {command}"):  # the model came from a config file or /model
                command = f"{command} --model {self.model}"
            call_id = self.call("Bash", {"command": command, "runs": "aider"})
            self.events.append(ToolResult(call_id, text, failed))
            self.model = ""

    def started(self, line: str) -> None:
        """A line before the run's version banner, when it is the command line the run was started with."""
        launch = _LAUNCH.match(line.strip())
        if launch is None:
            return
        name = launch.group("name")
        program = "aider" if name in ("aider", "aider.exe", "__main__.py") else _short(launch.group("program"))
        self.launch = f"{program}{_MESSAGE_ARG.sub('', launch.group('args'))}".strip()

    def call(self, name: str, args: dict[str, str]) -> str:
        self.calls += 1
        call_id = f"aider-{self.calls}"
        self.events.append(ToolCall(call_id, name, args))
        return call_id

    def user(self, lines: list[str]) -> None:
        text = "\n".join(ln for ln in lines if not _ASKED.search(ln)).strip()
        run, ask = _RUN_INPUT.match(text), _ASK_INPUT.match(text)
        if run:
            self.open_run = self.call("Bash", {"command": run.group(1).strip()})
        elif text.startswith("/git "):  # aider runs git itself: a git command of the project
            self.open_run = self.call("Bash", {"command": text[1:].split("\n", 1)[0].strip()})
        elif ask:
            self.events.append(UserText(ask.group(1).strip()))
        elif text and not text.startswith("/"):  # slash commands: steps only when they act (/undo, /drop …)
            self.events.append(UserText(text))
        self.slash = text.split("\n", 1)[0] if text.startswith("/") else ""

    def assistant(self, lines: list[str]) -> None:
        edits, prose = _edit_blocks(_THINKING.sub("", "\n".join(lines)).strip())
        self.model_outcome("the model answered", False)
        for path, old, new in edits:
            call_id = self.call("Edit", {"file_path": path, "old_string": old, "new_string": new})
            self.pending_edits[path.rsplit("/", 1)[-1]] = call_id
        prose = prose.strip()
        if prose:
            self.events.append(AssistantText(prose))

    def output(self, lines: list[str]) -> None:
        block = [ln.rstrip() for ln in lines]
        for ln in block if self.header else ():
            if ln.strip().startswith("Aider v"):
                self.header = False
            elif not self.launch:
                self.started(ln)
        lint = any("Fix any errors below" in ln for ln in block)
        run_id: str | None = self.open_run
        run_lines: list[str] = []
        self.open_run = None
        for ln in block:
            running, applied = _RUNNING.match(ln.strip()), _APPLIED.match(ln.strip())
            model = _MODEL.match(ln.strip())
            if model:
                self.model = model.group(1)
            elif self.model and _MODEL_ERROR.match(ln.strip()):
                self.model_outcome(ln.strip(), True)
            elif self.model and ln.strip().startswith("Tokens: "):
                self.model_outcome("the model answered", False)
            if self.slash and ln.strip().startswith("Invalid command: "):
                refused = self.call("Slash", {"slash": self.slash})
                self.events.append(ToolResult(refused, ln.strip(), True))
                self.slash = ""
            elif self.slash and _SLASH_ACTION.match(self.slash):  # what it did is the block it printed
                acted = self.call("Slash", {"slash": self.slash})
                said = [x.strip() for x in block if x.strip() and not _PROMPTS.match(x.strip())]
                self.events.append(ToolResult(acted, "\n".join(said), None))
                self.slash = ""
            write_failed = _WRITE_FAILED.match(ln.strip())
            if write_failed:
                path = write_failed.group(1)
                failed = self.pending_edits.pop(path.rsplit("/", 1)[-1], None) or self.call("Edit", {"file_path": path})
                self.events.append(ToolResult(failed, ln.strip(), True))
            elif applied:
                path = applied.group(1).strip()
                done = self.pending_edits.pop(path.rsplit("/", 1)[-1], None)
                if done is None:  # a whole-file edit: the file is named only here
                    done = self.call("Edit", {"file_path": path})
                self.events.append(ToolResult(done, ln.strip(), False))
            elif running:
                if run_id:
                    self.events.append(ToolResult(run_id, "\n".join(run_lines).strip(), None))
                run_id, run_lines = self.call("Bash", {"command": running.group(1).strip()}), []
            elif run_id is not None and not _PROMPTS.match(ln.strip()):
                run_lines.append(ln)
            elif _EDIT_FAILED.search(ln):
                for call_id in self.pending_edits.values():
                    self.events.append(ToolResult(call_id, ln.strip(), True))
                self.pending_edits.clear()
        if run_id is not None:
            out = "\n".join(run_lines).strip()
            self.events.append(ToolResult(run_id, out, True if lint and out else None))


def parse_aider(text: str) -> Parsed:
    reader = _Reader()
    kind, lines = "", list[str]()
    fence = report = False

    def flush() -> None:
        if kind == "user":
            reader.user(lines)
        elif kind == "output":
            reader.output(lines)
        elif kind == "assistant" and any(ln.strip() for ln in lines):
            reader.assistant(lines)

    for raw in text.splitlines():
        line = raw.rstrip("\n")
        if kind == "assistant" and line.lstrip().startswith("```"):
            fence = not fence
        if fence and kind == "assistant" and _CUT_ANSWER.match(line):
            fence = False  # the answer was cut before its fence closed: aider's own lines start again
        if fence and kind == "assistant":
            lines.append(line)
            continue
        if report:  # aider's unquoted report of the blocks that failed to match, up to its closing request
            this, report = "output", not line.startswith("Just reply with fixed versions")
        elif line.startswith("# aider chat started at "):
            this = "start"
        elif line.startswith("####"):
            this, line = "user", line[4:].strip()
        elif line.startswith(">"):
            this, line = "output", line[1:].lstrip(" ").rstrip()
            report = bool(_FAILED_BLOCKS.search(line))
        else:
            this = "assistant" if kind != "user" or line.strip() else kind
        if this != kind:
            flush()
            kind, lines = this, []
        if this == "start":
            reader.model = reader.launch = ""  # a run that ended before its model answered or failed tells nothing
            reader.header = True
        if this != "start":
            lines.append(line)
    flush()
    return Parsed("aider", tuple(reader.events))
