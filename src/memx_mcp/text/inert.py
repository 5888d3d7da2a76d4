"""Text that cannot close or forge a frame: markup a model reads as structure (closing tags, chat-template
tokens, comment and CDATA ends, Markdown headings and fences at a line's start, role prefixes such as
``SYSTEM:``) turned into visible, inert look-alikes. Used on the way in (every door's write path) and on
the way out (the hooks' injected notes, for bullets stored before it existed). Idempotent: ``inert`` of
an inert text is the same text."""

from __future__ import annotations

import re

OPEN, CLOSE = "\u2039", "\u203a"  # ‹ ›: read as quotes of a tag, never as one
_ROLE_TAGS = (
    "system|session|user|assistant|human|developer|instructions?|context|prompt|tool[\\w-]*|function[\\w-]*"
    "|memx[\\w-]*|notes?|document|data|im_start|im_end|im_sep|endoftext|start_of_turn|end_of_turn|s|sys|inst"
)
_TAG = re.compile(
    r"<\s*/\s*[A-Za-z_|][^<>\n]{0,200}>"  # any closing tag: </session>, </memx-notes>
    r"|<\s*(?:" + _ROLE_TAGS + r")(?=[\s>/|:])[^<>\n]{0,200}>"  # opening tags a frame or a chat template uses
    r"|<\|[^<>\n]{0,60}\|>"  # chat-template tokens: <|im_start|>, <|endoftext|>
    r"|<[!?][^<>\n]{0,200}>?"  # comments, CDATA, doctypes, processing instructions
    r"|<<\s*/?\s*SYS\s*>>"  # Llama's system markers
    r"|\[/?INST\]",
    re.IGNORECASE,
)
_ENDS = re.compile(r"--!?>|]]>")  # a comment's or a CDATA section's end on its own
_ROLE = re.compile(
    r"^(\s*(?:[-*>]\s*)?)(system|assistant|human|user|developer|tool|model|ai)(\s*):",
    re.IGNORECASE | re.MULTILINE,
)
_HEADING = re.compile(r"^(\s*)(#{1,6})(?=\s|$)", re.MULTILINE)
_FENCE = re.compile(r"`{3,}|^(\s*)(~{3,})", re.MULTILINE)


def _quote_tag(match: re.Match[str]) -> str:
    tag = match.group(0)
    if tag.startswith("["):  # [INST]
        return OPEN + tag[1:-1] + CLOSE
    return tag.replace("<", OPEN).replace(">", CLOSE)


def _fence(match: re.Match[str]) -> str:
    if match.group(2):  # ~~~ at a line's start
        return match.group(1) + "\\" + match.group(2)
    return "\\`" * len(match.group(0))


def inert(text: str) -> str:
    """``text`` with every frame-closing or role-forging construct made visible and harmless."""
    text = _TAG.sub(_quote_tag, text)
    text = _ENDS.sub(lambda m: m.group(0)[:-1] + CLOSE, text)
    text = _ROLE.sub(lambda m: f"{m.group(1)}«{m.group(2)}»{m.group(3)}:", text)
    text = _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return _FENCE.sub(_fence, text)
