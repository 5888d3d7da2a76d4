"""The Reflector pipeline (SPEC §4): parse → detect → a reading → keep → distilled.

The rules find the candidates of every session; the reading mode (``readings/registry.py``) decides what is
read and by whom, and its keeper what is kept. Without a model, a mode that needs one is read by the rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...privacy import PrivacySanitizer
from .backing import backing
from .quarantine import held
from .readings import registry
from .readings.keeper import HowToRead, seen_by_a_model
from .readings.model import Refiner
from .readings.report import Distilled, Progress, ReflectReport
from .rules.detect import detect
from .transcripts.transcript import Transcript
from .voices import provenance, said_by_user, session_words


def _stamped(bullets: list[Distilled], t: Transcript) -> list[Distilled]:
    """Every bullet with who said its words (from the transcript, never from a model) and why it must wait
    for review, if it must: the one place every mode's bullets pass (issue 31, point 1)."""
    if not bullets:
        return bullets
    words = session_words(t.steps)
    backed = backing(t.steps, written=words.action)
    out = []
    for b in bullets:
        origin = provenance(b.content, words, said_by_user(t.steps, b.evidence or (b.step,)))
        out.append(replace(b, voice=origin.voice, held=held(b.content, origin, backed)))
    return out


def verified_by(t: Transcript, texts: Sequence[str]) -> list[bool]:
    """For each lesson in ``texts``, whether session ``t`` would keep it without review: what it advises ran
    there successfully by the assistant's own choice (or the user typed it), and nothing else holds it (no
    content's advice, no risk). A bullet held only because its own session never ran its advice is released
    by such a session (``usecases.reflect``)."""
    if not texts:
        return []
    words = session_words(t.steps)
    backed = backing(t.steps, written=words.action)
    return [held(text, provenance(text, words), backed) == () for text in texts]


class Reflector:
    def __init__(
        self,
        sanitizer: PrivacySanitizer,
        mode: str = "hybrid",
        refiner: Refiner | None = None,
        min_score: float = 30.0,
        writes: bool = False,
        window_chars: int = 40_000,
        floor: str = "all",
    ) -> None:
        self.sanitizer = sanitizer
        self.mode = mode
        self.refiner = refiner
        self.how = HowToRead(min_score, writes, window_chars, floor)

    def reflect(
        self, t: Transcript, start_step: int = 0, progress: Progress | None = None, known: Sequence[str] = ()
    ) -> ReflectReport:
        """``known``: what the store already holds for the target scope (session mode weighs its lessons
        against it)."""
        reading = registry.mode(self.mode)
        if reading.needs_model and self.refiner is None:
            reading = registry.mode(registry.WITHOUT_A_MODEL)
        report = ReflectReport(mode=reading.name, steps=len(t.steps))
        # a model reads nothing but the masked transcript, through a sanitizer that learned the session's
        # secrets; the rules mask each bullet as it is kept
        sanitizer, seen = (self.sanitizer, t) if not reading.needs_model else seen_by_a_model(self.sanitizer, t)
        candidates = detect(seen, start_step)
        report.candidates = len(candidates)
        keeper = reading.load()(sanitizer, self.refiner, self.how)
        keeper.read(seen, start_step, candidates, report, known, progress)
        report.bullets = _stamped(report.bullets, t)
        self._count_llm(report)
        return report

    def _count_llm(self, report: ReflectReport) -> None:
        if self.refiner is not None:
            report.llm_calls = self.refiner.calls
            report.llm_input_tokens = self.refiner.input_tokens
            report.llm_output_tokens = self.refiner.output_tokens
            report.llm_failures = self.refiner.failures
