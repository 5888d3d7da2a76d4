from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from memx_mcp.adapters.lance.fulltext import FullTextReader
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.text.tokenize import query_terms

from .test_lance import bullet, open_store


def test_a_query_that_hangs_fails_in_time_and_the_next_one_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(tmp_path)
    store.add([bullet(1, "restart the redis pool")])
    reader: FullTextReader = store._fulltext
    reader._timeout = 0.3
    answer = FullTextReader._search

    async def hanging(self: FullTextReader, name: str, text: str, where: str, limit: int) -> list[tuple[str, float]]:
        await asyncio.sleep(30)
        return []

    monkeypatch.setattr(FullTextReader, "_search", hanging)
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        store.keyword_search(query_terms("redis pool"), ["global"], 5)
    assert time.monotonic() - start < 5
    monkeypatch.setattr(FullTextReader, "_search", answer)
    assert [b.id for b, _ in store.keyword_search(query_terms("redis pool"), ["global"], 5)] == ["b_0001"]


def test_full_text_through_the_async_api_finds_what_the_sync_api_finds(tmp_path: Path) -> None:
    store: LanceStore = open_store(tmp_path)
    store.add([bullet(i, f"note {i} about redis and docker {'pool' * (i % 3)}") for i in range(30)])
    terms = " ".join(query_terms("redis pool"))
    sync = store._bullets.search(terms, query_type="fts").where(store._visible(["global"]), prefilter=True)
    expected = {r["id"]: pytest.approx(r["_score"]) for r in sync.select(["id", "_score"]).limit(10).to_list()}
    assert dict(store._fulltext.search(store._bullets_name, terms, store._visible(["global"]), 10)) == expected
