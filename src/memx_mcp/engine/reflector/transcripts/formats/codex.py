"""OpenAI Codex CLI session JSONL (``~/.codex/sessions/…/rollout-*.jsonl``).

Two shapes: the current one wraps every line as ``{"timestamp", "type", "payload"}`` with ``session_meta``,
``turn_context``, ``response_item`` (message, function_call, function_call_output, custom_tool_call,
local_shell_call, reasoning) and ``event_msg`` (user_message, agent_message, exec_command_end, token_count);
the older one (spring 2025) has a first line ``{"id", "timestamp", "instructions"}`` and then the bare
response items. A tool result's failure is told by the exit code: ``Exit code: 1`` / ``Process exited with
code 1`` headers, a JSON ``{"output", "metadata": {"exit_code"}}`` body, or the matching exec_command_end.

Codex 0.144+ "code mode": shell and patch calls are ``tools.exec_command(…)`` / ``tools.apply_patch(…)``
inside a ``custom_tool_call`` named ``exec`` whose input is JavaScript (read by ``codemode``, never run).
Each call in a cell becomes its own step. The cell's output says "Script completed", "Script failed" or
"Script running with cell ID N"; a running cell's output comes in later ``wait`` calls (``{"cell_id": N}``)
and their outputs. Exit codes come from the command-execution records Codex writes while the cell runs
(``exec_command_end``, or ``item_completed`` with a ``CommandExecution`` item), matched to the cell's calls.

Codex 0.142+: ``<turn_aborted>`` notices are Codex's, not the person's; ``thread_rolled_back``
(``num_turns``) undoes the last turns, so their steps go; ``session_meta.thread_source`` marks sub-agent
threads (read from ``subagent_history_start_ordinal``: what comes before is the parent's history, copied)
and memory-consolidation or guardian-review threads (Codex's own housekeeping: not read)."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from .codemode import CellCall, cell_calls
from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText, patch_edit

_WRAPPED = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "reasoning",
    }
)
_SHELLS = frozenset({"shell", "shell_command", "exec_command", "local_shell", "container.exec", "unified_exec"})
# Context Codex injects as "user" messages: not what the person said.
_INJECTED = re.compile(
    r"^\s*(?:<environment_context>|<user_instructions>|<permissions|<INSTRUCTIONS>|# AGENTS\.md|<turn_aborted>|"
    r"<skills_instructions>|<recommended_plugins>|<apps_instructions>|<collaboration_mode>|<personality_spec>|"
    r"<subagent_notification>|<user_shell_command>|<model_switch>|<realtime_conversation>)"
)
# A message that is one element of Codex's own (``<snake_case>…</snake_case>``, nothing around it): a notice.
_WRAPPED_NOTICE = re.compile(r"^\s*<([a-z]+(?:_[a-z]+)+)>.*</\1>\s*$", re.S)
# Threads Codex runs for itself: no person speaks in them, nothing in them is the user's session.
_HOUSEKEEPING = frozenset({"memory_consolidation", "guardian_review", "guardian"})
_CELL_HEADER = re.compile(
    r"^(?:Script (?P<done>completed|failed)|Script running with cell ID (?P<cell>\S+))\s*$", re.MULTILINE
)
_CELL_FRAME = re.compile(r"^(?:Wall time [\d.]+ seconds|Output:|Final output:)\s*$")
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)", re.MULTILINE)
_HEADER = re.compile(
    r"^(?:Exit code:.*|Process exited with code.*|Wall time:.*|Chunk ID:.*|Original token count:.*|Output:)$"
)


def is_codex(records: list[Mapping[str, Any]]) -> bool:
    if any(r.get("type") in _WRAPPED and isinstance(r.get("payload"), Mapping) for r in records[:50]):
        return True
    return bool(records) and "instructions" in records[0] and any(r.get("type") in _ITEMS for r in records[:50])


def _command(args: Mapping[str, Any]) -> str:
    raw = args.get("command", args.get("cmd"))
    if isinstance(raw, list):
        words = [str(w) for w in raw]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
            return words[2]
        return shlex.join(words)
    return str(raw) if raw is not None else ""


def _call(call_id: str, name: str, args: Mapping[str, Any], ts: str | None) -> ToolCall:
    if name in _SHELLS or ("command" in args and name in ("", "bash")):
        command = _command(args)
        if command.startswith("apply_patch"):
            return ToolCall(call_id, "Edit", patch_edit(command), ts)
        shell: dict[str, Any] = {"command": command}
        if args.get("sandbox_permissions") or args.get("with_escalated_permissions"):
            # how the call was allowed out of the sandbox: the way past a sandbox that breaks every command
            shell["sandbox_permissions"] = str(args.get("sandbox_permissions") or "with_escalated_permissions")
        return ToolCall(call_id, "Bash", shell, ts)
    if name == "apply_patch":
        body = args.get("input") or args.get("patch") or ""
        return ToolCall(call_id, "Edit", patch_edit(str(body)), ts)
    return ToolCall(call_id, name, dict(args), ts)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {"input": str(raw)}
    return value if isinstance(value, dict) else {"input": value}


def _result(call_id: str, output: Any, exit_codes: Mapping[str, int]) -> ToolResult:
    """The text of a tool's output and whether it failed, from whatever the Codex version wrote."""
    error: bool | None = None
    if isinstance(output, str) and output.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            output = json.loads(output)
    if isinstance(output, Mapping):
        meta = output.get("metadata")
        if isinstance(meta, Mapping) and isinstance(meta.get("exit_code"), int):
            error = meta["exit_code"] != 0
        elif isinstance(output.get("success"), bool):
            error = not output["success"]
        output = output.get("output", output.get("content", ""))
    text = _output_text(output)
    code = _EXIT.search(text[:2000])
    if code:
        error = int(code.group(1)) != 0
        text = "\n".join(line for line in text.splitlines() if not _HEADER.match(line))
    if error is None and call_id in exit_codes:
        error = exit_codes[call_id] != 0
    if error is None and text.startswith("execution error:"):  # Codex could not start the command at all
        error = True
    return ToolResult(call_id, text, error)


def _output_text(output: Any) -> str:
    """A tool output's text: a string, or (code mode, newer versions) a list of ``input_text`` items."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(p, Mapping) for p in output):
        return "".join(str(p.get("text", "")) for p in output if isinstance(p.get("text"), str))
    return json.dumps(output, ensure_ascii=False)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and p.get("text"))


def _user_words(text: str) -> bool:
    return bool(text.strip()) and not _INJECTED.match(text) and not _WRAPPED_NOTICE.match(text)


def _cell_step(call_id: str, call: CellCall, ts: str | None) -> ToolCall:
    """One ``tools.NAME(…)`` call of a code-mode cell as a step, named as Claude Code names its tools."""
    arg = call.argument
    if call.name == "apply_patch":
        patch = arg if isinstance(arg, str) else (arg.get("input") or arg.get("patch") if isinstance(arg, dict) else "")
        return ToolCall(call_id, "Edit", patch_edit(str(patch or "")), ts)
    args = dict(arg) if isinstance(arg, dict) else ({"input": arg} if arg is not None else {})
    if call.name in ("exec_command", "shell", "shell_command") and ("cmd" in args or "command" in args):
        return _call(call_id, "exec_command", args, ts)
    return ToolCall(call_id, call.name, args, ts)


class _Cell:
    """A code-mode cell: its calls' step ids, the exit codes seen while it ran, its output so far."""

    def __init__(self, call_id: str, steps: list[tuple[str, ToolCall]]) -> None:
        self.call_id = call_id
        self.steps = steps
        self.ends: list[tuple[str, int | None, str]] = []  # (command, exit code, output) as Codex ran them
        self.output: list[str] = []

    def shell_steps(self) -> list[tuple[str, ToolCall]]:
        return [(i, c) for i, c in self.steps if c.name == "Bash"]

    def results(self, failed: bool) -> list[ToolResult]:
        """Each call's result once the cell is done: a command's own output and exit code where Codex
        recorded them, else the cell's output (to its last call) and the cell's failure."""
        body = "\n".join(t for t in self.output if t).strip()
        shells = self.shell_steps()
        ends = list(self.ends)
        matched: dict[str, tuple[int | None, str]] = {}
        for step_id, call in shells:  # by command text first, then in order
            command = str(call.args.get("command", ""))
            hit = next((e for e in ends if e[0] and (e[0] == command or e[0].endswith(command))), None)
            if hit is None and ends and not any(e[0] for e in ends):
                hit = ends[0]
            if hit is not None:
                ends.remove(hit)
                matched[step_id] = (hit[1], hit[2])
        out: list[ToolResult] = []
        last = self.steps[-1][0] if self.steps else ""
        for step_id, call in self.steps:
            if step_id in matched:
                code, text = matched[step_id]
                error = code != 0 if isinstance(code, int) else None
                if step_id == last and failed:
                    error = True
                out.append(ToolResult(step_id, text or (body if step_id == last else ""), error))
            elif step_id == last:
                out.append(ToolResult(step_id, body, True if failed else None))
            else:
                edit_failed = (
                    failed
                    and call.name == "Edit"
                    and not any(c.name == "Bash" for _, c in self.steps[self.steps.index((step_id, call)) + 1 :])
                )
                out.append(ToolResult(step_id, "", True if edit_failed else (None if failed else False)))
        return out


def _command_end(p: Mapping[str, Any]) -> tuple[str, int | None, str] | None:
    """A command-execution record (``exec_command_end``, or an ``item_completed`` CommandExecution item):
    its command, exit code and output."""
    item = p.get("item") if p.get("type") == "item_completed" else p
    if not isinstance(item, Mapping):
        return None
    if p.get("type") == "item_completed" and item.get("type") not in ("CommandExecution", "commandExecution"):
        return None
    raw = item.get("command")
    command = _command({"command": raw}) if isinstance(raw, list) else str(raw or "")
    code = item.get("exit_code", item.get("exitCode"))
    output = item.get("aggregated_output") or item.get("aggregatedOutput") or item.get("formatted_output") or ""
    if not output:
        output = "\n".join(str(item.get(k) or "") for k in ("stdout", "stderr")).strip()
    return command, code if isinstance(code, int) else None, str(output)


class _Reader:
    def __init__(self, exit_codes: Mapping[str, int], answered: set[str]) -> None:
        self.exit_codes = exit_codes
        self.answered = answered
        self.events: list[Event] = []
        self.turns: list[int] = []  # where each of the person's turns starts in ``events``
        self.cells: dict[str, _Cell] = {}  # exec call id -> its cell, until the cell is done
        self.running: dict[str, str] = {}  # cell id Codex gave a running cell -> exec call id
        self.waits: dict[str, str] = {}  # wait call id -> exec call id
        self.open_order: list[str] = []  # exec call ids of cells not done, oldest first

    def user(self, text: str, ts: str | None) -> None:
        self.turns.append(len(self.events))
        self.events.append(UserText(text, ts))

    def rollback(self, turns: Any) -> None:
        """``thread_rolled_back``: the last ``turns`` turns were undone; their steps go."""
        if not isinstance(turns, int) or turns <= 0 or not self.turns:
            return
        cut = self.turns[-min(turns, len(self.turns))]
        del self.events[cut:]
        self.turns = [t for t in self.turns if t < cut]

    def item(self, item: Mapping[str, Any], ts: str | None) -> None:
        kind = item.get("type")
        call_id = str(item.get("call_id") or item.get("id") or "")
        if kind == "message":
            text = _text(item.get("content"))
            if item.get("role") == "user" and _user_words(text):
                self.user(text, ts)
            elif item.get("role") == "assistant" and text.strip():
                self.events.append(AssistantText(text, ts))
        elif kind == "function_call" and item.get("name") == "wait":
            cell = str(_arguments(item.get("arguments")).get("cell_id", ""))
            if cell in self.running:
                self.waits[call_id] = self.running[cell]
            else:  # a wait on a cell this file does not hold: a step of its own, as before
                self.events.append(_call(call_id, "wait", _arguments(item.get("arguments")), ts))
        elif kind == "function_call":
            self.events.append(_call(call_id, str(item.get("name", "")), _arguments(item.get("arguments")), ts))
        elif kind == "custom_tool_call" and item.get("name") == "exec" and isinstance(item.get("input"), str):
            self.cell(call_id, str(item["input"]), ts)
        elif kind == "custom_tool_call":
            self.events.append(_call(call_id, str(item.get("name", "")), {"input": item.get("input", "")}, ts))
        elif kind == "local_shell_call":
            action = item.get("action")
            self.events.append(_call(call_id, "local_shell", action if isinstance(action, Mapping) else {}, ts))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            owner = self.waits.pop(call_id, None) or (call_id if call_id in self.cells else None)
            if owner is not None:
                self.cell_output(owner, item.get("output"))
            else:
                self.events.append(_result(call_id, item.get("output"), self.exit_codes))

    def cell(self, call_id: str, source: str, ts: str | None) -> None:
        calls = cell_calls(source)
        if not calls:  # a cell that calls no tool (plain JavaScript): one step, as Codex wrote it
            whole = ToolCall(call_id, "exec", {"input": source}, ts)
            self.events.append(whole)
            self.cells[call_id] = _Cell(call_id, [(call_id, whole)])
        else:
            steps = [(f"{call_id}#{n}", _cell_step(f"{call_id}#{n}", c, ts)) for n, c in enumerate(calls)]
            self.events.extend(step for _, step in steps)
            self.cells[call_id] = _Cell(call_id, steps)
        self.open_order.append(call_id)

    def cell_output(self, owner: str, output: Any) -> None:
        cell = self.cells.get(owner)
        if cell is None:
            return
        text = _output_text(output)
        header = _CELL_HEADER.search(text[:300])
        if header is not None and header.start() == 0:
            text = "\n".join(line for line in text[header.end() :].splitlines() if not _CELL_FRAME.match(line))
        cell.output.append(text.strip())
        if header is not None and header.group("cell"):
            self.running[header.group("cell")] = owner  # its output goes on in later waits
            return
        failed = header is not None and header.group("done") == "failed"
        self.events.extend(cell.results(failed))
        del self.cells[owner]
        if owner in self.open_order:
            self.open_order.remove(owner)
        for cell_id in [k for k, v in self.running.items() if v == owner]:
            del self.running[cell_id]

    def command_end(self, payload: Mapping[str, Any]) -> None:
        """A command Codex ran: to the oldest running cell with a shell call it has no record for yet, or
        (no cell: an older version) a result of its own when no output item answered the call."""
        end = _command_end(payload)
        if end is None:
            return
        for owner in self.open_order:
            cell = self.cells[owner]
            if cell.ends and cell.ends[-1] == end:
                return  # the same run told twice (an exec_command_end and its item_completed)
            if len(cell.ends) < len(cell.shell_steps()):
                cell.ends.append(end)
                return
        if payload.get("type") == "exec_command_end" and str(payload.get("call_id")) not in self.answered:
            self.events.append(_exec_end(payload))  # a cut file, or a version that wrote no output item

    def finish(self) -> None:
        """Cells the file ends inside of (cut, or still running): their calls stay, their outcome unknown."""
        for owner in list(self.open_order):
            cell = self.cells.pop(owner)
            for step_id, _ in cell.steps:
                self.events.append(ToolResult(step_id, "\n".join(cell.output).strip(), None))
        self.open_order.clear()


def _exec_end(end: Mapping[str, Any]) -> ToolResult:
    output = end.get("aggregated_output") or "\n".join(str(end.get(k) or "") for k in ("stdout", "stderr"))
    code = end.get("exit_code")
    return ToolResult(str(end.get("call_id")), str(output).strip(), code != 0 if isinstance(code, int) else None)


def _event_message(m: Mapping[str, Any], ts: str | None) -> Iterable[Event]:
    text = str(m.get("message") or "")
    if m.get("type") == "user_message" and _user_words(text):
        yield UserText(text, ts)
    elif m.get("type") == "agent_message" and text.strip():
        yield AssistantText(text, ts)


def _thread_kind(meta: Mapping[str, Any]) -> str:
    """``user``, ``subagent`` or a housekeeping thread's kind, from the first ``session_meta``."""
    kind = str(meta.get("thread_source") or "")
    source = meta.get("source")
    if isinstance(source, Mapping):
        if source.get("internal") in _HOUSEKEEPING:
            return str(source["internal"])
        if "subagent" in source and not kind:
            sub = source["subagent"]
            return str(sub) if sub in _HOUSEKEEPING else "subagent"
    return kind or "user"


def parse_codex(records: list[Mapping[str, Any]], skipped: int) -> Parsed:
    wrapped = any(r.get("type") in _WRAPPED for r in records[:50])
    rows = [(r.get("type") if wrapped else "response_item", r.get("payload") if wrapped else r, r) for r in records]
    meta = next((p for kind, p, _ in rows if kind == "session_meta" and isinstance(p, Mapping)), None)
    session = str(meta.get("id") or meta.get("session_id") or "") if meta else ""
    cwd = str(meta.get("cwd") or "") if meta else ""
    thread = _thread_kind(meta) if meta else "user"
    if thread in _HOUSEKEEPING:
        note = f"a Codex {thread.replace('_', '-')} thread (Codex's own housekeeping, not a session): not read"
        return Parsed("codex", (), session, cwd, skipped, notes=(note,))
    notes: list[str] = []
    start = meta.get("subagent_history_start_ordinal") if meta else None
    if isinstance(start, int) and start > 0:
        # a sub-agent's rollout begins with a copy of its parent's history: its own starts at this ordinal
        ordinals = [o if isinstance(o := r.get("ordinal"), int) else n for n, r in enumerate(records)]
        rows = [row for row, o in zip(rows, ordinals, strict=True) if o >= start or row[0] == "session_meta"]
        notes.append(f"a Codex sub-agent thread, read from its own start (ordinal {start})")
    elif thread == "subagent":
        notes.append("a Codex sub-agent thread")
    # The conversation is in response items; event messages repeat it, except in versions that kept it only there.
    exit_codes = {
        str(p.get("call_id")): int(p["exit_code"])
        for kind, p, _ in rows
        if kind == "event_msg"
        and isinstance(p, Mapping)
        and p.get("type") == "exec_command_end"
        and isinstance(p.get("exit_code"), int)
    }
    has_messages = any(
        kind == "response_item" and isinstance(p, Mapping) and p.get("type") == "message" for kind, p, _ in rows
    )
    answered = {
        str(p.get("call_id"))
        for kind, p, _ in rows
        if kind == "response_item" and isinstance(p, Mapping) and str(p.get("type", "")).endswith("_output")
    }
    reader = _Reader(exit_codes, answered)
    for kind, payload, r in rows:
        if not isinstance(payload, Mapping):
            continue
        ts = r.get("timestamp") if isinstance(r.get("timestamp"), str) else None
        if not wrapped and "instructions" in r and "type" not in r:
            session = session or str(payload.get("id") or payload.get("session_id") or "")
        elif kind == "turn_context":
            cwd = cwd or str(payload.get("cwd") or "")
        elif kind == "response_item":
            reader.item(payload, ts)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            reader.rollback(payload.get("num_turns"))
        elif kind == "event_msg" and payload.get("type") in ("exec_command_end", "item_completed"):
            reader.command_end(payload)
        elif kind == "event_msg" and not has_messages:
            for event in _event_message(payload, ts):
                if isinstance(event, UserText):
                    reader.user(event.text, event.ts)
                else:
                    reader.events.append(event)
    reader.finish()
    return Parsed("codex", tuple(reader.events), session, cwd, skipped, notes=tuple(notes))
