"""Full-text queries in one hand-off.

LanceDB's synchronous API runs each of its calls on its own event-loop thread, and one full-text query
through it makes six of them (three schema lookups, a check for a legacy index, the query, two batch
reads): about 1 ms of thread hand-offs per query on a two-core laptop, a tenth of a recall. Its async API
does the same query as one coroutine; this runs that coroutine on an event loop of its own. The
connection shares the store's session, so the index is cached once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, TypeVar

T = TypeVar("T")


class FullTextReader:
    def __init__(self, uri: str, session: Any, timeout: float = 30.0) -> None:
        self._uri = uri
        self._timeout = timeout  # a query that hangs fails (the layer is skipped) instead of the recall hanging
        self._session = session
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Lock()
        self._db: Any = None
        self._tables: dict[str, Any] = {}  # only touched on the loop's thread

    def search(self, table: str, text: str, where: str, limit: int) -> list[tuple[str, float]]:
        """Ids and BM25 scores of the best ``limit`` rows of ``table`` under ``where`` (applied first)."""
        return self._run(self._search(table, text, where, limit))

    def forget(self, table: str) -> None:
        """Drop the handle of a table that was replaced (``memx reindex``)."""
        self._run(self._forget(table))

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(work, self._running_loop())
        try:
            return future.result(self._timeout)
        except TimeoutError:
            future.cancel()
            raise

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._started:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="memx-fulltext", daemon=True).start()
                self._loop = loop
            return self._loop

    async def _table(self, name: str) -> Any:
        if name not in self._tables:
            if self._db is None:
                from .lancedb_import import load

                lancedb = load()

                self._db = await lancedb.connect_async(
                    self._uri, read_consistency_interval=timedelta(0), session=self._session
                )
            self._tables[name] = await self._db.open_table(name)
        return self._tables[name]

    async def _search(self, name: str, text: str, where: str, limit: int) -> list[tuple[str, float]]:
        table = await self._table(name)
        query = table.query().nearest_to_text(text, columns="terms").where(where).select(["id", "_score"])
        found = await query.limit(limit).to_arrow()
        scores = [float(s) for s in found.column("_score").to_pylist()]
        return list(zip(found.column("id").to_pylist(), scores, strict=True))

    async def _forget(self, name: str) -> None:
        self._tables.pop(name, None)
