"""Slash commands the assistant's own interface refused ("Invalid command: /grep" in aider): a fact about
the tool a person keeps mistyping, told once per session with every command it refused, and how shell
commands ran instead when the session shows it (a later `!cmd` / `/run cmd`)."""

from __future__ import annotations

from ..episodes.episodes import is_exec
from ..transcripts.transcript import Transcript
from .structural import Candidate, _candidate


def refused_slash_commands(t: Transcript) -> list[Candidate]:
    refused = [s for s in t.steps if s.tool == "Slash" and s.is_error and s.result.startswith("Invalid command")]
    if not refused:
        return []
    names = list(dict.fromkeys(s.result.split(":", 1)[1].strip() for s in refused))
    # a slash command that only leaves (/bye for /exit) is a typo, not a missing feature
    names = [n for n in names if n not in ("/bye", "/quit", "/q")] or names
    shell = next(
        (s for s in t.steps[refused[0].index + 1 :] if is_exec(s) and not s.command.startswith("aider ")), None
    )
    tail = f"; shell commands go through `!cmd` or `/run cmd` (here `{shell.command[:60]}`)" if shell else ""
    assistant = t.format if t.format not in ("", "text") else "this assistant"
    story = f'{assistant} has no {", ".join(f"`{n}`" for n in names[:5])} command ("{refused[0].result[:60]}"){tail}.'
    return [
        _candidate(
            "ErrorFixRule", refused[0], "slash:refused", {"story": story, "error": ""}, t.steps, refused[0].index
        )
    ]
