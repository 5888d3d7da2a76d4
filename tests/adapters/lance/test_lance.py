from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memx_mcp.adapters.lance import vectors
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.lance.vectors import VectorIndex
from memx_mcp.domain.errors import ModelMismatchError, SchemaVersionError
from memx_mcp.domain.models import Bullet, KnowledgeType, Section, Status
from memx_mcp.text.tokenize import query_terms

from ...conftest import T0


def bullet(i: int, content: str | None = None, scope: str = "global", dim: int = 4) -> Bullet:
    vec = [0.0] * dim
    vec[i % dim] = 1.0
    return Bullet(
        id=f"b_{i:04d}",
        content=content or f"bullet number {i}",
        section=Section.GENERAL,
        knowledge_type=KnowledgeType.KNOWLEDGE,
        instructivity_score=50.0,
        confidence=0.5,
        source="manual",
        scope=scope,
        created_at=T0,
        updated_at=T0,
        tools=("redis",),
        vector=tuple(vec),
    )


def open_store(root: Path, model: str = "m", dim: int = 4) -> LanceStore:
    return LanceStore(root, model, dim)


def count_reloads(monkeypatch: pytest.MonkeyPatch, pause: float = 0.0) -> list[int]:
    """A list that gets an entry each time a vector copy is reloaded whole (after ``pause`` seconds)."""
    reloads: list[int] = []
    original = VectorIndex._reload

    def counted(self: VectorIndex, table: object, columns: Sequence[str]) -> None:
        reloads.append(1)
        time.sleep(pause)
        original(self, table, columns)

    monkeypatch.setattr(VectorIndex, "_reload", counted)
    return reloads


def writer_and_reader(root: Path, count: int) -> tuple[LanceStore, LanceStore]:
    """Two stores on one folder, as two processes: the writer holds ``count`` bullets, the reader has
    loaded its vector copy of them."""
    writer = open_store(root)
    writer.add([bullet(i) for i in range(count)])
    reader = open_store(root)
    assert len(reader.similar([1.0, 0, 0, 0], ["global"], 100)) == count  # the copy is loaded
    return writer, reader


def test_bullets_round_trip_with_every_field(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    b = bullet(1, "Redis 连接池 needs 50 connections").with_changes(
        tags=("perf",),
        entities=("MAX_POOL",),
        last_recalled_at=T0 + timedelta(days=1),
        recall_count=3,
        origin="s1",
    )
    plain = bullet(2)  # never recalled: no last_recalled_at
    s.add([b, plain])
    got = {x.id: x for x in s.get([b.id, plain.id])}
    assert got == {b.id: b, plain.id: plain}
    assert got[b.id].vector == b.vector
    assert got[b.id].created_at.utcoffset() == timedelta(0)
    # recall reads the in-memory copy and its lexical index: the same bullets, field for field
    assert {x.id: x for x in s.vector_candidates([0.0, 1.0, 0.0, 0.0], ["global"], 5)} == got
    assert {x.id: x for x in s.keyword_candidates(query_terms("redis"), ["global"], 5)} == got


def test_a_new_bullet_is_found_by_full_text_at_once_including_cjk_substrings(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(1, "Redis 连接池 needs 50 connections"), bullet(2, "東京の天気は晴れです")])
    assert [b.id for b in s.keyword_candidates(["连接"], ["global"], 5)] == ["b_0001"]
    assert [b.id for b in s.keyword_candidates(["天気"], ["global"], 5)] == ["b_0002"]
    s.add([bullet(3, "another redis note")])
    assert "b_0003" in {b.id for b in s.keyword_candidates(query_terms("redis"), ["global"], 5)}


def test_candidates_are_filtered_by_scope_and_status_before_ranking(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(0, scope="project:a"), bullet(4, scope="project:b"), bullet(8, scope="global")])
    s.set_status(["b_0008"], Status.ARCHIVED, T0)
    ids = {b.id for b in s.vector_candidates([1.0, 0, 0, 0], ["project:a", "global"], 10)}
    assert ids == {"b_0000"}
    assert {b.id for b in s.keyword_candidates(query_terms("bullet"), ["project:b"], 10)} == {"b_0004"}


def test_active_contents_are_those_of_every_scope_without_the_archived(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(0, "缓存每天清空", scope="project:a"), bullet(1, "cache cleared"), bullet(2, "old note")])
    s.set_status(["b_0002"], Status.ARCHIVED, T0)
    assert sorted(s.active_contents()) == ["cache cleared", "缓存每天清空"]


def test_mark_recalled_counts_every_recall(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(1), bullet(2)])
    s.mark_recalled({"b_0001": 1}, T0 + timedelta(hours=1))
    s.mark_recalled({"b_0001": 1, "b_0002": 1}, T0 + timedelta(hours=2))
    got = {b.id: b for b in s.get(["b_0001", "b_0002"])}
    assert got["b_0001"].recall_count == 2
    assert got["b_0001"].last_recalled_at == T0 + timedelta(hours=2)


def test_opening_with_another_model_fails_clearly(tmp_path: Path) -> None:
    open_store(tmp_path, "model-a", 4)
    with pytest.raises(ModelMismatchError, match="memx reindex"):
        open_store(tmp_path, "model-b", 8)


def test_replace_all_switches_the_store_to_a_new_model(tmp_path: Path) -> None:
    s = open_store(tmp_path, "model-a", 4)
    s.add([bullet(1), bullet(2)])
    s2 = LanceStore(tmp_path, "model-b", 8, allow_model_change=True)
    assert s2.keyword_candidates(query_terms("bullet"), ["global"], 5)  # the old table, before the switch
    s2.replace_all([bullet(1, dim=8), bullet(2, dim=8)], "model-b", 8)
    assert len(s2.keyword_candidates(query_terms("bullet"), ["global"], 5)) == 2
    reopened = open_store(tmp_path, "model-b", 8)
    assert sorted(b.id for b in reopened.all_bullets()) == ["b_0001", "b_0002"]
    assert len(reopened.get(["b_0001"])[0].vector or ()) == 8


def test_a_store_from_a_newer_memx_is_refused(tmp_path: Path) -> None:
    open_store(tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    meta["schema_version"] = 99
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(SchemaVersionError, match="upgrade"):
        open_store(tmp_path)


def test_compaction_keeps_every_row(tmp_path: Path) -> None:
    s = LanceStore(tmp_path, "m", 4, optimize_every=5)
    for i in range(23):
        s.add([bullet(i)])
    s.optimize()
    assert s.count() == 23
    assert s._bullets.stats()["fragment_stats"]["num_fragments"] <= 2


def _writer(root: str, start: int, count: int) -> None:
    s = LanceStore(Path(root), "m", 4)
    for i in range(start, start + count):
        s.add([bullet(i)])


def test_writers_in_separate_processes_lose_nothing(tmp_path: Path) -> None:
    open_store(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), k * 100, 15)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    s = open_store(tmp_path)
    ids = [b.id for b in s.all_bullets()]
    assert len(ids) == len(set(ids)) == 45


def test_a_reader_sees_another_processes_write_without_reopening(tmp_path: Path) -> None:
    reader = open_store(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=_writer, args=(str(tmp_path), 500, 1))
    p.start()
    p.join(120)
    assert [b.id for b in reader.get(["b_0500"])] == ["b_0500"]


def test_an_older_store_is_migrated_to_the_current_schema(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(1)])
    (tmp_path / "meta.json").write_text(json.dumps({"model": "m", "dim": 4}))  # a store from before versioning
    reopened = open_store(tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["schema_version"] == 1 and meta["migrated_from"] == 0
    assert [b.id for b in reopened.all_bullets()] == ["b_0001"]


def test_the_vector_index_follows_writes_in_this_process_and_others(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(0, scope="project:a"), bullet(1, scope="project:a")])
    assert [b.id for b, _ in s.similar([1.0, 0, 0, 0], ["project:a"], 1)] == ["b_0000"]
    s.add([bullet(4, scope="project:a")])  # same direction as b_0000: updated in place
    assert {b.id for b, _ in s.similar([1.0, 0, 0, 0], ["project:a"], 2)} == {"b_0000", "b_0004"}
    s.set_status(["b_0000"], Status.ARCHIVED, T0)
    assert [b.id for b, _ in s.similar([1.0, 0, 0, 0], ["project:a"], 1)] == ["b_0004"]
    other = open_store(tmp_path)  # another process's view
    other.delete(["b_0004"])
    assert [b.id for b, _ in s.similar([1.0, 0, 0, 0], ["project:a"], 1)] == ["b_0001"]
    s.set_status(["b_0000"], Status.ACTIVE, T0)  # restored: reloaded with its vector
    assert [b.id for b, _ in s.similar([1.0, 0, 0, 0], ["project:a"], 1)] == ["b_0000"]


def test_the_vector_copy_loaded_in_batches_skips_archived_bullets_and_those_without_vectors(tmp_path: Path) -> None:
    writer = open_store(tmp_path)
    many = [bullet(i, scope="project:a" if i % 2 else "global") for i in range(5000)]
    writer.add([*many, bullet(9999, "stored while the model was away").with_changes(vector=None)])
    writer.set_status([f"b_{i:04d}" for i in range(1, 3000, 4)], Status.ARCHIVED, T0)  # most nearest [0, 1, 0, 0]
    reader = open_store(tmp_path)  # another process: loads the copy from the table, batch by batch
    found = reader.similar([0.0, 1.0, 0.0, 0.0], ["project:a"], 3, fresh=False)
    assert [b.scope for b, _ in found] == ["project:a"] * 3
    assert {b.id for b, _ in found}.isdisjoint(f"b_{i:04d}" for i in range(1, 3000, 4))
    assert len(reader.active_in(["project:a", "global"])) == 5001 - 750
    assert all(s == pytest.approx(1.0) for _, s in found)
    assert reader.similarities(["b_0003", "b_0002", "b_0001", "b_9999"], [0.0, 2.0, 0.0, 0.0]) == pytest.approx(
        {"b_0003": 0.0, "b_0002": 0.0}
    )
    assert [b.id for b, _ in reader.keyword_search(["model", "away"], ["global"], 5)] == ["b_9999"]


def test_searches_that_find_the_copy_stale_at_once_reload_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = writer_and_reader(tmp_path, 50)
    writer.add([bullet(60)])  # another process writes: the reader's copy is stale
    (tmp_path / "generation.log").unlink()  # and the log cannot say what changed: the copy is reloaded
    reloads = count_reloads(monkeypatch, pause=0.3)  # long enough for every search below to find it stale
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda _: reader.similar([1.0, 0, 0, 0], ["global"], 100), range(4)))
    assert len(reloads) == 1  # at 100k bullets each extra reload would hold another 177 MB copy
    assert all(len(f) == 51 for f in found)


def test_a_search_during_an_append_uses_the_rows_already_complete(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(i) for i in range(8)])
    index = s._vectors
    assert len(s.similar([1.0, 0, 0, 0], ["global"], 100)) == 8
    # Where a writer in another thread is halfway through an append: ids and scope codes extended, the
    # matrix not yet.
    index._ids.append("b_0100")
    index._where["b_0100"] = 8
    index._scope_codes = np.append(index._scope_codes, index._scope_codes[0])
    assert len(index.search([1.0, 0, 0, 0], ["global"], 100)) == 8
    assert set(index.similarities(["b_0000", "b_0100"], [1.0, 0, 0, 0])) == {"b_0000"}


def test_a_copy_behind_another_process_fetches_just_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = writer_and_reader(tmp_path, 20)
    reloads = count_reloads(monkeypatch)
    writer.add([bullet(20), bullet(24, "changed later")])  # other process: two new bullets,
    writer.upsert([bullet(4, "bullet four, edited")])  # one edited,
    writer.delete(["b_0008"])  # one deleted,
    writer.add([bullet(28)])
    writer.delete(["b_0028"])  # and one added and deleted again
    found = {b.id: b for b, _ in reader.similar([1.0, 0, 0, 0], ["global"], 100)}
    assert set(found) == {f"b_{i:04d}" for i in (*range(20), 20, 24)} - {"b_0008"}
    assert found["b_0004"].content == "bullet four, edited"
    assert reloads == []  # caught up from the log, without reading the whole table
    writer.set_status(["b_0000"], Status.ARCHIVED, T0)
    writer.set_status(["b_0000"], Status.ACTIVE, T0)  # restoring is not logged exactly: a reload
    assert "b_0000" in {b.id for b, _ in reader.similar([1.0, 0, 0, 0], ["global"], 100)}
    assert reloads == [1]


def test_the_change_log_stays_small_and_a_copy_too_far_behind_reloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "_LOG_BYTES", 2_000)
    writer, behind = writer_and_reader(tmp_path, 1)
    for i in range(1, 60):
        writer.add([bullet(i)])
    assert (tmp_path / "generation.log").stat().st_size < 2_000 + 200
    assert len(behind.similar([1.0, 0, 0, 0], ["global"], 100)) == 60  # its generations left the log: reloaded


def test_a_store_indexes_what_every_search_filters_on_and_an_older_one_gets_them_on_open(tmp_path: Path) -> None:
    s = open_store(tmp_path)
    s.add([bullet(1, scope="project:a"), bullet(2)])
    kinds = {tuple(ix.columns): ix.index_type for ix in s._bullets.list_indices()}
    assert kinds == {("id",): "BTree", ("scope",): "Bitmap", ("status",): "Bitmap"}  # keywords: in memory
    for name in ("scope_idx", "status_idx"):  # as a store made before these indexes
        s._bullets.drop_index(name)
    reopened = open_store(tmp_path)
    assert {tuple(ix.columns) for ix in reopened._bullets.list_indices()} == set(kinds)
    assert [b.id for b in reopened.keyword_candidates(query_terms("bullet"), ["project:a"], 5)] == ["b_0001"]


def test_a_reader_sees_a_bullet_erased_then_stored_again_under_its_id(tmp_path: Path) -> None:
    # what approving a learned bullet does (`memx review`): its pending row goes, the active one comes back
    writer, reader = writer_and_reader(tmp_path, 5)
    pending = bullet(7).with_changes(status=Status.PENDING)
    writer.add([pending])
    assert "b_0007" not in {b.id for b in reader.active_in(["global"])}
    writer.delete(["b_0007"])
    writer.add([pending.with_changes(status=Status.ACTIVE)])
    assert "b_0007" in {b.id for b in reader.active_in(["global"])}
    assert "b_0007" in {b.id for b, _ in reader.similar([0.0, 0.0, 0.0, 1.0], ["global"], 10)}


def test_column_counts_are_read_once_until_a_write_here_or_elsewhere_changes_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[str] = []
    original = LanceStore._column_counts

    def counted(self: LanceStore, column: str) -> dict[str, int]:
        scans.append(column)
        return original(self, column)

    monkeypatch.setattr(LanceStore, "_column_counts", counted)
    s = open_store(tmp_path)
    s.add([bullet(1, scope="project:a"), bullet(2, scope="project:a")])
    assert s.column_counts("scope") == {"project:a": 2}
    assert s.column_counts("scope") == {"project:a": 2} and scans == ["scope"]  # the second from what was read
    s.column_counts("scope")["project:z"] = 9  # a caller's change to its answer is its own
    assert s.column_counts("scope") == {"project:a": 2}
    s.mark_recalled({"b_0001": 1}, T0)  # recall counts: no column counted here changes
    assert s.column_counts("scope") == {"project:a": 2} and scans == ["scope"]
    open_store(tmp_path).add([bullet(3, scope="project:b")])  # another writer (another process's store)
    assert s.column_counts("scope") == {"project:a": 2, "project:b": 1}
    s.set_status(["b_0001"], Status.ARCHIVED, T0)
    assert s.column_counts("status") == {"active": 2, "archived": 1}
    s.delete(["b_0002"])
    assert s.column_counts("scope") == {"project:a": 1, "project:b": 1}
    assert scans == ["scope", "scope", "status", "scope"]
