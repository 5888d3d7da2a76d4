"""The in-memory lexical index (``adapters/lance/lexical.py``): BM25 with store-level statistics over the
stored terms, the same as a brute-force BM25 over the same rows and as LanceDB's own full-text index, and
kept current across writes here and in another store object on the same folder."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memx_mcp.adapters.lance import lexical
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.adapters.lance.lexical import LexicalIndex, split_terms
from memx_mcp.adapters.lance.rows import index_text
from memx_mcp.domain.models import Bullet, Status
from memx_mcp.memory import Memory
from memx_mcp.text.tokenize import query_terms

from ...conftest import T0
from .test_lance import bullet, open_store

WORDS = "redis pool timeout docker port cache worker queue nginx build token proxy".split()
CJK = ["连接池", "东京の天気", "缓存超时", "天気は晴れ"]
SCOPES = ["global", "project:a", "project:b", "project:a/workspace:w"]


def brute_force(
    bullets: Sequence[Bullet], terms: Sequence[str], scopes: Sequence[str], limit: int
) -> list[tuple[str, float]]:
    """BM25 computed bullet by bullet from each bullet's ``index_text``: statistics over every active
    bullet, candidates those of ``scopes`` holding a query term; best first, ties by id."""
    active = [b for b in bullets if b.status is Status.ACTIVE]
    docs = {b.id: Counter(split_terms(index_text(b))) for b in active}
    n = len(docs)
    mean = sum(sum(c.values()) for c in docs.values()) / n
    query = list(dict.fromkeys(split_terms(" ".join(terms))))
    df = {t: sum(1 for c in docs.values() if t in c) for t in query}
    scores = {}
    for b in active:
        c, length = docs[b.id], sum(docs[b.id].values())
        score = 0.0
        for t in query:
            if c[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += (
                    idf * c[t] * (lexical.K1 + 1) / (c[t] + lexical.K1 * (1 - lexical.B + lexical.B * length / mean))
                )
        if score > 0 and b.scope in scopes:
            scores[b.id] = score
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:limit]


def text_of(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 9))]
    if rng.random() < 0.3:
        words.append(rng.choice(CJK))
    if rng.random() < 0.1:
        words.append("x" * 70)  # a token of 64 bytes or more: left out, as LanceDB's index did
    return " ".join(words)


def same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-9)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_the_index_ranks_as_a_brute_force_bm25_over_the_same_rows_through_writes_here_and_elsewhere(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(lexical, "_FOLD_MIN", 3)  # fold the appendix and the removed slots often
    rng = random.Random(seed)
    root = tmp_path_factory.mktemp("lexical")
    writer = open_store(root)
    made = {i: bullet(i, text_of(rng), rng.choice(SCOPES)) for i in range(40)}
    writer.add(list(made.values()))
    reader = open_store(root)  # another process: built from the table, then kept current by the change log
    for step in range(12):
        action = rng.random()
        ids = rng.sample(sorted(made), 3)
        if action < 0.4:
            new = [bullet(1000 + 10 * step + k, text_of(rng), rng.choice(SCOPES)) for k in range(rng.randint(1, 4))]
            writer.add(new)
            made.update({int(b.id[2:]): b for b in new})
        elif action < 0.6:
            writer.set_status([f"b_{i:04d}" for i in ids], Status.ARCHIVED, T0)
        elif action < 0.75:
            changed = [made[i].with_changes(content=text_of(rng)) for i in ids]
            writer.upsert(changed)
            made.update({i: b for i, b in zip(ids, changed, strict=True)})
        elif action < 0.85:
            writer.delete([f"b_{i:04d}" for i in ids])
            for i in ids:
                made.pop(i)
        else:
            writer.set_status([f"b_{i:04d}" for i in ids], Status.ACTIVE, T0)  # a restore: the copy reloads
        stored = writer.all_bullets()
        for store in (writer, reader):
            for query in ("redis pool", "timeout of the docker port", "连接池 缓存", "天気", "cache"):
                scopes = rng.sample(SCOPES, rng.randint(1, 3))
                terms = query_terms(query)
                found = [(b.id, s) for b, s in store.keyword_search(terms, scopes, 7)]
                same(found, brute_force(stored, terms, scopes, 7))


def test_the_scores_are_lancedbs_own_full_text_scores(tmp_path: Path) -> None:
    """The same tokens, the same BM25: LanceDB's full-text index made as memx made it before, over the same
    table, gives the same scores (up to its float32)."""
    from lancedb.index import FTS

    store = open_store(tmp_path)
    rng = random.Random(5)
    store.add([bullet(i, text_of(rng), rng.choice(SCOPES[:2])) for i in range(60)])
    config = FTS(
        base_tokenizer="whitespace",
        lower_case=True,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
        max_token_length=64,
    )
    store._bullets.create_index("terms", config=config, replace=True)
    matched = 0
    for query in ("redis pool", "docker port timeout", "连接池", "nginx token proxy worker"):
        terms = query_terms(query)
        lance = store._bullets.search(" ".join(terms), query_type="fts").where(
            "status = 'active' AND scope IN ('global')", prefilter=True
        )
        expected = {r["id"]: r["_score"] for r in lance.select(["id", "_score"]).limit(100).to_list()}
        found = dict((b.id, s) for b, s in store.keyword_search(terms, ["global"], 100))
        assert found == pytest.approx(expected, rel=1e-5)
        matched += len(found)
    assert matched > 40


def test_a_write_in_another_store_object_is_seen_by_the_next_keyword_search(tmp_path: Path) -> None:
    writer = open_store(tmp_path)
    writer.add([bullet(1, "restart the redis pool"), bullet(2, "the docker port is 8001")])
    reader = open_store(tmp_path)
    assert [b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)] == ["b_0001"]
    with reader.one_read():  # one recall sees one state of the store: as at its first read
        assert [b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)] == ["b_0001"]
        writer.add([bullet(3, "redis needs a bigger pool")])
        assert [b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)] == ["b_0001"]
    # the next one sees the write
    assert {b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)} == {"b_0001", "b_0003"}
    writer.set_status(["b_0001"], Status.ARCHIVED, T0)
    assert [b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)] == ["b_0003"]
    writer.delete(["b_0003"])
    assert reader.keyword_search(["pool"], ["global"], 5) == []
    writer.set_status(["b_0001"], Status.ACTIVE, T0)  # restored: back in the index
    assert [b.id for b, _ in reader.keyword_search(["pool"], ["global"], 5)] == ["b_0001"]
    assert [b.id for b, _ in writer.keyword_search(["pool"], ["global"], 5)] == ["b_0001"]


def test_keyword_candidates_are_filtered_by_scope_and_chinese_and_japanese_match_by_bigrams(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.add(
        [
            bullet(1, "Redis 连接池 needs 50 connections", scope="project:a"),
            bullet(2, "東京の天気は晴れです", scope="project:b"),
            bullet(3, "redis 连接 timeout", scope="global"),
        ]
    )
    assert [b.id for b, _ in store.keyword_search(["连接"], ["project:a"], 5)] == ["b_0001"]
    assert {b.id for b, _ in store.keyword_search(["连接"], ["project:a", "global"], 5)} == {"b_0001", "b_0003"}
    assert [b.id for b, _ in store.keyword_search(["天気"], ["project:b", "global"], 5)] == ["b_0002"]
    assert store.keyword_search(["天気"], ["project:a", "global"], 5) == []
    assert store.keyword_search(["连接"], ["project:zzz"], 5) == []


def test_a_forgotten_bullet_leaves_the_keyword_results_and_a_purged_one_too(memory: Memory) -> None:
    kept = memory.remember("Use ripgrep to search the monorepo for TODO markers", scope="global").bullet
    gone = memory.remember("The ripgrep config lives in ~/.ripgreprc for this monorepo", scope="global").bullet
    erased = memory.remember("ripgrep skips files listed in .gitignore unless --no-ignore", scope="global").bullet
    assert kept is not None and gone is not None and erased is not None
    found = {b.id for b, _ in memory.store.keyword_search(query_terms("ripgrep"), ["global"], 10)}
    assert found == {kept.id, gone.id, erased.id}
    memory.forget([gone.id])
    memory.forget([erased.id], purge=True)
    assert [b.id for b, _ in memory.store.keyword_search(query_terms("ripgrep"), ["global"], 10)] == [kept.id]
    assert [h.bullet.id for h in memory.recall("ripgrep", scope="global").hits] == [kept.id]


def test_an_index_folds_its_appendix_and_removed_bullets_into_one_block_with_the_same_answers() -> None:
    index = LexicalIndex()
    import pyarrow as pa

    index.build(["a", "b"], ["global", "global"], pa.array(["redis pool", "docker port"]))
    before = index.search(["redis"], ["global"], 5)
    index.update([(f"n{k}", "global", f"redis note {k}") for k in range(600)], ["b"])
    assert index._extra == {} and index._base == 601  # folded: one block of the live bullets
    assert len(index) == 601 and index.document_frequency("redis") == 601
    assert index.search(["docker"], ["global"], 5) == []
    assert index.search(["redis"], ["global"], 1)[0][0] == "a"  # the shortest text with the term
    assert before[0][0] == "a"
    index.update([], [f"n{k}" for k in range(600)])
    assert index.search(["redis"], ["global"], 5) == [("a", pytest.approx(math.log(1 + 0.5 / 1.5) * 2.2 / 2.2))]


def test_a_store_made_with_the_full_text_index_of_an_earlier_memx_loses_it_on_open(tmp_path: Path) -> None:
    from lancedb.index import FTS

    s: LanceStore = open_store(tmp_path)
    s.add([bullet(1, scope="project:a"), bullet(2)])
    s._bullets.create_index("terms", config=FTS(base_tokenizer="whitespace"), replace=True)
    reopened = open_store(tmp_path)
    kinds = {tuple(ix.columns): ix.index_type for ix in reopened._bullets.list_indices()}
    assert kinds == {("id",): "BTree", ("scope",): "Bitmap", ("status",): "Bitmap"}
    assert [b.id for b, _ in reopened.keyword_search(query_terms("bullet"), ["project:a"], 5)] == ["b_0001"]
