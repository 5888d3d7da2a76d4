"""What every reading shares: the keeper, which decides what of a reading is kept (the rules' floor, the
score threshold, masking on the way out) and reports each drop with its reason; and the masking of a step
before a model sees it.

Privacy first: every text that leaves for a model and every bullet that comes out is sanitized, and a
candidate that cannot be processed is dropped with its reason, never stored raw."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ....domain.models import KnowledgeType, Section
from ....privacy import PrivacySanitizer
from ..classify import classify, extract_metadata, instructivity
from ..rules.distiller import RULE_CLASSES, distill
from ..rules.structural import Candidate, _context
from ..transcripts.transcript import Step, Transcript
from .model import Refiner
from .report import Distilled, Dropped, Progress, ReflectReport
from .verdicts import Verdict

log = logging.getLogger(__name__)
EVENT_RADIUS = 2  # steps either side of an event sent as its excerpt
_SAME_AFTER_MASKING = re.compile(r"\bfrom (\S+) to \1(?=[\s;.,)]|$)")


NEEDS_A_MODEL = frozenset({"ConventionRule"})  # candidates the rules' floor leaves to a model
# What the strict floor keeps (candidate keys): environment fixes (sudo, a missing program, no pip, a sandbox)
# and the user's stated preferences, the two kinds every labelled held-out set judged right (benchmarks/RESULTS.md,
# issue 27: on heldout6 the rules' other bullets were 3 of 42 worth keeping and 10 false)
FLOOR_KEEPS = ("ErrorFixRule:env:", "PreferenceRule:")


def mask_step(sanitizer: PrivacySanitizer, s: Step) -> Step:
    """The step with every string in it masked (what the user or the assistant wrote, thinking included,
    the tool's input however deeply nested, its output): what a model could see and a lesson could quote."""
    return replace(
        s, text=sanitizer.mask(s.text), result=sanitizer.mask(s.result), tool_input=sanitizer.mask_value(s.tool_input)
    )


def seen_by_a_model(sanitizer: PrivacySanitizer, t: Transcript) -> tuple[PrivacySanitizer, Transcript]:
    """The one way into every prompt: the transcript with every step masked, and the sanitizer that also
    knows each secret found in the steps' structured inputs (masked wherever else the session repeats it)."""
    learned = sanitizer.learning("", [s.tool_input for s in t.steps if s.tool_input])
    return learned, replace(t, steps=tuple(mask_step(learned, s) for s in t.steps))


@dataclass(frozen=True)
class HowToRead:
    """What every reading mode is told, whichever it is: the score under which a bullet is dropped, whether
    hybrid's model writes the bullets, the most of a session one call reads, and the rules' floor."""

    min_score: float = 30.0
    writes: bool = False
    window_chars: int = 40_000
    floor: str = "all"


class Keeper:
    """The base of every reading mode (``readings/registry.py`` lists them): what it was given, and how a
    candidate or a model's bullet is kept or dropped. A mode implements ``read``."""

    name = ""

    def __init__(self, sanitizer: PrivacySanitizer, refiner: Refiner | None, how: HowToRead) -> None:
        self.sanitizer = sanitizer
        self.refiner = refiner
        self.min_score = how.min_score
        self.writes = how.writes  # hybrid: the LLM writes the bullets from the whole episode (drafts as hints)
        self.window_chars = how.window_chars  # session mode: the most of the condensed session one call reads
        self.floor = how.floor  # what the rules keep without a model: "all", or "strict" (FLOOR_KEEPS only)

    def read(
        self,
        t: Transcript,
        start: int,
        candidates: list[Candidate],
        report: ReflectReport,
        known: Sequence[str],
        progress: Progress | None,
    ) -> None:  # pragma: no cover - each mode implements it
        """Read ``t`` from step ``start`` into ``report``: its bullets, its drops and its figures. ``candidates``
        are the rules' (every mode may fall back to them); ``known``: what the store holds for the target
        scope."""
        raise NotImplementedError

    def _excerpt(self, t: Transcript, step: int, fallback: str = "") -> str:
        return self.sanitizer.mask(fallback or _context(t.steps, step - EVENT_RADIUS, step + EVENT_RADIUS))

    def _add(
        self,
        report: ReflectReport,
        content: str,
        rule: str,
        step: int,
        turn: int,
        score: float,
        confidence: float,
        source: str,
        section: Section | None,
        ktype: KnowledgeType | None,
        evidence: tuple[int, ...] = (),
    ) -> None:
        """Keep a sanitized bullet, or drop it with the reason when its score is under min_score."""
        if score < self.min_score:
            report.dropped.append(Dropped(rule, step, content, f"score {score:.0f} < min_score {self.min_score:.0f}"))
            return
        cls = classify(content)
        meta = extract_metadata(content)
        report.bullets.append(
            Distilled(
                content,
                section or cls.section,
                ktype or cls.knowledge_type,
                score,
                confidence,
                source,
                rule,
                step,
                turn,
                meta.tools,
                meta.entities,
                meta.tags,
                evidence,
            )
        )

    # -- scoring and keeping --------------------------------------------------------------------------

    def keep_rules(self, candidates: Sequence[Candidate], report: ReflectReport) -> None:
        """The rules' view of part of a session, where the model could not be asked."""
        for c in self._floor(candidates, report):
            self._keep(c, None, False, report)

    def _floor(self, candidates: Sequence[Candidate], report: ReflectReport) -> list[Candidate]:
        """What the rules keep on their own. A convention read from the user's words in passing is kept only
        where a model reads it in context (1 of 5 such bullets worth keeping on the labelled sets); with the
        strict floor, only what held up on every labelled held-out set (``FLOOR_KEEPS``)."""
        kept = []
        for c in candidates:
            if c.rule in NEEDS_A_MODEL:
                report.dropped.append(Dropped(c.rule, c.step, "", "the rules alone do not keep a convention"))
            elif self.floor == "strict" and not c.key.startswith(FLOOR_KEEPS):
                report.dropped.append(Dropped(c.rule, c.step, "", "left for a model: the rules' strict floor"))
            else:
                kept.append(c)
        return kept

    def _keep(self, c: Candidate, verdict: Verdict | None, reviewed: bool, report: ReflectReport) -> None:
        try:
            content = self.sanitizer.mask(distill(c))
            if c.rule == "ConfigChangeRule" and _SAME_AFTER_MASKING.search(content):
                # "PAI_DIR from /Users/[…]/.claude to /Users/[…]/.claude": the change was in what got masked
                report.dropped.append(Dropped(c.rule, c.step, content, "from and to read the same once masked"))
                return
            if reviewed and verdict is None:
                report.dropped.append(Dropped(c.rule, c.step, content, "LLM gave no verdict"))
                return
            if verdict is not None and not verdict.keep:
                report.dropped.append(Dropped(c.rule, c.step, content, "LLM: not worth keeping"))
                return
            rule_score = instructivity(content, c.confidence).score
            score, source = rule_score, c.rule
            section, ktype = RULE_CLASSES.get(c.rule, (None, None))
            if verdict is not None:
                if verdict.bullet:
                    content = self.sanitizer.mask(" ".join(verdict.bullet.split()))[:400]
                score, source = round((rule_score + verdict.score) / 2, 1), "hybrid"
                section, ktype = verdict.section or section, verdict.knowledge_type or ktype
            self._add(report, content, c.rule, c.step, c.turn, score, c.confidence, source, section, ktype)
        except Exception as exc:  # never store what could not be processed (and sanitized)
            log.warning("candidate dropped: %s", type(exc).__name__)
            report.dropped.append(Dropped(c.rule, c.step, "", f"could not be processed: {type(exc).__name__}"))
