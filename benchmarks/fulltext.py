"""The full-text query and the row conversion behind every recall, on the store `speed.py` builds:

1. a full-text query under the scope/status filter through LanceDB's sync API and through memx's
   `FullTextReader` (its async API, one hand-off), then the same after dropping the bitmap indexes on
   `scope` and `status` (as a store made before them; they are rebuilt at the end);
2. 50 rows of the in-memory copy turned into Bullets: pyarrow's own row conversion (`to_pylist`, what
   memx did before) against `table_to_bullets` (column by column).

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
    where = store._visible(["global", "project:p1"])
    table, name = store._bullets, store._bullets_name

    def sync(text: str) -> object:
        query = table.search(text, query_type="fts").where(where, prefilter=True).select(["id", "_score"])
        return query.limit(50).to_arrow()

    def reader(text: str) -> object:
        return store._fulltext.search(name, text, where, 50)

    reader(texts[0])
    found = {}
    for label in ("bitmaps", "no bitmaps"):
        if label == "no bitmaps":
            for index in ("scope_idx", "status_idx"):
                table.drop_index(index)
        found[label] = (p50_ms(sync, texts), p50_ms(reader, texts))
    store._ensure_indexes()
    print(
        f"{size:>7} bullets, full-text query p50: with bitmaps sync API {found['bitmaps'][0]:.2f} ms, "
        f"memx reader {found['bitmaps'][1]:.2f} ms; without bitmaps sync API {found['no bitmaps'][0]:.2f} ms, "
        f"memx reader {found['no bitmaps'][1]:.2f} ms",
        flush=True,
    )
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
