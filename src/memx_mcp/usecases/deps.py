"""What every use case receives: the store and embedder ports, the sanitizer, the clock, the engines'
parameters (made from Settings here and nowhere else) and the workspace that decides the current scope."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import Settings
from ..domain.catalog import spec
from ..domain.projects import where
from ..domain.scopes import Scope, parse_scope, scope_of
from ..engine.curator import CuratorParams
from ..engine.decay import DecayParams
from ..engine.retrieval import RetrievalParams
from ..engine.retrieval.fusion import FusionParams
from ..engine.retrieval.generator import TermsCache
from ..engine.retrieval.ranking import RankingWeights
from ..ports import (
    EmbedderSource,
    EmbedKind,
    NoRepositories,
    RefinerFactory,
    Repositories,
    Store,
    Teams,
    embed,
    no_refiner,
)
from ..privacy import PrivacySanitizer

log = logging.getLogger(__name__)


def utcnow() -> datetime:
    return datetime.now(UTC)


def curator_params(settings: Settings, cjk: bool) -> CuratorParams:
    """The model's calibrated thresholds for the script (or the user's, where set)."""
    t = settings.curator_thresholds(cjk)
    return CuratorParams(
        merge_threshold=t.merge_threshold,
        conflict_threshold=t.conflict_threshold,
        strategy="merge_content" if settings.merge_strategy == "merge_content" else "keep_best",
        merge_certain=t.merge_certain,
        merge_min_overlap=t.merge_min_overlap,
    )


def decay_params(settings: Settings) -> DecayParams:
    return DecayParams(
        half_life_days=settings.half_life_days,
        boost_factor=settings.boost_factor,
        permanent_recalls=settings.permanent_recalls,
        protect_days=settings.protect_days,
        archive_below=settings.archive_below,
    )


def retrieval_params(settings: Settings) -> RetrievalParams:
    """The Generator's parameters from the settings. Under the learned ranking, the relevance floor is the
    one shipped with its weights (``min_relevance`` is on SPEC's Blended scale)."""
    ranking = shipped_ranking() if settings.ranking == "learned" else None
    return RetrievalParams(
        fusion=FusionParams(
            keyword_weight=settings.keyword_weight,
            semantic_weight=settings.semantic_weight,
            recency_boost=settings.recency_boost,
            recency_days=settings.recency_days,
            scope_boost=settings.scope_boost,
            project_scope_boost=settings.project_scope_boost,
            decay_share=settings.decay_share,
            cross_language=spec(settings.model_name).cross_language,
        ),
        decay=decay_params(settings),
        candidate_limit=settings.candidate_limit,
        min_relevance=settings.min_relevance
        if ranking is None or ranking.min_relevance is None
        else ranking.min_relevance,
        ranking=ranking,
    )


def with_learned_ranking(params: RetrievalParams) -> RetrievalParams:
    """``params`` with the shipped learned ranking and its relevance floor (what ``MEMX_RANKING=learned``
    gives): how the benchmarks rank one store both ways."""
    ranking = shipped_ranking()
    floor = params.min_relevance if ranking.min_relevance is None else ranking.min_relevance
    return dataclasses.replace(params, ranking=ranking, min_relevance=floor)


@cache
def shipped_ranking() -> RankingWeights:
    """The learned ranking's weights shipped in the package (``engine/retrieval/ranking_weights.json``),
    read once per process."""
    text = resources.files("memx_mcp.engine.retrieval").joinpath("ranking_weights.json").read_text("utf-8")
    return RankingWeights.from_json(json.loads(text))


@dataclass
class Workspace:
    """The folder memx works for, and the scope that follows from it (configuration first, else its git
    repository, else global). The hook helper serves many folders; an MCP client may name its own."""

    settings: Settings
    cwd: Path
    from_client: bool = False  # the folder came from the MCP client's roots
    repositories: Repositories = field(default_factory=NoRepositories)  # git, wired by the composition root
    _current: Scope | None = None
    known: Callable[[], Iterable[str]] = tuple  # the stored scopes, for a project's short name
    on_meet: Callable[[Scope], None] | None = None  # a detected project, first met (its old name's bullets)
    met: str = ""  # what the meeting said (``legacy_scopes``), for ``reason``

    def current(self) -> Scope:
        if self._current is None:
            detected = self.detect(self.cwd)
            if self.settings.scope:
                self._current = parse_scope(self.settings.scope, detected, _Lazy(self.known))
            else:
                self._current = detected
                if self.on_meet is not None:
                    self.on_meet(detected)
        return self._current

    def detect(self, folder: Path) -> Scope:
        """The scope of the repository ``folder`` is in (``domain.scopes.scope_of``), whatever is configured."""
        return scope_of(self.repositories.checkout(folder))

    def resolve(self, scope: str | None) -> Scope:
        current = self.current()
        return parse_scope(scope, current, _Lazy(self.known)) if scope and scope.strip() else current

    def configure(self, settings: Settings) -> None:
        self.settings, self._current, self.met = settings, None, ""  # a configured scope may have changed

    def move(self, cwd: Path, *, from_client: bool = False) -> None:
        if cwd != self.cwd:
            self.cwd, self._current, self.met = cwd, None, ""
        self.from_client = from_client

    def reason(self, given: str | None = None, *, writing: bool = False) -> str:
        """Why the scope is what it is, in words a user can act on; ``given``: the scope a caller named;
        ``writing``: for a new bullet, which goes to the current scope's project unless told."""
        if given and given.strip():
            return f"{self.resolve(given)}: named by the caller"
        scope = self.current()
        if writing and scope.project_scope() != scope:
            return f"{scope.project_scope()}: new bullets go to the project; {self.reason()}"
        if self.settings.scope:
            return f"{scope}: from the configuration (MEMX_SCOPE={self.settings.scope})"
        where = "the client's workspace root" if self.from_client else "the working directory"
        if scope.is_global:
            return f"global: {where} {self.cwd} is not inside a git repository"
        return f"{scope}: from the git repository at {where} {self.cwd} ({identity_why(scope)}){self.met}"


class _Lazy:
    """The stored scopes, asked of the store only when a short project name needs them."""

    def __init__(self, source: Callable[[], Iterable[str]]) -> None:
        self.source = source

    def __iter__(self) -> Iterator[str]:
        return iter(self.source())


def identity_why(scope: Scope) -> str:
    """How the project's name says which repository it is, in words."""
    place = where(scope.project or "")
    if place.startswith("commit-"):
        first = place.removeprefix("commit-")
        return f"no remote names a host: {scope.short} is told apart by its first commit {first}"
    if place.startswith("path-"):
        return f"no remote names a host and no commit yet: {scope.short} is told apart by its folder"
    if place:
        return f"the remote {place}/{scope.short}"
    return "by its name alone"


@dataclass
class Deps:
    settings: Settings
    store: Store
    embedder: EmbedderSource
    sanitizer: PrivacySanitizer
    clock: Callable[[], datetime]
    workspace: Workspace
    refiners: RefinerFactory = no_refiner
    teams: Teams | None = None  # the personal and the team store side by side, when a team store is set
    curator: CuratorParams = field(init=False)
    curator_cjk: CuratorParams = field(init=False)
    decay: DecayParams = field(init=False)
    retrieval: RetrievalParams = field(init=False)
    terms: TermsCache = field(default_factory=dict)  # bullet id → (hash of its text and metadata, its terms)
    caches: dict[str, Any] = field(default_factory=dict)  # what a use case keeps between calls (working trees)
    _pool: ThreadPoolExecutor | None = None

    def __post_init__(self) -> None:
        self.curator, self.curator_cjk = (curator_params(self.settings, cjk) for cjk in (False, True))
        self.decay = decay_params(self.settings)
        self.retrieval = retrieval_params(self.settings)

    def embedding_pool(self) -> ThreadPoolExecutor:
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
