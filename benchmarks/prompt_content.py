"""What a prompt memx sends shows the model, apart from how it is asked: the values memx put into one of its
prompt templates (the session window, the part number, the open lessons, the drafted lessons, what the memory
holds, the later edits), not the instruction text around them.

Recorded model answers are keyed by the sha256 of the whole prompt (``llm_replay.prompt_key``), so any change
of an instruction's wording makes every one of them unknown. Keyed by content instead, an answer replays when
memx shows the model exactly what it showed when the answer was written, whatever the instructions now say;
when what memx shows changed (a step rendered differently, a later edit now listed), the prompt has no
recorded answer. The caveat stays: the answers were written against the earlier wording.

Pure standard library, and it reads the templates of whichever memx is on the path (the current layout or an
older one), so the same function keys an old commit's prompts with that commit's templates
(``replay_content_keys.py``) and today's prompts with today's.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import string
from functools import lru_cache

# Where the prompt templates have lived (readings/ since the fifth round; engine/reflector/ and llm.py before).
MODULES = (
    "memx_mcp.engine.reflector.readings.session_reading",
    "memx_mcp.engine.reflector.readings.verdicts",
    "memx_mcp.engine.reflector.readings.episode_writer",
    "memx_mcp.engine.reflector.session_reading",
    "memx_mcp.engine.reflector.llm",
    "memx_mcp.engine.reflector.episode_writer",
)


def templates() -> dict[str, str]:
    """name -> template text of every prompt template the memx on the path defines (first module wins)."""
    found: dict[str, str] = {}
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in vars(module).items():
            if (
                isinstance(value, str)
                and (attr.endswith("_PROMPT") or attr == "OPEN_LESSONS")
                and _fields(value)
                and attr not in found
            ):
                found[attr] = value
    return found


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


@lru_cache(maxsize=64)
def _pattern(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, field, _spec, _conv in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is None:
            continue
        if field in seen:
            parts.append(f"(?P={field})")
        else:
            seen.add(field)
            parts.append(f"(?P<{field}>.*?)")
    return re.compile("".join(parts), re.S)


def _match(text: str, table: dict[str, str], skip: str = "") -> tuple[str, dict[str, object]] | None:
    # longest template first: the most specific wins when two could match
    for name, template in sorted(table.items(), key=lambda kv: -len(kv[1])):
        if name == skip:
            continue
        m = _pattern(template).fullmatch(text)
        if m:
            return name, {k: _value(v, table, name) for k, v in m.groupdict().items()}
    return None


def _value(value: str, table: dict[str, str], parent: str) -> object:
    nested = _match(value, table, skip=parent) if value else None
    return [nested[0], nested[1]] if nested else value


def content_of(prompt: str, table: dict[str, str]) -> tuple[str, dict[str, object]] | None:
    """(template name, the values memx put into it), or None when the prompt fits none of the templates."""
    return _match(prompt, table)


def content_key(prompt: str, table: dict[str, str]) -> str | None:
    found = content_of(prompt, table)
    if found is None:
        return None
    canonical = json.dumps(found, sort_keys=True, ensure_ascii=False)
    return "content:" + hashlib.sha256(canonical.encode()).hexdigest()[:24]
