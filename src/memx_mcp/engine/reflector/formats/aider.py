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


def is_aider(text: str) -> bool:
    return bool(_START.search(text[:20000]))


class _Reader:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.calls = 0
        self.pending_edits: dict[str, str] = {}  # file name -> call id, until aider says it applied it
        self.open_run: str | None = None  # the call id of a shell run whose output may follow

    def call(self, name: str, args: dict[str, str]) -> str:
        self.calls += 1
        call_id = f"aider-{self.calls}"
        self.events.append(ToolCall(call_id, name, args))
        return call_id

    def user(self, lines: list[str]) -> None:
        text = "\n".join(lines).strip()
        run, ask = _RUN_INPUT.match(text), _ASK_INPUT.match(text)
        if run:
            self.open_run = self.call("Bash", {"command": run.group(1).strip()})
        elif ask:
            self.events.append(UserText(ask.group(1).strip()))
        elif text and not text.startswith("/"):  # other slash commands (/add, /drop …) say nothing
            self.events.append(UserText(text))

    def assistant(self, lines: list[str]) -> None:
        edits, prose = _edit_blocks(_THINKING.sub("", "\n".join(lines)).strip())
        for path, old, new in edits:
            call_id = self.call("Edit", {"file_path": path, "old_string": old, "new_string": new})
            self.pending_edits[path.rsplit("/", 1)[-1]] = call_id
        prose = prose.strip()
        if prose:
            self.events.append(AssistantText(prose))

    def output(self, lines: list[str]) -> None:
        block = [ln.rstrip() for ln in lines]
        lint = any("Fix any errors below" in ln for ln in block)
        run_id: str | None = self.open_run
        run_lines: list[str] = []
        self.open_run = None
        for ln in block:
            running, applied = _RUNNING.match(ln.strip()), _APPLIED.match(ln.strip())
            if applied:
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
        if this != "start":
            lines.append(line)
    flush()
    return Parsed("aider", tuple(reader.events))
