"""Parsers for session formats other than Claude Code JSONL: Aider chat history, SpecStory/Cursor markdown,
Claude Code session-export markdown, OpenAI Codex CLI JSONL, Cursor agent transcripts and Gemini CLI saved
chats. Each yields ``events.Parsed``, which
``reflector.transcript`` replays into the same steps as a Claude Code session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .aider import is_aider, parse_aider
from .codex import is_codex, parse_codex
from .cursor import is_cursor, is_cursor_text, parse_cursor, parse_cursor_text
from .events import AssistantText, Event, Parsed, ToolCall, ToolResult, UserText
from .gemini import is_gemini, parse_gemini
from .session_export import is_session_export, parse_session_export
from .specstory import is_specstory, parse_specstory

__all__ = ["AssistantText", "Event", "Parsed", "ToolCall", "ToolResult", "UserText", "parse_markdown", "parse_records"]


def parse_markdown(text: str) -> Parsed | None:
    """A markdown session in one of the known formats, or None (then it is read as plain text)."""
    if is_cursor_text(text):
        return parse_cursor_text(text)
    if is_aider(text):
        return parse_aider(text)
    if is_specstory(text):
        return parse_specstory(text)
    if is_session_export(text):
        return parse_session_export(text)
    return None


def parse_records(records: list[Mapping[str, Any]], skipped: int) -> Parsed | None:
    """JSONL records (or one JSON object's) of a known non-Claude format, or None."""
    if is_codex(records):
        return parse_codex(records, skipped)
    if is_gemini(records):
        return parse_gemini(records, skipped)
    if is_cursor(records):
        return parse_cursor(records, skipped)
    return None
