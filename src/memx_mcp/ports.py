"""The seams between the use cases and the outside world: the store, the embedder, the git repositories a
folder is in, and how a filter on bullets is said without the store's query language (``Where``; only the
store adapter writes SQL)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from .domain.models import Bullet, Conflict, KnowledgeType, Section, Status
from .domain.review import ReviewNote
from .domain.scopes import Checkout

if TYPE_CHECKING:  # the LLM's pydantic shapes load only where an LLM is used
    from .engine.reflector.readings.model import Refiner

EmbedKind = Literal["query", "passage"]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dim`` floats. Queries (what recall searches with) and
    passages (what is stored, and what the Curator compares) are embedded apart: an asymmetric model such
    as e5 marks each with its own prefix; a symmetric one (MiniLM) gives both the same vector."""

    name: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...

    def embed_passages(self, texts: Sequence[str]) -> list[tuple[float, ...]]: ...


def embed(embedder: Embedder, texts: Sequence[str], kind: EmbedKind) -> list[tuple[float, ...]]:
    return embedder.embed_queries(texts) if kind == "query" else embedder.embed_passages(texts)


class RefinerFactory(Protocol):
    """Makes the Reflector's model (``adapters/backends``): None and the reason when there is none. A merge
    (``purpose="merge"``) runs under the write lock and gets only a fast HTTP backend."""

    def __call__(
        self, model: str, base_url: str, timeout: float, purpose: str = "reflect"
    ) -> tuple[Refiner | None, str]: ...


def no_refiner(model: str, base_url: str, timeout: float, purpose: str = "reflect") -> tuple[Refiner | None, str]:
    return None, "no LLM is wired in: the Reflector ran in rules mode"


class EmbedderSource(Protocol):
    """Hands out the embedder once it is loaded; ``note`` says what happened when it is not."""

    note: str

    def get(self, timeout: float) -> Embedder | None: ...

    def peek(self) -> Embedder | None: ...


@dataclass
class ReadyEmbedder:
    """An embedder that is already loaded (tests, benchmarks, the CLI after a synchronous load)."""

    embedder: Embedder | None
    note: str = ""

    def get(self, timeout: float) -> Embedder | None:
        return self.embedder

    def peek(self) -> Embedder | None:
        return self.embedder


class Repositories(Protocol):
    """What git says of a folder (``adapters/git.py``): the top of the repository it is in, and the facts
    its project's identity and workspace are decided from (``domain.scopes.scope_of``); None outside one."""

    def root(self, folder: Path) -> Path | None: ...

    def checkout(self, folder: Path) -> Checkout | None: ...


class NoRepositories:
    """Knows no repository: every folder is outside one (its scope is global). What a Memory built without
    the composition root sees, as ``no_refiner`` is its model."""

    def root(self, folder: Path) -> Path | None:
        return None

    def checkout(self, folder: Path) -> Checkout | None:
        return None


class WriteTarget(Protocol):
    """Where the Curator's write path reads neighbours and stores its decisions: the store itself (one
    write at a time) or a batch staged in memory (``StagedWrite``)."""

    def neighbours(self, vector: Sequence[float], scope: str, limit: int = 10) -> list[tuple[Bullet, float]]: ...

    def find_content(self, content: str, scope: str) -> Bullet | None: ...

    def add(self, bullets: Sequence[Bullet]) -> None: ...

    def upsert(self, bullets: Sequence[Bullet]) -> None: ...

    def add_conflicts(self, conflicts: Sequence[Conflict]) -> None: ...


@dataclass(frozen=True)
class Where:
    """Which bullets: every field given must match (``scopes``: any of them; ``with_vector``: only bullets
    that carry a vector). ``Where()`` is every bullet."""

    status: Status | None = None
    scopes: Sequence[str] | None = None
    section: Section | None = None
    knowledge_type: KnowledgeType | None = None
    with_vector: bool = False


EVERY = Where()
ACTIVE = Where(status=Status.ACTIVE)


class Generational(Protocol):
    """A store that can say when its bullets changed (issue 33, seventh round: ``LanceStore`` answers with the
    counter of its copy, ``VectorIndex.generation()``). The use cases keep values computed from the bullets
    (the learned ranking's ``ScopeStats``) until it moves; a store that answers "" gets them recomputed."""

    def generation(self) -> str:
        """A value that changes whenever a bullet is added, changed or removed, here or by another process
        ("" when unknown: nothing can be kept by it)."""
        ...


class Store(WriteTarget, Generational, Protocol):
    """What the use cases ask of the store (``adapters/lance``): bullets, conflicts, reflected transcripts,
    the write lock that serialises every writer of the folder, and the in-memory copy's searches."""

    @property
    def dim(self) -> int: ...

    @property
    def vectors_model(self) -> str: ...

    def write_lock(self, wait: float | None = None) -> AbstractContextManager[None]: ...

    def one_read(self) -> AbstractContextManager[None]:
        """One recall's reads see one state of the store (its change counter read once)."""
        ...

    def upsert(self, bullets: Sequence[Bullet], vectors_changed: bool = True) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def get(self, ids: Sequence[str]) -> list[Bullet]: ...

    def all_bullets(self, where: Where = EVERY) -> list[Bullet]: ...

    def count(self, where: Where = EVERY) -> int: ...

    def column_counts(self, column: Literal["status", "scope", "section", "knowledge_type"]) -> dict[str, int]: ...

    def decay_inputs(self) -> list[tuple[datetime, int]]: ...

    def active_contents(self) -> list[str]: ...

    def active_in(self, scopes: Sequence[str]) -> list[Bullet]: ...

    def vector_candidates(self, vector: Sequence[float], scopes: Sequence[str], limit: int) -> list[Bullet]: ...

    def prepare_vector_search(self, scopes: Sequence[str]) -> None: ...

    def keyword_search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[Bullet, float]]: ...

    def similarities(self, ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]: ...

    def staged(self, bullets: Sequence[Bullet] = ()) -> StagedBatch: ...

    def set_status(self, ids: Sequence[str], status: Status, now: datetime) -> None: ...

    def mark_recalled(self, counts: Mapping[str, int], now: datetime) -> None: ...

    def replace_all(self, bullets: Sequence[Bullet], model_name: str, dim: int) -> None: ...

    def conflicts(self, scopes: Sequence[str], status: str = "open") -> list[Conflict]: ...

    def get_conflict(self, conflict_id: str) -> Conflict | None: ...

    def conflict_pairs(self) -> set[frozenset[str]]: ...

    def resolve_conflicts(self, ids: Sequence[str], resolution: str) -> None: ...

    def rescope_conflicts(self, ids: Sequence[str], scope: str) -> None: ...

    def count_conflicts(self, status: str = "open") -> int: ...

    def reflected_upto(self, key: str) -> int: ...

    def mark_reflected(self, key: str, steps: int) -> None: ...

    def review_notes(self, ids: Sequence[str]) -> dict[str, ReviewNote]: ...

    def keep_review_notes(self, notes: Mapping[str, ReviewNote]) -> None: ...

    def drop_review_notes(self, ids: Sequence[str]) -> None: ...

    def verify(self) -> str: ...

    def size_bytes(self) -> int: ...


class StagedBatch(WriteTarget, Protocol):
    """Curated writes held in memory; ``commit`` stores them at once and says what could not be written."""

    def commit(self) -> str: ...


class SharedStore(Store, Protocol):
    """The team's store on object storage (``adapters/lance/team.py``): a store with no lock between
    machines, that says how current this machine's copy of it is."""

    uri: str

    def sync(self) -> bool: ...

    def open_conflicts(self) -> list[Conflict]: ...

    def status(self) -> TeamStatus: ...

    def wait_loaded(self) -> float: ...


@dataclass(frozen=True)
class TeamStatus:
    uri: str
    staleness: float
    reachable: bool
    error: str
    version: int
    copy_version: int | None
    bullets: int
    waiting: int = 0  # writes kept in this machine's outbox until the store answers


class Teams(Protocol):
    """The personal store and the team store side by side (``adapters/lance/routed.py``): what the team's
    use cases (share, unshare, the team Curator pass, doctor's line) need beyond ``Store``."""

    uri: str
    why_absent: str  # why ``team`` is None

    @property
    def personal(self) -> Store: ...

    @property
    def team(self) -> SharedStore | None: ...

    @property
    def scope_names(self) -> tuple[str, ...]: ...

    def holder(self, ids: Sequence[str]) -> Mapping[str, Store]: ...

    def shares(self, scope: str) -> bool: ...

    def write_lock(self, wait: float | None = None) -> AbstractContextManager[None]: ...

    def read_notes(self) -> list[str]: ...
