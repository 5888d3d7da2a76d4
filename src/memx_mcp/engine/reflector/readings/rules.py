"""Rules mode: the rules alone, the quiet floor; nothing is sent anywhere."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..rules.structural import Candidate
from ..transcripts.transcript import Transcript
from .keeper import Keeper
from .report import Progress, ReflectReport


class RulesReading(Keeper):
    name = "rules"

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
        for c in self._floor(candidates, report):
            by_event[c.step].append(c)
        report.events = len(by_event)
        for n, (_step, group) in enumerate(sorted(by_event.items()), 1):
            for c in group:
                self._keep(c, None, False, report)
            if progress:
                progress(n, len(by_event))
