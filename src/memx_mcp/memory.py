"""Memory: the one door into the memory. The MCP server, the CLI, the hooks and the web page call its
methods and nothing else of the use cases; each method is one use case (``usecases/``), bound to the
dependencies the composition root (``compose.py``) built: the store and embedder ports, the sanitizer,
the clock, the engines' parameters and the workspace that decides the current scope."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Concatenate, Generic, ParamSpec, TypeVar

from .config import Settings
from .domain.models import RecallResult
from .domain.scopes import Scope
from .ports import EmbedderSource, EmbedKind, NoRepositories, RefinerFactory, Repositories, Store, Teams, no_refiner
from .privacy import PrivacySanitizer
from .usecases import browse, injection, legacy_scopes, maintenance, review, staleness, team, writing
from .usecases import moment as moments
from .usecases import recall as recalling
from .usecases import reflect as reflecting
from .usecases.deps import Deps, Workspace, utcnow
from .usecases.recalls import RecallRecorder

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


class UseCase(Generic[P, R]):
    """A use case as a method of Memory: ``memory.gc(dry_run=True)`` is ``maintenance.gc(deps, dry_run=True)``."""

    def __init__(self, run: Callable[Concatenate[Deps, P], R]) -> None:
        self.run = run
        self.__doc__ = run.__doc__

    def __get__(self, memory: Memory, owner: type | None = None) -> Callable[P, R]:
        deps = memory.deps

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return self.run(deps, *args, **kwargs)

        return call


class Memory:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: EmbedderSource,
        *,
        clock: Callable[[], datetime] = utcnow,
        cwd: Path | None = None,
        sanitizer: PrivacySanitizer | None = None,
        defer_reinforcement: bool = False,
        refiners: RefinerFactory = no_refiner,
        teams: Teams | None = None,
        repositories: Repositories | None = None,
    ) -> None:
        """``defer_reinforcement``: recall answers first and records its recalls in batches on a background
        thread (the long-running server does this; ``flush`` writes what is pending). ``refiners``: how the
        LLM is made when the Reflector's mode asks for one (the composition root wires Anthropic's).
        ``repositories``: what git says of a folder (the composition root wires ``adapters/git.py``); without
        it every folder is outside a repository, and the scope is global unless configured."""
        self.deps = Deps(
            settings=settings,
            store=store,
            embedder=embedder,
            sanitizer=sanitizer or PrivacySanitizer(settings.user_patterns),
            clock=clock,
            workspace=Workspace(settings, cwd or Path.cwd(), repositories=repositories or NoRepositories()),
            refiners=refiners,
            teams=teams,
        )
        self._recorder = RecallRecorder(self._reinforce) if defer_reinforcement else None
        self.deps.workspace.known = lambda: self.deps.store.column_counts("scope")
        self.deps.workspace.on_meet = self._meet

    # -- what the edges read ------------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.deps.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """New settings (a test, a reload): the engines' parameters follow."""
        self.deps = dataclasses.replace(self.deps, settings=settings)  # the same store, workspace and caches
        self.deps.workspace.configure(settings)

    @property
    def store(self) -> Store:
        """For tests and benchmarks that look at what was stored. The edges never use it: an architecture
        test holds them to Memory's methods."""
        return self.deps.store

    def now(self) -> datetime:
        return self.deps.clock()

    @property
    def model_note(self) -> str:
        """Why the model is not loaded or not the configured one ("" when all is well)."""
        return self.deps.embedder.note

    # -- scopes -----------------------------------------------------------------------------------------

    def current_scope(self) -> Scope:
        """From configuration, else the client's roots or working directory (its git repository), else
        global. ``scope_reason`` says which."""
        return self.deps.workspace.current()

    def _meet(self, here: Scope) -> None:
        """A project met for the first time in this process: its old name's bullets that sessions here
        taught move to it (``usecases/legacy_scopes.py``); what waits for ``memx adopt`` is said in
        ``scope_reason``. Never in the way of the call that met it."""
        met: dict[str, str] = self.deps.caches.setdefault("met_projects", {})
        key = str(here.project_scope())
        if key not in met:
            try:
                met[key] = legacy_scopes.said(legacy_scopes.meet(self.deps, here))
                met[key] += legacy_scopes.team_note(self.deps, here)
            except Exception as exc:  # a busy or read-only store: looked at again by the next process
                log.warning("could not move the bullets of project:%s: %s", here.short, exc)
                met[key] = ""
        self.deps.workspace.met = met[key]

    adopt = UseCase(legacy_scopes.adopt)
    waiting_for_adopt = UseCase(legacy_scopes.waiting)

    def resolve_scope(self, scope: str | None) -> Scope:
        return self.deps.workspace.resolve(scope)

    def scope_reason(self, given: str | None = None, *, writing: bool = False) -> str:
        return self.deps.workspace.reason(given, writing=writing)

    def set_cwd(self, cwd: Path, *, from_client: bool = False) -> None:
        """Work for another folder from now on (the hook helper serves many projects; an MCP client may
        name its workspace with roots)."""
        self.deps.workspace.move(cwd, from_client=from_client)

    @property
    def cwd(self) -> Path:
        return self.deps.workspace.cwd

    @property
    def cwd_from_client(self) -> bool:
        return self.deps.workspace.from_client

    # -- remember, recall, forget -----------------------------------------------------------------------

    remember = UseCase(writing.remember)
    check = UseCase(writing.checked)
    write = UseCase(writing.write)

    def recall(
        self,
        query: str,
        *,
        scope: str | None = None,
        max_results: int | None = None,
        token_budget: int | None = None,
        reinforce: bool = True,
    ) -> RecallResult:
        return recalling.recall(
            self.deps,
            query,
            scope=scope,
            max_results=max_results,
            token_budget=token_budget,
            reinforce=reinforce,
            recorder=self._recorder,
        )

    def _reinforce(self, counts: Mapping[str, int], now: datetime) -> None:
        recalling.reinforce_now(self.deps, counts, now)

    def flush(self) -> None:
        """Write deferred recall counts now."""
        if self._recorder is not None:
            self._recorder.flush()

    def embed_texts(
        self, texts: Sequence[str], kind: EmbedKind = "passage"
    ) -> tuple[list[tuple[float, ...]] | None, str]:
        return self.deps.embed_texts(texts, kind)

    forget = UseCase(maintenance.forget)
    forget_matching = UseCase(maintenance.forget_matching)

    # -- conflicts and upkeep -----------------------------------------------------------------------------

    list_conflicts = UseCase(maintenance.list_conflicts)
    scan_conflicts = UseCase(maintenance.scan_conflicts)
    resolve_conflict = UseCase(maintenance.resolve_conflict)
    gc = UseCase(maintenance.gc)
    restore = UseCase(maintenance.restore)
    stats = UseCase(maintenance.stats)
    reindex = UseCase(maintenance.reindex)
    export = UseCase(maintenance.export)
    import_records = UseCase(maintenance.import_records)

    # -- looking inside ---------------------------------------------------------------------------------

    list_bullets = UseCase(browse.list_bullets)
    show = UseCase(browse.show)
    show_many = UseCase(browse.show_many)
    weight = UseCase(browse.weight)
    edit = UseCase(browse.edit)
    confirm = UseCase(staleness.confirm)
    store_stats = UseCase(browse.stats)
    scope_counts = UseCase(browse.scope_counts)
    count = UseCase(browse.count)
    decay_curve = UseCase(browse.decay_curve)
    page = UseCase(browse.page)
    decay_bands = UseCase(browse.bands)
    check_store = UseCase(browse.check_store)
    cjk_share = UseCase(browse.cjk_share)
    purge_scope = UseCase(browse.purge_scope)

    # -- review: learned bullets that wait for the user ------------------------------------------------

    pending = UseCase(review.pending)
    waiting = UseCase(review.waiting)
    approve = UseCase(review.approve)
    reject = UseCase(review.reject)

    # -- the team store ---------------------------------------------------------------------------------

    share = UseCase(team.share)
    unshare = UseCase(team.unshare)
    team_curate = UseCase(team.curate)
    team_status = UseCase(team.status)

    # -- reflect and inject -----------------------------------------------------------------------------

    reflect = UseCase(reflecting.reflect)
    transcript_file = staticmethod(reflecting.transcript_file)

    def allowed_path(self, raw: str, cwd: Path) -> Path:
        """A transcript path the MCP tool may read (``usecases/reflect.py``), or InvalidInputError."""
        return reflecting.allowed_path(raw, cwd, self.deps.workspace.repositories)

    read_transcript = staticmethod(reflecting.read_transcript)
    inject = UseCase(injection.inject)
    session_context = UseCase(injection.session_context)
    prompt_context = UseCase(injection.prompt_context)
    moment = UseCase(moments.hand_back)
