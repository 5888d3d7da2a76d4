"""A whole session as the few windows a model reads: every step on numbered lines, tool outputs trimmed,
repeats folded, secrets masked, cut at step boundaries into windows of at most ``window_chars``.

The step numbers are the transcript's own (``Step.index``), so a model's answer can cite them and the
Reflector can check each citation against the step's text. A session that would need more windows than
``max_windows`` is condensed harder (shorter outputs, then outputs left out) until it fits, so a session
under 1 MB costs a bounded number of calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ....text.clip import head_and_tail
from ..transcripts.transcript import Step

# (characters of a tool's output, of a message) kept per step, from gentle to harsh
LEVELS = ((1600, 2400), (800, 1400), (400, 800), (160, 400), (0, 240))
EDIT_TOOLS = ("edit", "multiedit", "write", "str_replace", "strreplace", "apply_patch", "replace")


@dataclass(frozen=True)
class Line:
    """One step (or a run of identical ones, folded) as the model sees it."""

    step: int  # the first step of the run
    last: int  # the last step of the run (== step unless folded)
    text: str


@dataclass(frozen=True)
class Window:
    first: int
    last: int
    text: str


@dataclass(frozen=True)
class Condensed:
    lines: tuple[Line, ...]
    windows: tuple[Window, ...]
    level: int  # which of LEVELS it took
    chars: int  # characters of all windows together


def _edit_body(s: Step) -> str:
    old, new = s.tool_input.get("old_string"), s.tool_input.get("new_string")
    if isinstance(new, str):
        return f"- {old if isinstance(old, str) else ''}\n+ {new}"
    content = s.tool_input.get("content")
    return content if isinstance(content, str) else ""


def shown_input(s: Step) -> str:
    """A tool call's input as the model reads it: the command (or file, pattern, URL), else every string
    input as ``key=value``. The evidence check reads this too, so a quote of what was shown is found."""
    return s.command.strip() or ", ".join(f"{k}={v}" for k, v in s.tool_input.items() if isinstance(v, str))


def _render(s: Step, out_chars: int, text_chars: int) -> str:
    if s.role != "tool":
        return f"{s.role}: {head_and_tail(s.text, text_chars * 2 // 3, text_chars // 3)}"
    status = "FAILED" if s.is_error else "ok"
    what = shown_input(s)
    head = f"{s.tool or 'tool'} {status}: {head_and_tail(what, 500, 100)}"
    body = _edit_body(s) if s.tool.lower() in EDIT_TOOLS else s.result
    if out_chars and body.strip():
        return f"{head}\n  " + head_and_tail(body, out_chars * 2 // 3, out_chars // 3).replace("\n", "\n  ")
    return head


def _signature(s: Step) -> tuple[str, str, str, bool, str]:
    return (s.role, s.tool, s.command or s.text, s.is_error, s.result[:400])


def condense_lines(steps: Sequence[Step], mask: Callable[[str], str], level: int = 0) -> list[Line]:
    """The steps as numbered lines at ``level``; a run of identical steps (the same call, the same result)
    is one line marked with its count."""
    out_chars, text_chars = LEVELS[level]
    lines: list[Line] = []
    run: list[Step] = []

    def flush() -> None:
        if not run:
            return
        first, last = run[0], run[-1]
        body = mask(_render(first, out_chars, text_chars))
        mark = f"[{first.index}]" if first is last else f"[{first.index}-{last.index}, the same {len(run)} times]"
        lines.append(Line(first.index, last.index, f"{mark} {body}"))
        run.clear()

    for s in steps:
        if not (s.text.strip() or s.tool or s.result.strip()):
            continue
        if run and _signature(run[-1]) == _signature(s):
            run.append(s)
            continue
        flush()
        run.append(s)
    flush()
    return lines


def cut_windows(lines: Sequence[Line], window_chars: int) -> list[Window]:
    """Consecutive lines in windows of at most ``window_chars`` (a single longer line is cut to fit)."""
    windows: list[Window] = []
    chunk: list[Line] = []
    size = 0
    for line in lines:
        text = line.text if len(line.text) < window_chars else head_and_tail(line.text, window_chars // 2, 400)
        if chunk and size + len(text) + 1 > window_chars:
            windows.append(Window(chunk[0].step, chunk[-1].last, "\n".join(c.text for c in chunk)))
            chunk, size = [], 0
        chunk.append(Line(line.step, line.last, text))
        size += len(text) + 1
    if chunk:
        windows.append(Window(chunk[0].step, chunk[-1].last, "\n".join(c.text for c in chunk)))
    return windows


def condense(steps: Sequence[Step], mask: Callable[[str], str], window_chars: int, max_windows: int) -> Condensed:
    """The gentlest condensation whose windows number at most ``max_windows`` (the harshest otherwise)."""
    best: Condensed | None = None
    for level in range(len(LEVELS)):
        lines = condense_lines(steps, mask, level)
        windows = cut_windows(lines, window_chars)
        best = Condensed(tuple(lines), tuple(windows), level, sum(len(w.text) for w in windows))
        if len(windows) <= max_windows:
            break
    assert best is not None
    return best


def max_windows_for(raw_chars: int) -> int:
    """Three windows for a session under 1 MB (plus one consolidation call: at most 4 calls), one more per
    further 330 KB of raw transcript."""
    return max(3, -(-raw_chars // 330_000))
