"""The composition root: builds Memory from Settings for the server, the CLI, the hooks and the web page,
and the one place that wires adapters. What an edge needs of an adapter without a Memory (repairing a
store that cannot open, explaining a store's error, the cross-process lock, the sanitizer alone) it gets
here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from .adapters.fastembed import FastEmbedEmbedder, LazyEmbedder, prepare_shipped_model
from .adapters.git import GitRepositories
from .adapters.lance.damage import REPAIR_HINT, explain
from .adapters.lance.lance import LanceStore
from .adapters.lance.lock import file_lock
from .adapters.lance.repair import RepairResult, repair
from .adapters.lance.routed import RoutedStore
from .adapters.machine import unavailable as cannot_load
from .config import Settings
from .domain.catalog import E5_CENTRED, E5_MODELS, MINILM, MUSE
from .domain.errors import MemxError
from .domain.models import Bullet
from .native import log_to_stderr, private_files
from .privacy import PrivacySanitizer

if TYPE_CHECKING:
    from .engine.reflector.readings.model import Refiner
from .memory import Memory
from .ports import Embedder, RefinerFactory

log = logging.getLogger(__name__)


def configure_logging(settings: Settings) -> None:
    """Logs go to stderr (stdout belongs to the protocol); bullet contents are never logged at INFO."""
    log_to_stderr(settings.log_level)


def choose_model(settings: Settings, unavailable: Callable[[], str] | None = None) -> tuple[Settings, str]:
    """The settings of the model this machine can run, and why it is not the configured one ("" when it
    is): where a multilingual model cannot load (no build for this platform, the extra not installed) memx
    runs the shipped MiniLM, and the store records that model."""
    why = unavailable() if unavailable else cannot_load(settings.model_name)
    if settings.model_name == MINILM or not why:
        return settings, ""
    note = f"{settings.model_name} cannot load here: {why}; using the shipped English model {MINILM}"
    log.warning(note)
    return settings.replace(model_name=MINILM, model_dim=384, model_path=""), note


def make_embedder(settings: Settings, fallback: str = "") -> LazyEmbedder:
    def load() -> Embedder:
        if settings.model_name in E5_MODELS:
            from .adapters.e5 import Centring, E5Embedder  # lazily: start-up never waits for a model's library

            centring = Centring.load() if settings.model_name == E5_CENTRED else None
            return E5Embedder(threads=settings.embed_threads, centring=centring)
        if settings.model_name == MUSE:
            from .adapters.muse import MuseEmbedder

            return MuseEmbedder(threads=settings.embed_threads)
        folder = Path(settings.model_path) if settings.model_path else prepare_shipped_model(settings.home / "models")
        return FastEmbedEmbedder(settings.model_name, folder, settings.model_dim, threads=settings.embed_threads)

    return LazyEmbedder(load, settings.model_name, fallback)


def open_store(settings: Settings, *, allow_model_change: bool = False) -> LanceStore | RoutedStore:
    """The personal store, and beside it the team store when settings name one (``store/routed.py``)."""
    personal = LanceStore(
        settings.home / "store",
        settings.model_name,
        settings.model_dim,
        allow_model_change=allow_model_change,
        lock_wait=settings.lock_wait_seconds,
    )
    if not settings.team_store:
        return personal
    from .adapters.lance.routed import TeamScopes
    from .adapters.lance.team import TeamStore, short_error

    scopes = TeamScopes.parse(settings.team_scopes)
    try:
        team = TeamStore(
            settings.team_store,
            settings.home / "team",
            settings.model_name,
            settings.model_dim,
            storage_options=settings.team_storage_options(),
            staleness=settings.team_staleness_seconds,
            retention=timedelta(minutes=settings.team_retention_minutes),
            lock_wait=settings.lock_wait_seconds,
            guard=team_guard(PrivacySanitizer(settings.user_patterns)),
            deadline=settings.team_timeout_seconds,
        )
    except MemxError:
        raise
    except Exception as exc:  # the object store is unreachable: personal memory still works
        why = short_error(exc)
        log.warning("the team store %s cannot be opened: %s", settings.team_store, why)
        return RoutedStore(personal, None, scopes, settings.team_store, why)
    return RoutedStore(personal, team, scopes, settings.team_store)


def team_guard(sanitizer: PrivacySanitizer) -> Callable[[Bullet], Bullet]:
    """The sanitizer once more on every text field of a bullet bound for the team store, whatever door it
    came through; text it changes loses its vector (embedded from the unmasked text) until re-embedded."""

    def guard(b: Bullet) -> Bullet:
        masked = b.with_changes(
            content=sanitizer.mask(b.content),
            source=sanitizer.mask(b.source),
            origin=sanitizer.mask(b.origin),
            tools=tuple(sanitizer.mask(t) for t in b.tools),
            entities=tuple(sanitizer.mask(t) for t in b.entities),
            tags=tuple(sanitizer.mask(t) for t in b.tags),
        )
        if masked.content != b.content:
            log.warning("a bullet bound for the team store still held a secret: masked before it left")
            masked = masked.with_changes(vector=None)
        return masked

    return guard


def open_memory(
    settings: Settings,
    *,
    cwd: Path | None = None,
    allow_model_change: bool = False,
    preload: bool = True,
    defer_reinforcement: bool = False,
    warm: bool = False,
) -> Memory:
    """``preload`` starts loading the model while the store opens; otherwise it loads on first use.
    ``defer_reinforcement`` records recalls off the answer's path; ``warm`` builds the store's in-memory
    copy before the model starts loading (both for long-running processes: the two loads' passing memory
    would otherwise add up, ``benchmarks/server_memory.py``)."""
    settings.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    settings, fallback = choose_model(settings)
    embedder = make_embedder(settings, fallback)
    if preload and not warm:
        embedder.start()
    store = open_store(settings, allow_model_change=allow_model_change)
    if warm:
        try:
            store.warm()
        except Exception as exc:  # the first search tries again and reports it; the model still loads
            log.warning("could not build the in-memory copy ahead: %s", exc)
        if preload:
            embedder.start()
    teams = store if isinstance(store, RoutedStore) else None  # share, unshare and the team pass need both
    return Memory(
        settings,
        store,
        embedder,
        cwd=cwd,
        defer_reinforcement=defer_reinforcement,
        refiners=refiner_factory(settings),
        teams=teams,
        repositories=GitRepositories(),
    )


def refiner_factory(settings: Settings) -> RefinerFactory:
    """The Reflector's model of this machine's backend (``llm_backend``), its library loaded only when a
    Reflector mode or a merge asks for one."""

    def make(model: str, base_url: str, timeout: float, purpose: str = "reflect") -> tuple[Refiner | None, str]:
        from .adapters.backends import make_refiner

        return make_refiner(settings, model, base_url, timeout, purpose)

    return make


def reflector_backend(settings: Settings) -> tuple[str, str, str, str]:
    """The model backend ``auto`` picks on this machine ('' for none, the rules), why, and the model it asks
    and where ('' for none): `memx doctor`."""
    from .adapters.backends import asked, choose_backend

    choice = choose_backend(settings)
    model, endpoint = asked(choice, settings) if choice.backend else ("", "")
    return choice.backend, choice.reason, model, endpoint


def repair_store(settings: Settings) -> RepairResult:
    """``memx repair``: back the store folder up, rebuild its tables from what can be read, then open it
    once (which builds the indexes and keeps the first manifest copy)."""
    settings, _ = choose_model(settings)  # the model this machine runs is the one the store records
    done = repair(settings.home / "store", settings.model_name, settings.model_dim, settings.lock_wait_seconds)
    open_store(settings).checkpoint()
    return done


def explain_store_error(exc: BaseException, settings: Settings) -> MemxError | None:
    """The error a person can act on for a failure that reached an edge unnamed (a full disk, a damaged
    table), None for anything else."""
    return explain(exc, settings.home / "store")


def sanitizer(settings: Settings) -> PrivacySanitizer:
    return PrivacySanitizer(settings.user_patterns)


__all__ = [
    "REPAIR_HINT",
    "explain_store_error",
    "file_lock",
    "open_memory",
    "private_files",
    "reflector_backend",
    "repair_store",
    "sanitizer",
]
