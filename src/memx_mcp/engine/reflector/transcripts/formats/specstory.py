"""SpecStory exports of Cursor (and VS Code Copilot) chats (``.specstory/history/*.md``).

Turns open with ``_**User**_`` or ``_**Assistant**_`` / ``_**Agent (…)**_`` (newer versions add a date or
a model in brackets) and are separated by ``---``. Tool use is written as ``<tool-use data-tool-type=…
data-tool-name=…>`` blocks (newer) or ``<details><summary>…</summary>`` blocks (older); a terminal command is
a ``bash``/``shell`` fence followed by an output fence, and files read are ``Read file: PATH`` lines."""

from __future__ import annotations

import re

from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText

_TURN = re.compile(r"^_\*\*(User|Assistant|Agent|Cursor|Copilot|AI)\b(?:\s*\(([^)]*)\))?\*\*_\s*$", re.I | re.M)
# Bodies never run past the next opening tag: an unclosed tag costs one scan to the next one, not the rest.
_TOOL_USE = re.compile(r"<tool-use\b(?P<attrs>[^>]*)>(?P<body>(?:(?!<tool-use\b).)*?)</tool-use>", re.S)
_DETAILS = re.compile(
    r"<details>\s*<summary>(?P<summary>(?:(?!</?details>).)*?)</summary>(?P<body>(?:(?!<details>).)*?)</details>", re.S
)
_ATTR = re.compile(r'data-tool-(type|name)="([^"]*)"')
_FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^```\s*$", re.M | re.S)
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console", "powershell", "pwsh", "cmd", "bat"})
# A shell fence directly followed by a bare output fence; neither part may run across another fence.
_RUN_PAIR = re.compile(
    r"^```(?:bash|sh|shell|zsh|console|powershell|pwsh|cmd)[ \t]*\n(?P<cmd>(?:(?!^```).)*?)^```[ \t]*\n(?:[ \t]*\n)?"
    r"^```[ \t]*\n(?P<out>(?:(?!^```).)*?)^```[ \t]*$",
    re.M | re.S,
)
_READ = re.compile(r"^Read file: (.+)$", re.M)
_EXIT = re.compile(r"(?:exit code|exited with code)[:\s]+(-?\d+)", re.I)
_TAGS = re.compile(r"</?[a-z][^>]*>")
_THINK = re.compile(r"<think>.*?</think>", re.S)
_INLINE_COMMAND = re.compile(r"^`(?P<cmd>[^`\n]+)`\s*$", re.M)  # v2 writes the command as one code span
# Newer exports put a shell call's command in its summary: "Tool use: **exec_command** `npm test`"
_SUMMARY_COMMAND = re.compile(r"^Tool use:\s*\*\*[\w.-]+\*\*\s*`(?P<cmd>[^`\n]+)`\s*$")
# Older exports show an edit as a bare <details> block: "Edit file: PATH", then the diff of each chunk
_EDIT_FILE = re.compile(r"^Edit file:\s*(\S.*)$")


def _added(body: str) -> str:
    """The lines an edit's diff adds (its ``+`` lines), as the text the assistant wrote."""
    return "\n".join(
        ln[1:].removeprefix(" ")
        for m in _FENCE.finditer(body)
        if m.group("lang") == "diff"
        for ln in m.group("code").splitlines()
        if ln.startswith("+") and not ln.startswith("+++")
    )


def is_specstory(text: str) -> bool:
    head = text[:50000]
    turns = {m.group(1).lower() for m in _TURN.finditer(head)}
    return "user" in turns and len(turns) >= 2


class _Reader:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.calls = 0

    def tool(self, name: str, args: dict[str, str], result: str, error: bool | None) -> None:
        self.calls += 1
        call_id = f"specstory-{self.calls}"
        self.events.append(ToolCall(call_id, name, args))
        self.events.append(ToolResult(call_id, result.strip(), error))

    def tool_use(self, attrs: str, body: str) -> None:
        kind = dict(_ATTR.findall(attrs))
        name, summary = kind.get("name", ""), ""
        details = _DETAILS.search(body)
        if details:
            summary, body = _TAGS.sub("", details.group("summary")), details.group("body")
        fences = [m.group("code") for m in _FENCE.finditer(body)]
        if kind.get("type") == "shell" or "terminal" in name:
            inline = _INLINE_COMMAND.search(body)
            shown = _SUMMARY_COMMAND.search(summary)
            if inline:
                command, output = inline.group("cmd").strip(), "\n".join(fences)
            elif shown:  # "Tool use: **exec_command** `plutil -lint x`": the command, then only output fences
                command, output = shown.group("cmd").strip(), "\n".join(fences)
            else:
                command = fences[0].strip() if fences else summary.split(":", 1)[-1].strip()
                output = "\n".join(fences[1:])
            code = _EXIT.search(output) or _EXIT.search(body)
            error = int(code.group(1)) != 0 if code else None
            self.tool("Bash", {"command": command}, output, error)
        elif kind.get("type") == "write" or "edit" in name or "replace" in name:
            path = summary.split(":", 1)[-1].strip().strip("`") if ":" in summary else ""
            self.tool("Edit", {"file_path": path, "new_string": fences[0] if fences else ""}, "", None)
        elif kind.get("type") == "read" or "read" in name:
            self.tool("Read", {"file_path": summary.split(":", 1)[-1].strip().strip("`")}, body, None)
        else:
            self.tool(name or "tool", {"summary": summary.strip()}, _TAGS.sub("", body), None)

    def assistant(self, body: str) -> None:
        """Tool blocks, command runs and ``Read file:`` lines become tool steps in the order they appear;
        the text between them is the assistant's."""
        body = _THINK.sub("", body)
        found = [
            (m.start(), m.end(), kind, m)
            for kind, pattern in (("use", _TOOL_USE), ("run", _RUN_PAIR), ("details", _DETAILS), ("read", _READ))
            for m in pattern.finditer(body)
        ]
        at = 0
        for start, end, kind, m in sorted(found, key=lambda f: f[0]):
            if start < at:
                continue  # inside a block already taken (a <details> of a <tool-use>)
            self.prose(body[at:start])
            at = end
            if kind == "use":
                self.tool_use(m.group("attrs"), m.group("body"))
            elif kind == "run":
                code = _EXIT.search(m.group("out"))
                error = int(code.group(1)) != 0 if code else None
                self.tool("Bash", {"command": m.group("cmd").strip()}, m.group("out"), error)
            elif kind == "details":
                summary = _TAGS.sub("", m.group("summary")).strip()
                edited = _EDIT_FILE.match(summary)
                if edited:  # an edit the assistant made (`write`, `search_replace`): what it wrote, not content
                    self.tool(
                        "Edit",
                        {"file_path": edited.group(1).strip("`"), "new_string": _added(m.group("body"))},
                        "",
                        None,
                    )
                else:
                    self.tool("Search", {"summary": summary}, _TAGS.sub("", m.group("body")), None)
            else:
                self.tool("Read", {"file_path": m.group(1).strip()}, "", None)
        self.prose(body[at:])

    def prose(self, text: str) -> None:
        text = "\n".join(ln for ln in text.splitlines() if ln.strip() not in ("---", "_****_"))
        if text.strip():
            self.events.append(AssistantText(text.strip()))


def parse_specstory(text: str) -> Parsed:
    reader = _Reader()
    marks = list(_TURN.finditer(text))
    for n, m in enumerate(marks):
        body = text[m.end() : marks[n + 1].start() if n + 1 < len(marks) else len(text)]
        body = re.sub(r"\n---\s*$", "", body.strip()).strip()
        if m.group(1).lower() == "user":
            if body and body != "---":
                reader.events.append(UserText(body, None))
        else:
            reader.assistant(body)
    return Parsed("specstory", tuple(reader.events))
