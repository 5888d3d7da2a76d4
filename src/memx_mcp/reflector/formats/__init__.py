"""Parsers for session formats other than Claude Code JSONL: Aider chat history, SpecStory/Cursor markdown,
Claude Code session-export markdown and OpenAI Codex CLI JSONL. Each yields ``events.Parsed``, which
``reflector.transcript`` replays into the same steps as a Claude Code session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .aider import is_aider, parse_aider
from .codex import is_codex, parse_codex
from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText
from .session_export import is_session_export, parse_session_export
from .specstory import is_specstory, parse_specstory

__all__ = ["AssistantText", "Event", "Parsed", "ToolCall", "ToolResult", "UserText", "parse_markdown", "parse_records"]


def parse_markdown(text: str) -> Parsed | None:
    """A markdown session in one of the known formats, or None (then it is read as plain text)."""
    if is_aider(text):
        return parse_aider(text)
    if is_specstory(text):
        return parse_specstory(text)
    if is_session_export(text):
        return parse_session_export(text)
    return None


def parse_records(records: list[Mapping[str, Any]], skipped: int) -> Parsed | None:
    """JSONL records of a known non-Claude format (Codex CLI), or None."""
    return parse_codex(records, skipped) if is_codex(records) else None
