"""Every rule of the Reflector over one transcript, in one list of candidates: the error episodes, the
harness's notices, environment facts, config changes, new tools, repeated operations and what the prose
says. The rules live in their modules; this one only gathers them."""

from __future__ import annotations

from ..transcripts.transcript import Transcript
from .corrections import correction_candidates
from .environment import environment_facts
from .episode_rules import error_episodes, harness_notices
from .prose import convention_candidates, prose_candidates
from .slash_commands import refused_slash_commands
from .structural import Candidate, config_changes, new_tools, repetitive_ops
from .tool_preconditions import read_first_refusals


def detect(t: Transcript, start_step: int = 0) -> list[Candidate]:
    """Every rule over the transcript; candidates before ``start_step`` (already reflected) are left out,
    and two candidates with the same key are one."""
    errors = error_episodes(t)
    credited = {int(c.facts["fix_step"]) for c in errors if c.facts.get("fix_step")}
    tools = new_tools(t, credited)
    clis = {c.facts["program"] for c in tools if "program" in c.facts}
    everything = [
        *errors,
        *harness_notices(t),
        *environment_facts(t, {c.step for c in errors}),
        *config_changes(t),
        *tools,
        *repetitive_ops(t, clis),
        *prose_candidates(t),
        *convention_candidates(t),
        *correction_candidates(t),
        *refused_slash_commands(t),
        *read_first_refusals(t),
    ]
    unique: dict[str, Candidate] = {}
    for c in sorted(everything, key=lambda c: c.step):
        if c.step >= start_step:
            unique.setdefault(c.key, c)
    return list(unique.values())
