"""A file tool that refuses until the file is read first (Claude Code's Write/Edit: "File has not been read
yet. Read it first before writing to it."). Agents hit it over and over; the rule is the tool's own, told
once per session, and said to have worked only when a later call on that file went through after a Read."""

from __future__ import annotations

import re

from ..episodes.episodes import edited_file, is_edit
from ..transcripts.transcript import Step, Transcript
from .structural import Candidate, _candidate

_READ_FIRST = re.compile(r"File has not been read yet\.?(?: Read it first before (?:writing to|editing) it\.?)?", re.I)
LOOKAHEAD = 12


def _refused(step: Step) -> bool:
    return is_edit(step) and bool(_READ_FIRST.search(step.result[:300]))


def read_first_refusals(t: Transcript) -> list[Candidate]:
    steps = t.steps
    first = next((s for s in steps if _refused(s)), None)
    if first is None:
        return []
    name = edited_file(first)
    message = _READ_FIRST.search(first.result[:300])
    assert message is not None
    went_through = False
    read = False
    for s in steps[first.index + 1 : first.index + 1 + LOOKAHEAD]:
        if s.role != "tool" or edited_file(s) != name:
            continue
        if s.tool.lower() == "read":
            read = True
        elif read and is_edit(s) and not s.is_error and not _refused(s):
            went_through = True
            break
    then = f"; after a Read of {name}, the {first.tool} went through" if went_through else ": Read the file first"
    story = f'`{first.tool}` refuses a file not read in this session ("{message.group(0)}"){then}.'
    return [_candidate("ErrorFixRule", first, "tool:read-first", {"story": story, "error": ""}, steps, first.index)]
