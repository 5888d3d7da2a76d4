"""Hybrid mode: the rules find the events; a model keeps or drops their drafts (``review``) or, with
``writes``, writes each event's bullets itself from the whole episode (``write``), checked against it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from ..classify import instructivity
from ..rules.distiller import RULE_CLASSES, distill
from ..rules.structural import Candidate
from ..transcripts.transcript import Transcript
from .episode_writer import check_written
from .keeper import Keeper
from .report import Dropped, Progress, ReflectReport
from .verdicts import Verdict


class HybridReading(Keeper):
    name = "hybrid"

    def read(
        self,
        t: Transcript,
        start: int,
        candidates: list[Candidate],
        report: ReflectReport,
        known: Sequence[str],
        progress: Progress | None,
    ) -> None:
        by_event: dict[int, list[Candidate]] = defaultdict(list)
        for c in candidates:
            by_event[c.step].append(c)
        report.events = len(by_event)
        writer = self._writer()
        for n, (step, group) in enumerate(sorted(by_event.items()), 1):
            if writer is not None:
                self._write(writer, t, step, group, report)
            else:
                verdicts = self._review(t, step, group, report)
                for i, c in enumerate(group):
                    self._keep(c, verdicts.get(i) if verdicts is not None else None, verdicts is not None, report)
            if progress:
                progress(n, len(by_event))

    def _review(
        self, t: Transcript, step: int, group: list[Candidate], report: ReflectReport
    ) -> dict[int, Verdict] | None:
        assert self.refiner is not None
        texts = [self.sanitizer.mask(distill(c)) for c in group]
        # the whole episode (failure → actions → success), so the LLM writes from what happened
        episode = "\n---\n".join(dict.fromkeys(c.context for c in group if c.context))
        verdicts = self.refiner.review(self._excerpt(t, step, episode), texts)
        if verdicts is None:
            report.fallbacks += 1
            return None
        return {v.index: v for v in verdicts if 0 <= v.index < len(group)}

    def _writer(self) -> Callable[[str, Sequence[str]], list[Verdict] | None] | None:
        return self.refiner.write if self.writes and self.refiner is not None else None

    def _write(
        self,
        writer: Callable[[str, Sequence[str]], list[Verdict] | None],
        t: Transcript,
        step: int,
        group: list[Candidate],
        report: ReflectReport,
    ) -> None:
        """The LLM writes this event's bullets from the whole sanitized episode, the rules' drafts as hints;
        each bullet it returns is masked again and checked against the episode. All rejected: the drafts
        stand (with a note); nothing kept by the LLM: the drafts are dropped with that reason."""
        drafts = [self.sanitizer.mask(distill(c)) for c in group]
        episode = self._excerpt(t, step, "\n---\n".join(dict.fromkeys(c.context for c in group if c.context)))
        verdicts = writer(episode, drafts)
        if verdicts is None:
            report.fallbacks += 1
            for c in group:
                self._keep(c, None, False, report)
            return
        written = rejected = 0
        for v in verdicts:
            if not v.keep or not v.bullet:
                continue
            raw = " ".join(v.bullet.split())
            content = self.sanitizer.mask(raw)
            reason = check_written(content, episode)
            if reason:
                rejected += 1
                report.dropped.append(Dropped("hybrid-written", step, content[:400], f"LLM bullet rejected: {reason}"))
                report.notes.append(f"step {step}: the LLM's bullet was rejected ({reason})")
                continue
            if content != raw:
                report.notes.append(f"step {step}: the sanitizer masked part of the LLM's bullet")
            c = group[v.index] if 0 <= v.index < len(group) else group[0]
            section, ktype = RULE_CLASSES.get(c.rule, (None, None))
            score = round((instructivity(content, c.confidence).score + v.score) / 2, 1)
            section, ktype = v.section or section, v.knowledge_type or ktype
            self._add(report, content, c.rule, step, c.turn, score, c.confidence, "hybrid-written", section, ktype)
            written += 1
        if written:
            return
        if rejected:
            report.notes.append(f"step {step}: every bullet the LLM wrote was rejected; the rules' drafts were kept")
            for c in group:
                self._keep(c, None, False, report)
            return
        for c, draft in zip(group, drafts, strict=True):
            report.dropped.append(Dropped(c.rule, c.step, draft, "LLM: not worth keeping"))
