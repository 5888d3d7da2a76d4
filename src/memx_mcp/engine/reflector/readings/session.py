"""Session mode: the whole session, condensed and masked, read by a model a window at a time; each lesson
kept only on its evidence (``session_reading.py``); then one call weighs the kept lessons against each other
and the store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ....domain.errors import RateLimited
from ..rules.structural import Candidate
from ..transcripts.transcript import Step, Transcript
from .condense import condense, max_windows_for
from .keeper import Keeper
from .report import Dropped, Progress, ReflectReport
from .session_reading import Lesson, changed_later, evidence_problem, later_changes, relocated

KNOWN_LIMIT = 60  # bullets of the target scope shown to the consolidation call
OPEN_LIMIT = 12  # lessons of earlier parts whose outcome was not shown, handed to the next part


def _first(lesson: Lesson, default: int) -> int:
    return lesson.steps[0] if lesson.steps else default


class SessionReading(Keeper):
    name = "session"

    def read(
        self,
        t: Transcript,
        start: int,
        candidates: list[Candidate],
        report: ReflectReport,
        known: Sequence[str],
        progress: Progress | None,
    ) -> None:
        """The whole session, condensed and masked, read a window at a time; each lesson kept only on its
        evidence; then one call weighs the kept lessons against each other and the store. A window whose
        call fails gets the rules' view of its steps; a rate limit leaves the whole session for later."""
        assert self.refiner is not None
        read = self.refiner.lessons
        masked = list(t.steps[start:])  # masked already (keeper.seen_by_a_model)
        by_index = {s.index: s for s in masked}
        raw = sum(len(x) for s in masked for x in s.texts)
        c = condense(masked, lambda x: x, self.window_chars, max_windows_for(raw))
        report.windows, report.events, report.condensed_chars = len(c.windows), len(c.windows), c.chars
        kept: list[Lesson] = []
        pending: list[Lesson] = []  # read with an outcome not shown yet: handed to the next part
        first = masked[0].index if masked else start
        for n, w in enumerate(c.windows, 1):
            try:
                lessons = read(w.text, n, len(c.windows), self._masked(pending[-OPEN_LIMIT:]))
            except RateLimited as exc:
                report.deferred, report.retry_after = str(exc) or "rate limited", exc.retry_after
                report.bullets.clear()
                return
            if lessons is None:
                report.fallbacks += 1
                self.keep_rules([x for x in candidates if w.first <= x.step <= w.last], report)
            pending = [p for p in pending if not any(set(p.steps) & set(x.steps) for x in lessons or ())]
            for answered in lessons or ():
                lesson = relocated(answered, by_index, first, w.last)
                why = evidence_problem(lesson, by_index, first, w.last)
                if not why:
                    kept.append(lesson)
                    continue
                if lesson.outcome in ("partial", "uncertain") and n < len(c.windows):
                    pending.append(lesson)
                report.dropped.append(Dropped("session", _first(lesson, w.first), lesson.text[:400], why))
            if progress:
                progress(n, len(c.windows))
        last = masked[-1].index if masked else start
        later = later_changes(kept, masked)
        for lesson in self._consolidated(kept, known, later, by_index, start, last, len(c.windows), report):
            why = changed_later(lesson, masked)  # what a later step of the whole session changed may not hold
            if why:
                report.dropped.append(Dropped("session", _first(lesson, start), lesson.text[:400], why))
                continue
            self._add_lesson(lesson, t, report)

    def _masked(self, lessons: Sequence[Lesson]) -> list[Lesson]:
        """A model's lessons as the next prompt shows them (the open lessons of the next part, the
        consolidation call): masked as any text; their evidence is checked on what the model wrote."""
        return [replace(x, text=self.sanitizer.mask(x.text)) for x in lessons]

    def _consolidated(
        self,
        kept: list[Lesson],
        known: Sequence[str],
        later: str,
        by_index: dict[int, Step],
        first: int,
        last: int,
        windows: int,
        report: ReflectReport,
    ) -> list[Lesson]:
        """The lessons after one call against each other and the store (skipped where one window saw the
        whole session, the store holds nothing and there is one lesson). A merged sentence must stand on the
        evidence of the lessons it merges, else the lesson stays as it was."""
        assert self.refiner is not None
        consolidate = self.refiner.consolidate
        if not kept or (windows == 1 and not known and len(kept) == 1 and not later):
            return kept
        shown = [self.sanitizer.mask(k) for k in list(known)[:KNOWN_LIMIT]]  # the store's bullets, as any text
        try:
            told = self._masked(kept)
            decisions = consolidate(told, shown, later) if later else consolidate(told, shown)
        except RateLimited:
            decisions = None
        if decisions is None:
            report.notes.append(f"{len(kept)} lesson(s) kept unconsolidated: the consolidation call failed")
            return kept
        out: list[Lesson] = []
        for d in decisions:
            lesson = kept[d.index]
            if not d.keep:
                report.dropped.append(
                    Dropped("session", _first(lesson, first), lesson.text[:400], f"LLM: {d.why[:200]}")
                )
                continue
            if d.text and (d.text != lesson.text or d.merged):
                parts = [lesson, *(kept[m] for m in d.merged)]
                joined = replace(
                    lesson,
                    text=d.text,
                    problem_steps=tuple(sorted({n for p in parts for n in p.steps})),
                    cites=tuple(dict.fromkeys(c for p in parts for c in p.cites)),
                )
                why = evidence_problem(joined, by_index, first, last)
                if not why:
                    out.append(joined)
                    continue
                report.notes.append(f"a consolidated lesson was refused ({why}); its first draft was kept")
            out.append(lesson)
        return out

    def _add_lesson(self, lesson: Lesson, t: Transcript, report: ReflectReport) -> None:
        content = self.sanitizer.mask(lesson.text)
        step = lesson.steps[0]
        turn = t.steps[step].turn if 0 <= step < len(t.steps) else 0
        self._add(
            report,
            content,
            "session",
            step,
            turn,
            round(lesson.score, 1),
            0.75,
            "llm",
            lesson.section,
            lesson.knowledge_type,
            lesson.steps,
        )
