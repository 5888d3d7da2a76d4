"""The tool calls inside a Codex "code mode" cell (Codex CLI 0.144+), read without running anything.

In code mode the model's shell and patch calls are one ``custom_tool_call`` named ``exec`` whose input is a
JavaScript program: ``const r = await tools.exec_command({"cmd": "pytest -q", "workdir": "/repo"});
text(r.output);``, ``await tools.apply_patch("*** Begin Patch …")``, several calls in one cell, a patch
held in a ``const`` first. This module finds each ``tools.NAME(…)`` call outside comments and string
literals and reads its first argument when it is a literal: an object (quoted or bare keys), an array, a
string (double, single or backtick quotes; a template with ``${…}`` is not a literal), a number, ``true``,
``false``, ``null``, or the name of a ``const``/``let``/``var`` bound to such a literal earlier in the cell.
Anything else (a computed value, a call) is left unread: the call is still reported, with no arguments.

The reader is linear in the length of the cell, nests at most ``MAX_DEPTH`` deep and reads at most
``MAX_CELL`` characters, so a hostile cell can neither crash nor stall it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_CELL = 400_000  # characters of a cell read; a longer one is read up to there
MAX_DEPTH = 32  # nesting of objects and arrays read as literals
MAX_CALLS = 200  # tool calls reported per cell
_UNREAD = object()  # a value that is not a literal


@dataclass(frozen=True)
class CellCall:
    """One ``tools.NAME(argument)`` call of a cell: its tool's name and its first argument, when literal."""

    name: str
    argument: Any = None
    read: bool = True  # False: the argument was not a literal (a variable, a call, a template with ${…})


@dataclass
class _Token:
    kind: str  # "name", "str", "num", "punct", "tmpl" (a template with ${…}: not a literal)
    value: Any


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "\n": ""}
# One token at a time, each alternative linear (no nested repetition): whitespace, comments, strings (an
# unterminated one ends at its line, or at the end of the cell), numbers, names, any other character.
_TOKEN = re.compile(
    r"""(?P<skip>\s+|//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))"""
    r"""|(?P<str>"(?:[^"\\\n]|\\.|\\\Z)*(?:"|(?=\n)|\Z)"""
    r"""|'(?:[^'\\\n]|\\.|\\\Z)*(?:'|(?=\n)|\Z)"""
    r"""|`(?:[^`\\]|\\.|\\\Z)*(?:`|\Z))"""
    r"""|(?P<num>-?\d[\w.]*)|(?P<name>[\w$]+)|(?P<punct>.)""",
    re.S,
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|.|\Z)", re.S)


def _unescape(m: re.Match[str]) -> str:
    e = m.group(1)
    if len(e) > 1:  # \xHH, \uHHHH, \u{H…}
        return _hex(e[1:].strip("{}"))
    return _SIMPLE_ESCAPES.get(e, e)


def _scan(src: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _TOKEN.finditer(src):
        kind = m.lastgroup
        text = m.group()
        if kind == "str":
            quote, body = text[0], text[1:]
            if len(body) > 0 and body[-1] == quote and not _escaped_end(body):
                body = body[:-1]
            interpolated = quote == "`" and "${" in body
            tokens.append(_Token("tmpl" if interpolated else "str", _ESCAPE.sub(_unescape, body)))
        elif kind == "num":
            tokens.append(_Token("num", _number(text)))
        elif kind in ("name", "punct"):
            tokens.append(_Token(str(kind), text))
    return tokens


def _escaped_end(body: str) -> bool:
    """Whether the last character of ``body`` is escaped (an odd run of backslashes before it)."""
    run = len(body) - 1 - len(body[:-1].rstrip("\\"))
    return run % 2 == 1


def _hex(digits: str) -> str:
    try:
        return chr(int(digits, 16))
    except (ValueError, OverflowError):
        return ""


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.t = tokens
        self.bindings: dict[str, Any] = {}
        self.budget = 2 * len(tokens) + 1000  # steps of skipping left: the reader's work stays linear

    def punct(self, i: int, char: str) -> bool:
        return i < len(self.t) and self.t[i].kind == "punct" and self.t[i].value == char

    def value(self, i: int, depth: int = 0) -> tuple[Any, int]:
        """The literal starting at token ``i`` and the index after it; ``_UNREAD`` and the index after the
        expression (as far as the next ``,``, ``)``, ``}``, ``]`` or ``;`` at this level) when not literal."""
        if i >= len(self.t) or depth > MAX_DEPTH:
            return _UNREAD, self.skip(i)
        tok = self.t[i]
        if tok.kind in ("str", "num"):
            end = i + 1
            if not self.ends(end):
                return _UNREAD, self.skip(i)
            return tok.value, end
        if tok.kind == "name" and tok.value in ("true", "false", "null", "undefined"):
            literal = {"true": True, "false": False, "null": None, "undefined": None}[tok.value]
            return (literal, i + 1) if self.ends(i + 1) else (_UNREAD, self.skip(i))
        if tok.kind == "name" and self.ends(i + 1) and tok.value in self.bindings:
            return self.bindings[tok.value], i + 1
        if self.punct(i, "{"):
            return self.object(i + 1, depth + 1)
        if self.punct(i, "["):
            return self.array(i + 1, depth + 1)
        return _UNREAD, self.skip(i)

    def ends(self, i: int) -> bool:
        return i >= len(self.t) or (self.t[i].kind == "punct" and self.t[i].value in ",)}];")

    def skip(self, i: int) -> int:
        """The index of the token that ends the expression starting at ``i`` (brackets balanced)."""
        depth = 0
        while i < len(self.t):
            self.budget -= 1
            if self.budget < 0:
                return len(self.t)  # a cell built to make the reader skip forever: read no further
            tok = self.t[i]
            if tok.kind == "punct":
                if tok.value in "([{":
                    depth += 1
                elif tok.value in ")]}":
                    if depth == 0:
                        return i
                    depth -= 1
                elif tok.value in ",;" and depth == 0:
                    return i
            i += 1
        return i

    def object(self, i: int, depth: int) -> tuple[Any, int]:
        result: dict[str, Any] = {}
        complete = True
        while i < len(self.t) and not self.punct(i, "}"):
            key_tok = self.t[i]
            if key_tok.kind in ("name", "str", "num") and self.punct(i + 1, ":"):
                value, i = self.value(i + 2, depth)
                if value is _UNREAD:
                    complete = False
                else:
                    result[str(key_tok.value)] = value
            elif key_tok.kind == "name" and (self.punct(i + 1, ",") or self.punct(i + 1, "}")):
                if key_tok.value in self.bindings:  # shorthand {cmd}
                    result[key_tok.value] = self.bindings[key_tok.value]
                else:
                    complete = False
                i += 1
            else:
                complete = False
                i = self.skip(i)
            if self.punct(i, ","):
                i += 1
            elif not self.punct(i, "}"):
                return _UNREAD, self.skip(i)
        end = i + 1
        return (result if complete or result else _UNREAD), end

    def array(self, i: int, depth: int) -> tuple[Any, int]:
        result: list[Any] = []
        complete = True
        while i < len(self.t) and not self.punct(i, "]"):
            value, i = self.value(i, depth)
            if value is _UNREAD:
                complete = False
            else:
                result.append(value)
            if self.punct(i, ","):
                i += 1
            elif not self.punct(i, "]"):
                return _UNREAD, self.skip(i)
        return (result if complete else _UNREAD), i + 1

    def calls(self) -> list[CellCall]:
        found: list[CellCall] = []
        t = self.t
        i = 0
        while i < len(t) and len(found) < MAX_CALLS:
            tok = t[i]
            # const NAME = literal;  (let, var too): remembered for a later tools.x(NAME)
            declares = tok.kind == "name" and tok.value in ("const", "let", "var") and i + 2 < len(t)
            if declares and t[i + 1].kind == "name" and self.punct(i + 2, "="):
                value, end = self.value(i + 3)
                if value is not _UNREAD:
                    self.bindings[t[i + 1].value] = value
                    i = end
                    continue
            name = self.tool_name(i)
            if name is not None:
                name_end = i + 3 if self.punct(i + 1, ".") else i + 4
                start = name_end + 1  # after "("
                if self.punct(start, ")"):
                    found.append(CellCall(name, None))
                    i = start + 1
                    continue
                value, _end = self.value(start)
                found.append(CellCall(name, None if value is _UNREAD else value, value is not _UNREAD))
                i = start  # the argument may hold calls of its own (Promise.all([...]))
                continue
            i += 1
        return found

    def tool_name(self, i: int) -> str | None:
        """``tools.NAME(`` or ``tools["NAME"](`` at token ``i``: the name, else None."""
        t = self.t
        if not (t[i].kind == "name" and t[i].value == "tools"):
            return None
        if i > 0 and self.punct(i - 1, "."):
            return None  # something.tools.x(…): not the cell's tools
        if self.punct(i + 1, ".") and i + 2 < len(t) and t[i + 2].kind == "name" and self.punct(i + 3, "("):
            return str(t[i + 2].value)
        if (
            self.punct(i + 1, "[")
            and i + 2 < len(t)
            and t[i + 2].kind == "str"
            and self.punct(i + 3, "]")
            and self.punct(i + 4, "(")
        ):
            return str(t[i + 2].value)
        return None


def cell_calls(source: str) -> list[CellCall]:
    """The ``tools.NAME(…)`` calls of a code-mode cell, in the order they are written."""
    if not isinstance(source, str) or "tools" not in source:
        return []
    return _Parser(_scan(source[:MAX_CELL])).calls()
