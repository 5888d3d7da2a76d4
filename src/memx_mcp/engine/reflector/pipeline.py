"""The Reflector pipeline (SPEC §4): parse → detect → (LLM review) → score → sanitize → distill.

Privacy first: every text that leaves for the LLM and every bullet that comes out is sanitized, and a
candidate that cannot be processed is dropped with its reason, never stored raw."""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ...domain.models import KnowledgeType, Section
from .classify import classify, extract_metadata, instructivity
from .condense import condense, max_windows_for
from .detect import detect
from .distiller import RULE_CLASSES, distill
from .episode_writer import check_written
from .llm import RateLimited, Refiner, Verdict
from .rules import Candidate, _context
from .sanitizer import PrivacySanitizer
from .session_reading import Lesson, changed_later, evidence_problem, later_changes
from .transcript import Step, Transcript

log = logging.getLogger(__name__)
EVENT_RADIUS = 2  # steps either side of an event sent as its excerpt
CHECK_LIMIT = 8000  # characters of what happened after a session's first llm bullet, sent to check them all
CHECK_BATCH = 50  # bullets per check call
_SAME_AFTER_MASKING = re.compile(r"\bfrom (\S+) to \1(?=[\s;.,)]|$)")


@dataclass(frozen=True)
class Distilled:
    content: str
    section: Section
    knowledge_type: KnowledgeType
    score: float
    confidence: float
    source: str
    rule: str
    step: int
    turn: int
    tools: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    evidence: tuple[int, ...] = ()  # session mode: the steps that show the problem, the change, the success
    # Who said it, decided by memx from the transcript (never from a model's answer): "user" (the user's own
    # words), "assistant" (its actions and the results it observed) or "content" (a tool's output, a fetched
    # page, a file read). Empty: not known.
    voice: str = ""
    held: tuple[str, ...] = ()  # why it must wait for the user's review (quarantine); empty: it need not


@dataclass(frozen=True)
class Dropped:
    rule: str
    step: int
    text: str
    reason: str


@dataclass
class ReflectReport:
    mode: str
    steps: int = 0
    events: int = 0
    candidates: int = 0
    bullets: list[Distilled] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    llm_calls: int = 0
    llm_failures: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    fallbacks: int = 0
    windows: int = 0  # session mode: the parts of the condensed session the model read
    condensed_chars: int = 0
    deferred: str = ""  # why the session was left for later (a rate limit): nothing of it is kept
    retry_after: float = 0.0
    notes: list[str] = field(default_factory=list)


Progress = Callable[[int, int], None]


NEEDS_A_MODEL = frozenset({"ConventionRule"})  # candidates the rules' floor leaves to a model
# What the strict floor keeps (candidate keys): environment fixes (sudo, a missing program, no pip, a sandbox)
# and the user's stated preferences, the two kinds every labelled held-out set judged right (benchmarks/RESULTS.md,
# issue 27: on heldout6 the rules' other bullets were 3 of 42 worth keeping and 10 false)
FLOOR_KEEPS = ("ErrorFixRule:env:", "PreferenceRule:")
KNOWN_LIMIT = 60  # bullets of the target scope shown to the consolidation call
OPEN_LIMIT = 12  # lessons of earlier parts whose outcome was not shown, handed to the next part


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


def _first(lesson: Lesson, default: int) -> int:
    return lesson.steps[0] if lesson.steps else default


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
        self.min_score = min_score
        self.writes = writes  # hybrid: the LLM writes the bullets from the whole episode (drafts as hints)
        self.window_chars = window_chars  # session mode: the most of the condensed session one call reads
        self.floor = floor  # what the rules keep without a model: "all", or "strict" (FLOOR_KEEPS only)

    def reflect(
        self, t: Transcript, start_step: int = 0, progress: Progress | None = None, known: Sequence[str] = ()
    ) -> ReflectReport:
        """``known``: what the store already holds for the target scope (session mode weighs its lessons
        against it)."""
        mode = self.mode if self.refiner is not None else "rules"
        if mode == "rules":  # no model reads anything: each bullet is masked as it is kept
            return self._reflect(t, mode, start_step, progress, known)
        sanitizer = self.sanitizer
        self.sanitizer, seen = seen_by_a_model(sanitizer, t)
        try:
            return self._reflect(seen, mode, start_step, progress, known)
        finally:
            self.sanitizer = sanitizer

    def _reflect(
        self, t: Transcript, mode: str, start_step: int, progress: Progress | None, known: Sequence[str]
    ) -> ReflectReport:
        report = ReflectReport(mode=mode, steps=len(t.steps))
        candidates = detect(t, start_step)
        report.candidates = len(candidates)
        if mode == "llm":
            self._llm_mode(t, start_step, candidates, report, progress)
        elif mode == "session":
            self._session_mode(t, start_step, candidates, report, known, progress)
        else:
            by_event: dict[int, list[Candidate]] = defaultdict(list)
            for c in self._floor(candidates, report) if mode == "rules" else candidates:
                by_event[c.step].append(c)
            report.events = len(by_event)
            writer = self._writer() if mode == "hybrid" else None
            for n, (step, group) in enumerate(sorted(by_event.items()), 1):
                if writer is not None:
                    self._write(writer, t, step, group, report)
                else:
                    verdicts = self._review(t, step, group, report) if mode == "hybrid" else None
                    for i, c in enumerate(group):
                        self._keep(c, verdicts.get(i) if verdicts is not None else None, verdicts is not None, report)
                if progress:
                    progress(n, len(by_event))
        self._count_llm(report)
        return report

    # -- LLM paths ------------------------------------------------------------------------------------

    def _excerpt(self, t: Transcript, step: int, fallback: str = "") -> str:
        return self.sanitizer.mask(fallback or _context(t.steps, step - EVENT_RADIUS, step + EVENT_RADIUS))

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
        write = getattr(self.refiner, "write", None) if self.writes else None
        return write if callable(write) else None

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

    def _llm_mode(
        self, t: Transcript, start: int, candidates: list[Candidate], report: ReflectReport, progress: Progress | None
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

    def _session_mode(
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
        read = getattr(self.refiner, "lessons", None)
        if not callable(read):
            report.notes.append("this model cannot read whole sessions: the rules' view was kept")
            self.keep_rules(candidates, report)
            return
        masked = list(t.steps[start:])  # masked already (seen_by_a_model)
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
            for lesson in lessons or ():
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
        consolidate = getattr(self.refiner, "consolidate", None)
        if not kept or not callable(consolidate) or (windows == 1 and not known and len(kept) == 1 and not later):
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

    def _masked(self, lessons: Sequence[Lesson]) -> list[Lesson]:
        """A model's lessons as the next prompt shows them (the open lessons of the next part, the
        consolidation call): masked as any text; their evidence is checked on what the model wrote."""
        return [replace(x, text=self.sanitizer.mask(x.text)) for x in lessons]

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

    def _check_at_end(self, t: Transcript, report: ReflectReport) -> None:
        """The session's llm bullets, each once, against what happened after the first of them to the end:
        a bullet a later step overturned (or a guess told as a fact) is dropped with the model's reason.
        A failed call keeps the bullets, with a note."""
        check = getattr(self.refiner, "check", None)
        own = [b for b in report.bullets if b.source == "llm"]
        if not callable(check) or not own:
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

    def _count_llm(self, report: ReflectReport) -> None:
        if self.refiner is not None:
            report.llm_calls = self.refiner.calls
            report.llm_input_tokens = self.refiner.input_tokens
            report.llm_output_tokens = self.refiner.output_tokens
            report.llm_failures = getattr(self.refiner, "failures", 0)
