"""OpenAI Codex CLI session JSONL (``~/.codex/sessions/…/rollout-*.jsonl``).

Two shapes: the current one wraps every line as ``{"timestamp", "type", "payload"}`` with ``session_meta``,
``turn_context``, ``response_item`` (message, function_call, function_call_output, custom_tool_call,
local_shell_call, reasoning) and ``event_msg`` (user_message, agent_message, exec_command_end, token_count);
the older one (spring 2025) has a first line ``{"id", "timestamp", "instructions"}`` and then the bare
response items. A tool result's failure is told by the exit code: ``Exit code: 1`` / ``Process exited with
code 1`` headers, a JSON ``{"output", "metadata": {"exit_code"}}`` body, or the matching exec_command_end."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

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
_INJECTED = re.compile(r"^\s*(?:<environment_context>|<user_instructions>|<permissions|<INSTRUCTIONS>|# AGENTS\.md)")
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
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    code = _EXIT.search(text[:2000])
    if code:
        error = int(code.group(1)) != 0
        text = "\n".join(line for line in text.splitlines() if not _HEADER.match(line))
    if error is None and call_id in exit_codes:
        error = exit_codes[call_id] != 0
    return ToolResult(call_id, text, error)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and p.get("text"))


def _item(item: Mapping[str, Any], ts: str | None, exit_codes: Mapping[str, int]) -> Iterable[Event]:
    kind = item.get("type")
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind == "message":
        text = _text(item.get("content"))
        if item.get("role") == "user" and text.strip() and not _INJECTED.match(text):
            yield UserText(text, ts)
        elif item.get("role") == "assistant" and text.strip():
            yield AssistantText(text, ts)
    elif kind == "function_call":
        yield _call(call_id, str(item.get("name", "")), _arguments(item.get("arguments")), ts)
    elif kind == "custom_tool_call":
        yield _call(call_id, str(item.get("name", "")), {"input": item.get("input", "")}, ts)
    elif kind == "local_shell_call":
        action = item.get("action")
        yield _call(call_id, "local_shell", action if isinstance(action, Mapping) else {}, ts)
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        yield _result(call_id, item.get("output"), exit_codes)


def _exec_end(end: Mapping[str, Any]) -> ToolResult:
    output = end.get("aggregated_output") or "\n".join(str(end.get(k) or "") for k in ("stdout", "stderr"))
    code = end.get("exit_code")
    return ToolResult(str(end.get("call_id")), str(output).strip(), code != 0 if isinstance(code, int) else None)


def _event_message(m: Mapping[str, Any], ts: str | None) -> Iterable[Event]:
    text = str(m.get("message") or "")
    if m.get("type") == "user_message" and text.strip() and not _INJECTED.match(text):
        yield UserText(text, ts)
    elif m.get("type") == "agent_message" and text.strip():
        yield AssistantText(text, ts)


def parse_codex(records: list[Mapping[str, Any]], skipped: int) -> Parsed:
    wrapped = any(r.get("type") in _WRAPPED for r in records[:50])
    rows = [(r.get("type") if wrapped else "response_item", r.get("payload") if wrapped else r, r) for r in records]
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
    session, cwd = "", ""
    events: list[Event] = []
    for kind, payload, r in rows:
        if not isinstance(payload, Mapping):
            continue
        ts = r.get("timestamp") if isinstance(r.get("timestamp"), str) else None
        if kind == "session_meta" or (not wrapped and "instructions" in r and "type" not in r):
            session = session or str(payload.get("id") or payload.get("session_id") or "")
            cwd = cwd or str(payload.get("cwd") or "")
        elif kind == "turn_context":
            cwd = cwd or str(payload.get("cwd") or "")
        elif kind == "response_item":
            events.extend(_item(payload, ts, exit_codes))
        elif kind == "event_msg" and payload.get("type") == "exec_command_end":
            if str(payload.get("call_id")) not in answered:  # a cut file, or a version that wrote no output item
                events.append(_exec_end(payload))
        elif kind == "event_msg" and not has_messages:
            events.extend(_event_message(payload, ts))
    return Parsed("codex", tuple(events), session, cwd, skipped)
