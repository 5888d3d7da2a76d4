"""LLM mode: a model reads each event (a person's message or a tool's result) in a short excerpt and names
what is worth keeping (``extract``); each bullet stands only on the excerpt's own words; at the end one call
checks the session's bullets against what happened later (``check``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..rules.structural import Candidate, _context
from ..transcripts.transcript import Transcript
from .episode_writer import check_written
from .keeper import Keeper
from .report import Dropped, Progress, ReflectReport
from .verdicts import Verdict

CHECK_LIMIT = 8000  # characters of what happened after a session's first llm bullet, sent to check them all
CHECK_BATCH = 50  # bullets per check call


class LlmReading(Keeper):
    name = "llm"

    def read(
        self,
        t: Transcript,
        start: int,
        candidates: list[Candidate],
        report: ReflectReport,
        known: Sequence[str],
        progress: Progress | None,
    ) -> None:
        assert self.refiner is not None
        events = [s.index for s in t.steps[start:] if s.role in ("user", "tool")]
        report.events = len(events)
        by_step: dict[int, list[Candidate]] = defaultdict(list)
        for c in candidates:
            by_step[c.step].append(c)
        for n, step in enumerate(events, 1):
            excerpt = self._excerpt(t, step)
            verdicts = self.refiner.extract(excerpt)
            if verdicts is None:  # fall back to the rules' view of this event
                report.fallbacks += 1
                for c in by_step.get(step, []):
                    self._keep(c, None, False, report)
            else:
                turn = t.steps[step].turn
                for v in verdicts:
                    if v.keep and v.bullet:
                        self._accept_llm(v, step, turn, excerpt, report)
            if progress:
                progress(n, len(events))
        self._check_at_end(t, report)

    def _check_at_end(self, t: Transcript, report: ReflectReport) -> None:
        """The session's llm bullets, each once, against what happened after the first of them to the end:
        a bullet a later step overturned (or a guess told as a fact) is dropped with the model's reason.
        A failed call keeps the bullets, with a note."""
        assert self.refiner is not None
        check = self.refiner.check
        own = [b for b in report.bullets if b.source == "llm"]
        if not own:
            return
        step_of: dict[str, int] = {}
        for b in own:
            step_of.setdefault(b.content, b.step)
        later = self.sanitizer.mask(_context(t.steps, min(step_of.values()), len(t.steps) - 1, limit=CHECK_LIMIT))
        texts = list(step_of)
        overturned: dict[str, str] = {}
        for at in range(0, len(texts), CHECK_BATCH):
            chunk = texts[at : at + CHECK_BATCH]
            verdicts = check(later, [(step_of[c], c) for c in chunk])
            if verdicts is None:
                report.notes.append(f"{len(chunk)} bullet(s) kept unchecked: the end-of-session check failed")
                continue
            for i, text in enumerate(chunk):
                keep, why = verdicts.get(i, (True, ""))
                if not keep:
                    overturned[text] = why
        for b in report.bullets:
            if b.source == "llm" and b.content in overturned:
                why = overturned[b.content]
                report.dropped.append(Dropped("llm", b.step, b.content, f"LLM: does not hold at the end ({why[:200]})"))
        report.bullets = [b for b in report.bullets if not (b.source == "llm" and b.content in overturned)]

    def _accept_llm(self, v: Verdict, step: int, turn: int, excerpt: str, report: ReflectReport) -> None:
        """An extracted bullet, masked again, kept only when it stands on the excerpt's own words (the
        checks of a bullet hybrid mode's LLM writes), whole: a bullet over the limit is refused, not cut."""
        content = self.sanitizer.mask(" ".join(v.bullet.split()))
        reason = check_written(content, excerpt)
        if reason:
            report.dropped.append(Dropped("llm", step, content[:400], f"LLM bullet rejected: {reason}"))
            report.notes.append(f"step {step}: the LLM's bullet was rejected ({reason})")
            return
        self._add(report, content, "llm", step, turn, round(v.score, 1), 0.7, "llm", v.section, v.knowledge_type)
