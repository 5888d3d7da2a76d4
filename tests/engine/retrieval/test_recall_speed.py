"""Recall made faster without a different answer: the learned ranking's scope features made per query
and over the query's stems only, term profiles and Bullets kept per generation, the vector search's rows
gathered while the query is embedded. Each is checked against the plain form it replaces (the formula as
it was written before, or the same call without the shortcut) to the last bit, and on a real store
against a fresh Memory after writes (nothing kept answers stale)."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memx_mcp.adapters.fastembed import FastEmbedEmbedder
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.models import Bullet, KnowledgeType, Section, Status
from memx_mcp.engine.retrieval.generator import TermsCache, profile_of, term_profiles
from memx_mcp.engine.retrieval.ranking import (
    CONTEXT_FIELD,
    K1,
    B,
    ScopeStats,
    lead_label,
    scope_features,
    scope_stats,
)
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder
from memx_mcp.text import stems, tokenize
from memx_mcp.text.stems import STOP_LIST, names, query_stems, stem_counts

from ...conftest import MODEL, Clock

WORDS = (
    "caroline melanie paint painting painted sunrise lake group support show art lunch kids fence porch redis "
    "pytest workers timeout retries deploy deploys branch cache caching cached port proxy the a of for with"
).split()


def _reference_bm25(query: Sequence[str], idf: Mapping[str, float], counts: Mapping[str, float], mean: float) -> float:
    norm = K1 * (1.0 - B + B * sum(counts.values()) / (mean or 1.0))
    return sum(idf[s] * counts[s] * (K1 + 1.0) / (counts[s] + norm) for s in query if counts.get(s))


def reference_scope_features(
    query: Sequence[str], said: frozenset[str], bullet: str, own: Mapping[str, int], label: str, stats: ScopeStats
) -> tuple[float, ...]:
    """``scope_features`` as it was written before it was made per query (r7, 30596d4cc5b4's features)."""
    idf = {s: stats.idf(s) for s in query}
    most = sum(idf.values()) * (K1 + 1.0)
    speaker = 1.0 if label and label in said else 0.0
    other = 1.0 if not speaker and any(n in stats.labels and n != label for n in said) else 0.0
    if not most:
        return (0.0,) * 6 + (speaker, other)
    before = stats.stems.get(stats.before.get(bullet, ""), {})
    after = stats.stems.get(stats.after.get(bullet, ""), {})
    merged: Counter[str] = Counter(own)
    for near in (before, after):
        for s, c in near.items():
            merged[s] += CONTEXT_FIELD * c  # type: ignore[assignment]
    idf_total = sum(idf.values())
    return (
        _reference_bm25(query, idf, own, stats.mean_length) / most,
        _reference_bm25(query, idf, before, stats.mean_length) / most,
        _reference_bm25(query, idf, after, stats.mean_length) / most,
        _reference_bm25(query, idf, merged, stats.mean_length * (1.0 + 2 * CONTEXT_FIELD)) / most,
        sum(idf[s] for s in query if s in own) / idf_total,
        sum(idf[s] for s in query if s in own or s in before or s in after) / idf_total,
        speaker,
        other,
    )


def conversation(seed: int, n: int = 60) -> list[Bullet]:
    rng = random.Random(seed)
    start = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    out = []
    at = start
    for i in range(n):
        at += timedelta(seconds=rng.choice((30, 30, 30, 0, 7200)))  # turns, a batch, a new session
        who = rng.choice(("Caroline", "Melanie", "", "Dr. Who"))
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14)))
        content = f"{who}: {text}" if who else text
        scope = rng.choice(("project:talk", "project:talk", "global"))
        out.append(Bullet(f"t{i}", content, Section.GENERAL, KnowledgeType.KNOWLEDGE, 50, 1, "manual", scope, at, at))
    return out


def test_scope_features_made_per_query_equal_the_formula_they_replace_to_the_last_bit() -> None:
    for seed in range(12):
        bullets = conversation(seed)
        stats = scope_stats(bullets, window=3600.0)
        rng = random.Random(100 + seed)
        for _ in range(15):
            text = " ".join(rng.choice([*WORDS, "Caroline", "Melanie", "zebra"]) for _ in range(rng.randint(1, 6)))
            q, said = query_stems(text), names("Asked " + text)
            for b in bullets:
                own, label = stem_counts(b.content), lead_label(b.content)
                got = scope_features(q, said, b.id, own, label, stats)
                assert got == reference_scope_features(q, said, b.id, own, label, stats), (seed, text, b.id)


def test_scope_statistics_from_profiles_made_already_equal_those_made_from_the_texts() -> None:
    bullets = conversation(3)
    cache: TermsCache = {}
    made = {i: p.stems for i, p in term_profiles(bullets, cache).items()}
    assert scope_stats(bullets, 3600.0, made) == scope_stats(bullets, 3600.0)
    assert len(cache) == len(bullets)
    assert term_profiles(bullets[:5], cache)["t0"] is cache["t0"][1]  # found, not made again


def _reference_tokens(text: str) -> list[str]:
    out: list[str] = []
    for chunk in tokenize._CHUNK.findall(text):
        out.extend(tokenize._cjk_terms(chunk) if tokenize._CJK_RUN.match(chunk) else tokenize._latin_terms(chunk))
    return out


def test_kept_chunk_terms_and_stems_give_what_splitting_each_text_afresh_gives() -> None:
    texts = [
        "Run `pytest -n 4 --max-workers=8` in src/memx_mcp/engine.py (ConnectionRefusedError)",
        "部署前先运行数据库迁移，否则服务会启动失败。" * 3,  # one chunk longer than the kept ones
        "デプロイの前にマイグレーションを実行してください",
        "Caroline: I painted a sunrise; the painting's colours were stunning!",
        "x" * 70 + " the a " + "snake_case_name.CamelCaseThing",
    ]
    for _ in range(2):  # the second time from what was kept
        for text in texts:
            got = tokenize.tokens(text)
            assert got == _reference_tokens(text)
            got.append("mutated")  # a caller's list is its own: nothing kept changes
            assert tokenize.tokens(text) == _reference_tokens(text)
            reference = Counter(
                stems._stem(w)
                for w in stems._WORD.findall(text.lower())
                if w not in STOP_LIST and stems._LATIN.match(w) and len(w) > 1
            )
            assert stem_counts(text) == reference


def test_a_profile_keeps_the_token_estimate_and_lead_label_of_its_text() -> None:
    from memx_mcp.engine.retrieval.budget import estimate_tokens

    for b in conversation(5, 20):
        p = profile_of(b)
        assert p.tokens == estimate_tokens(b.content) and p.label == lead_label(b.content)


def _store_with(tmp_path_store: LanceStore, count: int = 300) -> list[Bullet]:
    rng = np.random.default_rng(1)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    made = []
    for i in range(count):
        v = rng.normal(size=384).astype(np.float32)
        v /= np.linalg.norm(v)
        made.append(
            Bullet(
                f"b_{i:04d}",
                f"note {i} about " + " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)),
                Section.GENERAL,
                KnowledgeType.KNOWLEDGE,
                50,
                1,
                "manual",
                ("project:a", "project:b", "global")[i % 3],
                at,
                at,
                vector=tuple(v.tolist()),
            )
        )
    tmp_path_store.add(made)
    return made


def _found(store: LanceStore, q: list[float], scopes: list[str]) -> list[tuple[str, float]]:
    return [(b.id, sim) for b, sim in store.similar(q, scopes, 20, fresh=False)]


def test_a_vector_search_prepared_before_the_vector_is_known_finds_what_an_unprepared_one_finds(
    store: LanceStore,
) -> None:
    _store_with(store)
    rng = np.random.default_rng(7)
    for scopes in (["project:a"], ["project:a", "global"], ["project:a", "project:b", "global"], ["nowhere"]):
        for _ in range(5):
            q = rng.normal(size=384).astype(np.float32).tolist()
            plain = _found(store, q, scopes)
            assert len(plain) == (0 if scopes == ["nowhere"] else 20)
            store.prepare_vector_search(scopes)
            assert getattr(store._vectors._prepared, "made", None) is not None
            assert _found(store, q, scopes) == plain  # ids and similarities, to the last bit
            assert getattr(store._vectors._prepared, "made", None) is None  # used once
            store.prepare_vector_search(["project:b"])  # prepared for other scopes: not used
            assert _found(store, q, scopes) == plain


def test_a_prepared_vector_search_is_not_used_once_the_copy_changed(store: LanceStore, settings: Settings) -> None:
    made = _store_with(store)
    q = list(made[0].vector or ())
    assert _found(store, q, ["project:a"])[0][0] == made[0].id
    store.prepare_vector_search(["project:a"])
    store.set_status([made[0].id], Status.ARCHIVED, datetime(2026, 1, 2, tzinfo=UTC))  # a write here
    got = _found(store, q, ["project:a"])
    assert made[0].id not in [i for i, _ in got] and len(got) == 20
    assert got == _found(store, q, ["project:a"])  # what an unprepared search of the copy finds now
    store.prepare_vector_search(["project:a"])
    store.add([made[0].with_changes(id="b_new", status=Status.ACTIVE)])  # an addition extends the copy
    assert _found(store, q, ["project:a"])[0][0] == "b_new"
    store.prepare_vector_search(["project:a"])
    other = LanceStore(settings.home / "store", MODEL, 384)  # another process's writer
    other.set_status(["b_new"], Status.ARCHIVED, datetime(2026, 1, 3, tzinfo=UTC))
    assert _found(store, q, ["project:a"]) == got  # caught up from the change log: new arrays, not the prepared
    with store.one_read():
        store.prepare_vector_search(["project:a"])
    assert getattr(store._vectors._prepared, "made", None) is None  # let go with the recall's reads


def test_the_bullets_kept_for_a_scope_follow_writes(store: LanceStore, settings: Settings) -> None:
    made = _store_with(store)
    first = store.active_in(["project:a"])
    assert len(first) == 100
    again = store.active_in(["project:a"])
    assert [b.id for b in again] == [b.id for b in first] and all(x is y for x, y in zip(first, again, strict=True))
    store.upsert([made[0].with_changes(content="note 0 rewritten")])
    assert next(b for b in store.active_in(["project:a"]) if b.id == made[0].id).content == "note 0 rewritten"
    other = LanceStore(settings.home / "store", MODEL, 384)  # another process's writer
    other.set_status([made[3].id], Status.ARCHIVED, datetime(2026, 1, 2, tzinfo=UTC))
    assert made[3].id not in {b.id for b in store.active_in(["project:a"])}


def _answers(memory: Memory, queries: Sequence[str]) -> list[list[tuple[str, float, float, float]]]:
    out = []
    for q in queries:
        r = memory.recall(q, scope="project:demo", max_results=8, reinforce=False)
        out.append([(h.bullet.id, h.score.final, h.score.blended, h.score.semantic) for h in r.hits])
    return out


def test_recall_kept_warm_answers_as_a_fresh_memory_does_after_every_kind_of_write(
    memory: Memory, settings: Settings, embedder: FastEmbedEmbedder, clock: Clock, tmp_path: Path
) -> None:
    at = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    lines = []
    for i, (who, text) in enumerate(
        itertools.product(
            ("Caroline", "Melanie"),
            (
                "I painted a sunrise over the lake",
                "the art show sold out on Friday",
                "use pytest -n auto to run the tests in parallel",
                "the redis cache times out after 30 s under load",
                "deploys go through the release branch",
            ),
        )
    ):
        when = (at + timedelta(seconds=30 * i)).isoformat()
        lines.append(
            f'{{"id": "b_{i}", "content": "{who}: {text}", "scope": "project:demo", '
            f'"created_at": "{when}", "updated_at": "{when}"}}'
        )
    assert memory.import_records(lines).errors == []
    queries = ["What did Caroline paint?", "how do I run the tests in parallel", "redis cache timeout", "art show"]
    for ranking in ("learned", "spec"):
        memory.settings = Settings(home=settings.home, ranking=ranking)
        cold = _answers(memory, queries)
        assert _answers(memory, queries) == cold  # the kept profiles, Bullets and statistics: the same
        writes = [
            lambda: memory.remember("Caroline: I painted the fence blue on Sunday", scope="project:demo"),
            lambda: memory.forget(["b_0"]),
            lambda: memory.store.upsert(
                [memory.store.get(["b_3"])[0].with_changes(content="Caroline: redis cache timeouts under load")]
            ),
        ]
        for write in writes:
            write()
            store = LanceStore(settings.home / "store", MODEL, 384)  # nothing kept: what the store says now
            fresh = Memory(memory.settings, store, ReadyEmbedder(embedder), clock=clock, cwd=tmp_path)
            expected = _answers(fresh, queries)
            got = _answers(memory, queries)
            for a, b in zip(got, expected, strict=True):
                assert [x[0] for x in a] == [x[0] for x in b]
                assert all(
                    math.isclose(x, y, rel_tol=0, abs_tol=1e-9)
                    for p, q in zip(a, b, strict=True)
                    for x, y in zip(p[1:], q[1:], strict=True)
                )
