"""Keyword candidates behind every recall, on the store `speed.py` builds: LanceDB's full-text query (the
index memx kept until the seventh round, made here on the same table with the same settings; sync API, the
scope/status filter applied first) against the in-memory lexical index (`adapters/lance/lexical.py`) that
replaced it: the time of one query for the top 50, and whether both give the same bullets with the same
scores (the same BM25; bullets tied at the 50th score may be cut differently). Then 50 rows of the
in-memory copy turned into Bullets: pyarrow's own row conversion against `table_to_bullets`.

    python benchmarks/fulltext.py [--sizes 10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from memx_mcp.adapters.lance.rows import table_to_bullets
from memx_mcp.text.tokenize import query_terms
from speed import THINGS, TOOLS, VERBS, build


def p50_ms(run: Callable[[str], object], items: list[str]) -> float:
    times = []
    for item in items:
        t = time.perf_counter()
        run(item)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def measure(size: int, queries: int, rng: random.Random) -> None:
    memory, _ = build(size)
    store = memory.store
    texts = [
        " ".join(query_terms(f"how do I {rng.choice(VERBS)} the {rng.choice(THINGS)} of {rng.choice(TOOLS)}?"))
        for _ in range(queries)
    ]
    scopes = ["global", "project:p1"]
    where = store._visible(scopes)
    table = store._bullets
    from lancedb.index import FTS

    config = FTS(
        base_tokenizer="whitespace",
        lower_case=True,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
        max_token_length=64,
    )
    table.create_index("terms", config=config, replace=True)

    def lance(text: str) -> dict[str, float]:
        query = table.search(text, query_type="fts").where(where, prefilter=True).select(["id", "_score"])
        found = query.limit(50).to_arrow()
        return dict(zip(found.column("id").to_pylist(), found.column("_score").to_pylist(), strict=True))

    def lexical(text: str) -> dict[str, float]:
        return dict(store._vectors.lexical_search(text.split(), scopes, 50))

    store.warm()
    same_sets = only_ties = worst = 0.0
    for text in texts:
        a, b = lance(text), lexical(text)
        same_sets += set(a) == set(b)
        worst = max([worst, *(abs(a[i] - b[i]) / a[i] for i in set(a) & set(b))])
        cut = min(min(a.values(), default=0.0), min(b.values(), default=0.0))
        # a bullet in one set only is tied with the 50th score of both (the two cut ties in their own order)
        only_ties += all(abs({**a, **b}[i] - cut) <= 1e-5 * cut for i in set(a) ^ set(b)) and (
            abs(min(a.values(), default=0.0) - min(b.values(), default=0.0)) <= 1e-5 * cut
        )
    print(
        f"{size:>7} bullets, top 50 keyword candidates p50: LanceDB full-text query {p50_ms(lance, texts):.2f} ms, "
        f"in-memory index {p50_ms(lexical, texts):.2f} ms; same set of bullets in {same_sets:.0f} of {len(texts)} "
        f"queries, sets that differ only by bullets tied at the 50th score: {only_ties - same_sets:.0f}, "
        f"largest relative score difference {worst:.1e}",
        flush=True,
    )
    for ix in table.list_indices():  # as memx keeps the store
        if ix.index_type == "FTS":
            table.drop_index(ix.name)
    memory.recall(texts[0], scope="project:p1")  # builds the copy
    rows = store._vectors._rows
    assert rows is not None
    picks = {str(k): rng.sample(range(rows.num_rows), 50) for k in range(queries)}
    pylist = p50_ms(lambda k: rows.take(picks[k]).to_pylist(), list(picks))
    columns = p50_ms(lambda k: table_to_bullets(rows.take(picks[k])), list(picks))
    print(
        f"{size:>7} bullets, 50 rows of the copy: pyarrow to_pylist {pylist:.2f} ms (dicts only), "
        f"table_to_bullets {columns:.2f} ms (Bullets)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(3)
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.queries, rng)


if __name__ == "__main__":
    main()
