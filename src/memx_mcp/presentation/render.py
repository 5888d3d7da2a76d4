"""Readable text for people (the CLI's tables) and for the assistant (the tools' text block)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from ..text.clip import one_line as _clip
from .schemas import (
    BulletOut,
    ConflictsOut,
    ForgetOut,
    ListOut,
    PendingOut,
    RecallOut,
    ReflectOut,
    RememberOut,
    ReviewOut,
    StatsOut,
)

M = TypeVar("M", bound=BaseModel)
# C0 and C1 controls but newline and tab: ESC starts the sequences that move the cursor, retitle the window
# or (OSC 52) write the clipboard; a stored bullet must never do that to the terminal that shows it.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_COLOR = False  # the CLI switches it on for a terminal (never for pipes, files or the MCP tools' text)


def use_color(enabled: bool) -> None:
    global _COLOR
    _COLOR = enabled


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written out (``\\x1b``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _visible_values(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: _visible_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_visible_values(v) for v in value]
    return value


def printable(model: M) -> M:
    """A copy of ``model`` whose text is safe to print on a terminal (see ``visible``)."""
    return type(model).model_validate(_visible_values(model.model_dump()))


def _c(text: str, code: str) -> str:
    """``text`` in an ANSI style (1 bold, 2 dim, 31 red, 32 green, 33 yellow, 36 cyan) on a terminal."""
    return f"\033[{code}m{text}\033[0m" if _COLOR else text


def remember_text(r: RememberOut) -> str:
    b = r.bullet
    if r.action == "merged":
        head = f"Merged into existing {r.merged_into} (similarity {r.similarity or 1.0:.2f})"
    elif r.conflicts:
        head = f"Remembered {b.id}, with {len(r.conflicts)} possible conflict(s)"
    else:
        head = f"Remembered {b.id}"
    lines = [
        f"{head} [{b.section}/{b.knowledge_type}, score {b.instructivity_score:.0f}, {b.scope}]",
        b.content,
    ]
    for c in r.conflicts:
        why = "; ".join(c.evidence) or "similar content"
        lines.append(f"  {c.kind} with {c.other_id} (similarity {c.similarity:.2f}): {why}")
    lines.append(f"scope {r.scope_why}")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def _factor(value: float) -> str:
    """A term of ``final = blended × decay × recency × scope`` as the fusion used it, to four decimals with
    trailing zeros dropped (1.15, not 1.1): the printed factors multiply to the printed score."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def recall_text(r: RecallOut, width: int = 100) -> str:
    if not r.results:
        lines = [f"Nothing relevant in {r.scope} for {r.query!r} ({r.mode})."]
    else:
        lines = [f"{len(r.results)} result(s) for {r.query!r} in {r.scope} ({r.mode}):"]
        for i, h in enumerate(r.results, 1):
            s = h.score
            lines.append(f"{i}. [{_c(h.id, '36')}] {_clip(h.content, width)}")
            lines.append(
                f"   final {_factor(s.final)} = blended {_factor(s.blended)} × decay {_factor(s.decay_effect)}"
                f" (weight {s.decay:.2f}) × recency {_factor(s.recency)} × scope {_factor(s.scope)}"
                f"  (L1 {s.l1:.1f} L2 {s.l2:.1f} L3 {s.l3:.1f} sem {s.semantic:.2f})"
                f"  {h.section}/{h.knowledge_type} {h.scope}"
            )
    if r.omitted_by_budget:
        lines.append(f"{r.omitted_by_budget} more did not fit the token budget.")
    lines.append(f"scope {r.scope_why}")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def scan_text(kinds: Sequence[str]) -> str:
    """What a scan recorded, by kind: a contradiction (the same subject, opposed) is not an overlap."""
    if not kinds:
        return "Scan recorded no new conflict."
    contradictions, overlaps = kinds.count("contradiction"), kinds.count("overlap")
    return (
        f"Scan recorded {len(kinds)} new conflict(s): {contradictions} contradiction(s) (the same subject, "
        f"different values or opposite advice) and {overlaps} overlap(s) (near-duplicates left unmerged)."
    )


def _hidden(r: ConflictsOut) -> str:
    return f"{r.hidden_overlaps} open overlap(s) (similar bullets, not opposed) not listed: `--all` lists them."


def conflicts_text(r: ConflictsOut, width: int = 100) -> str:
    if not r.conflicts:
        return f"No open contradictions; {_hidden(r)}" if r.hidden_overlaps else "No open conflicts."
    lines = []
    for c in r.conflicts:
        kind = _c(c.kind, "31" if c.kind == "contradiction" else "33")
        lines.append(f"{_c(c.id, '36')}  {kind}  similarity {c.similarity:.2f}  {c.scope}")
        lines.append(f"  a [{c.a.id}] {_clip(c.a.content, width)}")
        lines.append(f"  b [{c.b.id}] {_clip(c.b.content, width)}")
        if c.evidence:
            lines.append(f"  evidence: {'; '.join(c.evidence)}")
        lines.append(f"  recommended: keep {c.recommended} ({c.reason})")
    if r.hidden_overlaps:
        lines.append(_hidden(r))
    return "\n".join(lines)


def forget_text(r: ForgetOut) -> str:
    lines = []
    if r.archived:
        lines.append(f"Archived {len(r.archived)}: {', '.join(r.archived)}")
    if r.purged:
        lines.append(f"Erased {len(r.purged)}: {', '.join(r.purged)}")
    if r.would_forget:
        lines.append(f"Would forget {len(r.would_forget)} (confirm to apply): {', '.join(r.would_forget)}")
    if r.not_found:
        lines.append(f"Not found: {', '.join(r.not_found)}")
    return "\n".join(lines) or "Nothing matched."


def _counts(title: str, counts: dict[str, int]) -> list[str]:
    rows = [f"{title}:"]
    width = max((len(k) for k in counts), default=0)
    rows.extend(f"  {k.ljust(width)}  {v:>7}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return rows if counts else [f"{title}: none"]


def stats_text(s: StatsOut) -> str:
    lines = [
        _c(f"bullets: {s.total} ({s.active} active, {s.archived} archived); open conflicts: {s.open_conflicts}", "1"),
        f"model: {s.model} — {s.model_note}",
        f"data folder: {s.home} ({s.store_bytes / 1_048_576:.1f} MiB)",
    ]
    lines += _counts("by scope", s.by_scope) + _counts("by section", s.by_section) + _counts("by type", s.by_type)
    if s.decay_histogram:
        lines.append("decay (active bullets by weight on the forgetting curve):")
        top = max(s.decay_histogram.values()) or 1
        width = max(len(k) for k in s.decay_histogram)
        for band, count in s.decay_histogram.items():
            bar = "#" * round(30 * count / top)
            lines.append(f"  {band.ljust(width)}  {count:>7}  {_c(bar, '32' if band != '<0.02 (gc)' else '33')}")
    if s.injections:
        lines += _counts("context injections", s.injections)
    return "\n".join(lines)


def show_text(b: BulletOut) -> str:
    weight = "" if b.decay_weight is None else f", decay weight {b.decay_weight:.2f}"
    rows = [
        _c(b.id, "1;36") + f"  {b.status}  {b.scope}",
        b.content,
        f"{b.section}/{b.knowledge_type}, score {b.instructivity_score:.0f}, confidence {b.confidence:.2f}, "
        f"source {b.source}",
        f"created {b.created_at}, updated {b.updated_at}" + (f", from {b.origin}" if b.origin else ""),
        f"recalled {b.recall_count} time(s)" + (f", last {b.last_recalled_at}" if b.last_recalled_at else "") + weight,
    ]
    for name, values in (("tools", b.tools), ("entities", b.entities), ("tags", b.tags)):
        if values:
            rows.append(f"{name}: {', '.join(values)}")
    return "\n".join(rows)


def reflect_text(r: ReflectOut, width: int = 110) -> str:
    what = "would keep" if r.dry_run else "kept"
    lines = [
        f"{r.mode} mode: {r.steps} steps (from step {r.start_step}), {r.candidates} candidate(s), {what} "
        f"{len(r.bullets)}, dropped {len(r.dropped)}"
        + ("" if r.dry_run else f"; {r.added} added, {r.merged} merged")
        + f" → {r.scope}"
    ]
    if r.llm_calls:
        lines.append(
            f"LLM: {r.llm_calls} call(s), {r.llm_input_tokens} in / {r.llm_output_tokens} out tokens, "
            f"{r.fallbacks} fallback(s) to rules"
        )
    for b in r.bullets:
        tail = f" [{b.action} {b.id}]" if b.action else ""
        lines.append(f"+ {b.section}/{b.knowledge_type} {b.score:.0f} {b.rule} step {b.step}{tail}")
        lines.append(f"  {_clip(b.content, width)}")
    for d in r.dropped:
        lines.append(f"- dropped {d.rule} step {d.step}: {d.reason}")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def list_text(r: ListOut, width: int = 100) -> str:
    if not r.bullets:
        return "No bullets."
    return "\n".join(
        f"{_c(b.id, '36')}  {b.created_at[:10]}  {b.section}/{b.knowledge_type}  {b.scope}"
        + ("" if b.decay_weight is None else f"  {_c(f'{b.decay_weight:.2f}', '2')}")
        + f"  {_clip(b.content, width)}"
        for b in r.bullets
    )


def check_line(status: str, name: str, detail: str, fix: str) -> str:
    mark = _c(status.ljust(4), {"OK": "32", "WARN": "33", "FAIL": "1;31"}.get(status, "0"))
    return f"{mark}  {name.ljust(11)} {detail}" + (f"\n      fix: {fix}" if fix else "")


def repair_text(out: dict[str, Any]) -> str:
    """What ``memx repair`` did, in sentences (``out`` is its ``--json`` answer)."""
    lines = [f"Backed up the store to {out['backup']}."]
    lines += [f"Found: {p}." for p in out["problems"]] or ["Found no damage; rebuilt it anyway."]
    lines.append(f"Recovered {out['bullets_recovered']} bullet(s) and {out['conflicts_recovered']} conflict record(s).")
    if out["bullets_lost"] or out["conflicts_lost"]:
        lines.append(
            f"Lost {out['bullets_lost']} bullet(s) and {out['conflicts_lost']} conflict record(s): their data files "
            "are missing or cut short (the backup keeps whatever was there)."
        )
    if out["bullets_unreadable"]:
        lines.append("The bullets table could not be read at all; its files are kept in the backup.")
    return "\n".join([*lines, *out["notes"]])


def pending_text(p: PendingOut, index: int = 0, total: int = 0) -> str:
    """One bullet waiting for review, the way a reviewer reads it: what it says, who said it, why it
    waits, and the transcript's words (indented: quoted, not memx's own)."""
    b = p.bullet
    head = f"[{index}/{total}] " if total else ""
    lines = [
        _c(f"{head}{b.id}", "1") + f"  {b.scope} · {b.section}/{b.knowledge_type} · {p.said_by}",
        "  " + b.content.replace("\n", "\n  "),
        _c("  from: ", "2") + (p.voice or "not known") + (f" · {b.origin}" if b.origin else ""),
    ]
    lines += [_c("  held: ", "33") + r for r in p.reasons]
    if p.excerpt:
        lines.append(_c("  transcript (quoted, masked):", "2"))
        lines += ["    │ " + row for row in p.excerpt.splitlines()]
    return "\n".join(lines)


def review_text(r: ReviewOut) -> str:
    if r.action != "list":
        done = {"approve": "Approved", "edit": "Edited and approved", "reject": "Rejected"}[r.action]
        head = f"{done} {r.id}"
        if r.result is not None and r.result.action == "merged":
            head += f": merged into the active {r.result.merged_into}"
        elif r.result is not None and r.result.conflicts:
            head += f", with {len(r.result.conflicts)} possible conflict(s) (`memx conflicts`)"
        return "\n".join([head, *r.notes])
    if not r.pending:
        return "Nothing waits for review."
    body = [pending_text(p, i + 1, len(r.pending)) for i, p in enumerate(r.pending)]
    head = f"{len(r.pending)} learned bullet(s) wait for review (transcript excerpts are quoted, not instructions):"
    return "\n\n".join([head, *body])
