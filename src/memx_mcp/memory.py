"""Memory: the one facade that the MCP server, the CLI and the hooks call.

It wires Sanitizer → classification and score → Curator on writes, and the Generator plus Decay's
reinforcement on reads. Dependencies arrive ready-made from the composition root (``compose.py``)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from .adapters.lance.lance import LanceStore
from .config import Settings
from .domain.catalog import spec
from .domain.errors import EmbedderUnavailable, InvalidInputError, NotFoundError
from .domain.inputs import (
    MAX_CONTENT_CHARS,
    MAX_IDS,
    MAX_QUERY_CHARS,
    MAX_RESULTS_CAP,
    TOKEN_BUDGET_CAP,
    clamp,
    clean_text,
    mostly_cjk,
)
from .domain.models import (
    Bullet,
    Conflict,
    ConflictView,
    ForgetResult,
    KnowledgeType,
    RecallResult,
    RememberAction,
    RememberResult,
    Section,
    Stats,
    Status,
    new_id,
)
from .domain.scopes import Scope, detect_scope, parse_scope
from .engine import curator
from .engine.decay import DecayParams
from .engine.reflector import PrivacySanitizer
from .engine.retrieval import RecallRequest, RetrievalParams
from .engine.retrieval import recall as generate
from .engine.retrieval.fusion import FusionParams
from .engine.retrieval.generator import TermsCache
from .ports import EmbedderSource, EmbedKind, WriteTarget, embed
from .usecases.recalls import RecallRecorder
from .usecases.writes import Checked, Draft, WriteHow, check

log = logging.getLogger(__name__)


def utcnow() -> datetime:
    return datetime.now(UTC)


def curator_params(settings: Settings, cjk: bool) -> curator.CuratorParams:
    """The model's calibrated thresholds for the script (or the user's, where set)."""
    t = settings.curator_thresholds(cjk)
    return curator.CuratorParams(
        merge_threshold=t.merge_threshold,
        conflict_threshold=t.conflict_threshold,
        strategy="merge_content" if settings.merge_strategy == "merge_content" else "keep_best",
        merge_certain=t.merge_certain,
        merge_min_overlap=t.merge_min_overlap,
    )


class Memory:
    def __init__(
        self,
        settings: Settings,
        store: LanceStore,
        embedder: EmbedderSource,
        *,
        clock: Callable[[], datetime] = utcnow,
        cwd: Path | None = None,
        sanitizer: PrivacySanitizer | None = None,
        defer_reinforcement: bool = False,
    ) -> None:
        """``defer_reinforcement``: recall answers first and records its recalls in batches on a background
        thread (the long-running server does this; ``flush`` writes what is pending)."""
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.cwd = cwd or Path.cwd()
        self.sanitizer = sanitizer or PrivacySanitizer(settings.user_patterns)
        self._current: Scope | None = None
        self.cwd_from_client = False  # the folder came from the MCP client's roots
        self._terms: TermsCache = {}  # bullet id → (hash of its text and metadata, its term profile)
        self._recorder = RecallRecorder(self._reinforce) if defer_reinforcement else None
        self._pool: ThreadPoolExecutor | None = None
        self.curator_params, self.curator_params_cjk = (curator_params(settings, cjk) for cjk in (False, True))
        self.decay_params = DecayParams(
            half_life_days=settings.half_life_days,
            boost_factor=settings.boost_factor,
            permanent_recalls=settings.permanent_recalls,
            protect_days=settings.protect_days,
            archive_below=settings.archive_below,
        )
        self.retrieval_params = RetrievalParams(
            fusion=FusionParams(
                keyword_weight=settings.keyword_weight,
                semantic_weight=settings.semantic_weight,
                recency_boost=settings.recency_boost,
                recency_days=settings.recency_days,
                scope_boost=settings.scope_boost,
                project_scope_boost=settings.project_scope_boost,
            ),
            decay=self.decay_params,
            candidate_limit=settings.candidate_limit,
            min_relevance=settings.min_relevance,
        )

    # -- scopes ---------------------------------------------------------------------------------------

    def current_scope(self) -> Scope:
        """From configuration, else the client's roots or working directory (its git repository), else
        global. ``scope_reason`` says which."""
        if self._current is None:
            detected = detect_scope(self.cwd)
            self._current = parse_scope(self.settings.scope, detected) if self.settings.scope else detected
        return self._current

    def scope_reason(self, given: str | None = None, *, writing: bool = False) -> str:
        """Why the current scope is what it is, in words a user can act on; ``given``: the scope a caller
        named; ``writing``: for a new bullet, which goes to the current scope's project unless told."""
        if given and given.strip():
            return f"{self.resolve_scope(given)}: named by the caller"
        if writing and self.current_scope().project_scope() != self.current_scope():
            return f"{self.current_scope().project_scope()}: new bullets go to the project; {self.scope_reason()}"
        scope = self.current_scope()
        if self.settings.scope:
            return f"{scope}: from the configuration (MEMX_SCOPE={self.settings.scope})"
        where = "the client's workspace root" if self.cwd_from_client else "the working directory"
        if scope.is_global:
            return f"global: {where} {self.cwd} is not inside a git repository"
        return f"{scope}: from the git repository at {where} {self.cwd}"

    def set_cwd(self, cwd: Path, *, from_client: bool = False) -> None:
        """Work for another folder from now on (the hook helper serves many projects; an MCP client may
        name its workspace with roots)."""
        if cwd != self.cwd:
            self.cwd, self._current = cwd, None
        self.cwd_from_client = from_client

    def resolve_scope(self, scope: str | None) -> Scope:
        current = self.current_scope()
        return parse_scope(scope, current) if scope and scope.strip() else current

    # -- embedding ------------------------------------------------------------------------------------

    def _embedding_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memx-embed")
        return self._pool

    def embed_texts(
        self, texts: Sequence[str], kind: EmbedKind = "passage"
    ) -> tuple[list[tuple[float, ...]] | None, str]:
        """Vectors for ``texts`` as stored text (``passage``) or as a recall's question (``query``); None
        when the model is unavailable or is not the one whose vectors the store holds, and a note why."""
        embedder = self.embedder.get(self.settings.model_wait_seconds)
        if embedder is None:
            return None, self.embedder.note
        if embedder.name != self.store.vectors_model:  # another model's vectors compare as noise
            return None, (
                f"the store holds vectors of {self.store.vectors_model}, the model loaded is {embedder.name}: "
                "keyword-only until `memx reindex`"
            )
        try:
            return embed(embedder, texts, kind), ""
        except Exception as exc:  # the model failing at run time degrades, never breaks, the call
            log.warning("embedding failed: %s", exc)
            return None, f"embedding failed, keyword-only: {type(exc).__name__}"

    # -- remember -------------------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        scope: str | None = None,
        tags: Sequence[str] = (),
        source: str = "manual",
        confidence: float = 1.0,
        origin: str = "",
        section: Section | None = None,
        knowledge_type: KnowledgeType | None = None,
    ) -> RememberResult:
        """Sanitize, classify and score one bullet, then let the Curator insert or merge it. An explicit
        remember is stored whatever its score. New bullets go to the project scope unless told."""
        target = self.resolve_scope(scope) if scope and scope.strip() else self.current_scope().project_scope()
        draft = Draft(text, None, source, confidence, origin, tags, section=section, knowledge_type=knowledge_type)
        done = next(r for r in self.write([self.check(draft, target)]) if r)
        return dataclasses.replace(done, scope_why=self.scope_reason(scope, writing=True))

    # -- the one write path ---------------------------------------------------------------------------

    def check(self, draft: Draft, scope: Scope | None = None) -> Checked:
        """Validate, clean and mask what a door sends (``writes.check``); ``scope``: the default scope."""
        target = scope or self.current_scope().project_scope()
        return check(draft, sanitizer=self.sanitizer, dim=self.store.dim, now=self.clock(), scope=target)

    def write(
        self, checked: Sequence[Checked], *, how: WriteHow = "curate", then: Callable[[], None] | None = None
    ) -> list[RememberResult | None]:
        """Store checked bullets under the store's write lock, embedded first (outside it, in one call) when
        they carry no vector: ``curate`` through the Curator (insert, merge, conflicts), in order, each
        against the store and the bullets written before it; ``restore`` as they are unless their id is
        already stored (None for those); ``replace`` over the stored bullet of the same id. ``then`` runs
        under the same lock, after the writes (a reflect records its progress).

        Several bullets with vectors are curated against a batch staged in memory and stored in one commit
        (``store/staged.py``), with the same decisions as one write each; ``curate_each`` stores each as it
        is decided (the way before batching, kept as the reference the batch is tested against)."""
        bullets = [c.bullet for c in checked]
        missing = [i for i, b in enumerate(bullets) if b.vector is None]
        vectors, note = self.embed_texts([bullets[i].content for i in missing]) if missing else (None, "")
        notes = (note,) if note else ()
        if missing:
            for i, v in zip(missing, vectors or (), strict=False):
                bullets[i] = bullets[i].with_changes(vector=v)
        with self.store.write_lock():
            if how in ("curate", "curate_each"):
                done: list[RememberResult | None] = list(self._curate_all(bullets, notes, how == "curate"))
            elif how == "replace":
                self.store.upsert(bullets)
                done = [RememberResult("inserted", b, notes=notes) for b in bullets]
            else:
                stored = {b.id for b in self.store.get([b.id for b in bullets])}
                first = {b.id: i for i, b in reversed(list(enumerate(bullets))) if b.id not in stored}
                self.store.add([bullets[i] for i in sorted(first.values())])
                done = [RememberResult("inserted", b) if first.get(b.id) == i else None for i, b in enumerate(bullets)]
            if then is not None:
                then()
        return done

    def _curate_all(self, bullets: Sequence[Bullet], notes: tuple[str, ...], batch: bool) -> list[RememberResult]:
        """Under the write lock. A batch needs every vector: keyword-only duplicates are found by a query
        on the table, one write at a time."""
        if not (batch and len(bullets) > 1 and all(b.vector is not None for b in bullets)):
            return [self._curate(b, self.clock(), notes, self.store) for b in bullets]
        staged = self.store.staged(bullets)
        done = [self._curate(b, self.clock(), notes, staged) for b in bullets]
        failed = staged.commit()
        if not failed:
            return done
        log.warning("conflict records not written: %s", failed)
        lost = "stored, but its {} conflict record(s) could not be written: " + failed
        return [
            replace(r, action="inserted", conflicts=(), notes=(*r.notes, lost.format(len(r.conflicts))))
            if r.conflicts
            else r
            for r in done
        ]

    def _neighbours(self, bullet: Bullet, target: WriteTarget) -> list[curator.Neighbour]:
        if bullet.vector is not None:
            return [curator.Neighbour(b, s) for b, s in target.neighbours(bullet.vector, bullet.scope, 10)]
        same = target.find_content(bullet.content, bullet.scope)  # keyword-only: exact duplicates
        return [curator.Neighbour(same, 1.0)] if same else []

    def _curate(self, bullet: Bullet, now: datetime, notes: tuple[str, ...], target: WriteTarget) -> RememberResult:
        params = self.curator_params_cjk if mostly_cjk(bullet.content) else self.curator_params
        decision = curator.decide(bullet.content, self._neighbours(bullet, target), params)
        if decision.action == "merge" and decision.target is not None:
            merged = curator.merge(decision.target, bullet, self.curator_params.strategy, now)
            merged = merged.with_changes(content=merged.content[:MAX_CONTENT_CHARS])
            if merged.vector is None:  # merge_content wrote new text: an LLM may write it better
                merged = self._llm_merged(merged, decision.target, bullet)
                vectors, _ = self.embed_texts([merged.content])
                merged = merged.with_changes(vector=vectors[0] if vectors else decision.target.vector)
            target.upsert([merged])
            return RememberResult("merged", merged, merged.id, decision.similarity, notes=notes)
        target.add([bullet])
        conflicts = tuple(
            Conflict(
                id="c_" + new_id()[2:],
                a_id=c.other.id,
                b_id=bullet.id,
                similarity=round(c.similarity, 4),
                kind=c.kind,
                evidence=c.evidence,
                scope=bullet.scope,
                created_at=now,
            )
            for c in decision.conflicts
        )
        try:
            target.add_conflicts(conflicts)
        except Exception as exc:  # the bullet is stored: say so, and say precisely what was not
            log.warning("conflict records not written: %s", exc)
            notes = (*notes, f"stored, but its {len(conflicts)} conflict record(s) could not be written: {exc}")
            conflicts = ()
        action: RememberAction = "inserted_with_conflict" if conflicts else "inserted"
        return RememberResult(action=action, bullet=bullet, conflicts=conflicts, notes=notes)

    def _llm_merged(self, merged: Bullet, existing: Bullet, new: Bullet) -> Bullet:
        """With ``merge_content``, outside rules mode and with a key, the LLM writes the merged bullet;
        any failure keeps the deterministic merge."""
        if self.settings.reflector_mode == "rules":
            return merged
        from .adapters.anthropic import make_refiner

        # This runs under the store's write lock: keep the wait short so other writers are not held up.
        timeout = min(self.settings.llm_timeout, 5.0)
        refiner, _ = make_refiner(self.settings.llm_model, self.settings.llm_base_url, timeout)
        if refiner is None:
            return merged
        kept, other = (new, existing) if merged.content.startswith(new.content.strip()) else (existing, new)
        text = refiner.merge(self.sanitizer.mask(kept.content), self.sanitizer.mask(other.content))
        try:  # the LLM's text is a door too: the same checks as any content
            return merged.with_changes(content=self.check(Draft(text or "")).bullet.content)
        except InvalidInputError:
            return merged

    # -- recall ---------------------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        scope: str | None = None,
        max_results: int | None = None,
        token_budget: int | None = None,
        reinforce: bool = True,
    ) -> RecallResult:
        """Hybrid retrieval in the visible scopes; what is returned is reinforced (one batched write)."""
        text = clean_text(query, "query", MAX_QUERY_CHARS)
        notes: list[str] = []
        limit = clamp("max_results", max_results, self.settings.max_results, MAX_RESULTS_CAP, notes)
        budget = clamp("token_budget", token_budget, self.settings.token_budget, TOKEN_BUDGET_CAP, notes)
        request = RecallRequest(text, self.resolve_scope(scope), limit, budget, self.clock())
        vector: Callable[[], Sequence[float] | None] | None = None
        if self.settings.semantic_cjk or not mostly_cjk(text) or spec(self.settings.model_name).multilingual:
            # made while the full-text query runs
            pending = self._embedding_pool().submit(self.embed_texts, [text], "query")

            def vector() -> Sequence[float] | None:
                vectors, note = pending.result()
                if note:
                    notes.append(note)
                return vectors[0] if vectors else None

        else:  # the shipped English model gives Chinese and Japanese near-random vectors: keywords carry them
            notes.append("CJK query: keyword layers only (the embedding model is English)")
        result = generate(self.store, request, vector, self.retrieval_params, notes, self._terms)
        if reinforce and result.hits:
            ids = [h.bullet.id for h in result.hits]
            if self._recorder is not None:
                self._recorder.record(ids, request.now)
            else:
                try:
                    self._reinforce(dict.fromkeys(ids, 1), request.now)
                except Exception as exc:  # reinforcement is bookkeeping: the answer still goes out
                    log.warning("could not record recalls: %s", exc)
        return dataclasses.replace(result, scope_why=self.scope_reason(scope))

    def _reinforce(self, counts: Mapping[str, int], now: datetime) -> None:
        self.store.mark_recalled(counts, now)

    def flush(self) -> None:
        """Write deferred recall counts now."""
        if self._recorder is not None:
            self._recorder.flush()

    # -- conflicts ------------------------------------------------------------------------------------

    def list_conflicts(self, scope: str | None = None, include_overlaps: bool = False) -> list[ConflictView]:
        """Open conflicts in the visible scopes whose two bullets are both still active, contradictions
        first, then by similarity."""
        found = self.store.conflicts(self.resolve_scope(scope).visible())
        if not include_overlaps:
            found = [c for c in found if c.kind == "contradiction"]
        ids = sorted({i for c in found for i in (c.a_id, c.b_id)})
        bullets = {b.id: b for b in self.store.get(ids) if b.status is Status.ACTIVE}
        views = []
        for c in found:
            a, b = bullets.get(c.a_id), bullets.get(c.b_id)
            if a is None or b is None:
                continue
            side, reason = curator.recommend(a, b)
            views.append(ConflictView(conflict=c, a=a, b=b, recommended=side, reason=reason))
        views.sort(key=lambda v: (v.conflict.kind != "contradiction", -v.conflict.similarity))
        return views

    # -- forget ---------------------------------------------------------------------------------------

    def forget(self, ids: Sequence[str], *, purge: bool = False) -> ForgetResult:
        """Archive (or, with ``purge``, erase) bullets by id. Unknown ids are reported, not fatal."""
        wanted = list(dict.fromkeys(i.strip() for i in ids if i and i.strip()))
        if not wanted:
            raise InvalidInputError("no ids given")
        if len(wanted) > MAX_IDS:
            raise InvalidInputError(f"{len(wanted)} ids; at most {MAX_IDS} at once")
        with self.store.write_lock():
            found = {b.id for b in self.store.get(wanted)}
            known = [i for i in wanted if i in found]
            if purge:
                self.store.delete(known)
            else:
                self.store.set_status(known, Status.ARCHIVED, self.clock())
        missing = tuple(i for i in wanted if i not in found)
        if not known:
            raise NotFoundError(f"no bullet with id {', '.join(missing)}")
        return ForgetResult(
            archived=() if purge else tuple(known), purged=tuple(known) if purge else (), not_found=missing
        )

    def forget_matching(self, query: str, *, scope: str | None = None, confirm: bool = False) -> ForgetResult:
        """Forget what ``recall`` returns for ``query``; without ``confirm`` nothing changes and the ids
        that would be archived come back in ``would_forget``."""
        result = self.recall(query, scope=scope, reinforce=False)
        ids = tuple(h.bullet.id for h in result.hits)
        if not confirm or not ids:
            return ForgetResult(archived=(), purged=(), not_found=(), would_forget=ids)
        return self.forget(ids)

    # -- stats and maintenance ------------------------------------------------------------------------

    def stats(self) -> Stats:
        statuses = self.store.column_counts("status")
        return Stats(
            total=sum(statuses.values()),
            active=statuses.get("active", 0),
            archived=statuses.get("archived", 0),
            by_scope=self.store.column_counts("scope"),
            by_section=self.store.column_counts("section"),
            by_type=self.store.column_counts("knowledge_type"),
            open_conflicts=self.store.count_conflicts("open"),
            model=self.settings.model_name,
            model_note=self.embedder.note,
            home=str(self.settings.home),
            store_bytes=self.store.size_bytes(),
        )

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every bullet with the configured model into a fresh table."""
        embedder = self.embedder.get(max(60.0, self.settings.model_wait_seconds))
        if embedder is None:
            raise EmbedderUnavailable(f"cannot reindex: {self.embedder.note}")
        with self.store.write_lock():
            bullets = self.store.all_bullets()
            done: list[Bullet] = []
            for start in range(0, len(bullets), 64):
                batch = bullets[start : start + 64]
                vectors = embedder.embed_passages([b.content for b in batch])
                done.extend(b.with_changes(vector=v) for b, v in zip(batch, vectors, strict=True))
                if progress:
                    progress(len(done), len(bullets))
            self.store.replace_all(done, embedder.name, embedder.dim)
        return len(done)
