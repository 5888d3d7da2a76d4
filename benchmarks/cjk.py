"""Japanese and Chinese retrieval: JSQuAD (JGLUE) and CMRC 2018 dev sets (benchmarks/data/cjk, CC BY-SA 4.0).

Every paragraph is a bullet (one project scope per data set); every question is a query. recall@5 = the
share of questions whose paragraph is in the top 5; MRR@10 = the mean reciprocal rank of that paragraph in
the top 10. Baseline in the same run: BM25 over character bigrams (LanceDB full text on a bigram field).
memx runs with each model named (default: the shipped MiniLM, keyword-only for CJK questions as shipped,
and multilingual-e5-small, hybrid), each in a store of its own.

    python benchmarks/cjk.py [--limit N] [--models minilm,e5,e5c,use]   # the first N questions of each set
    python benchmarks/cjk.py --mixed --limit 300 --models use [--no-cross-language]

``--mixed`` (issue 33): both sets' paragraphs in one scope, so that a Japanese question meets Chinese
paragraphs that the cross-language rule judges by similarity alone; ``--no-cross-language`` turns the rule
off (an experiment).
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import pairwise
from pathlib import Path

from harness import bullet_record, fresh_memory, load, memx
from memx_mcp.domain.catalog import E5_CENTRED, E5_SMALL, MINILM, MUSE, spec

DATA = Path(__file__).parent / "data" / "cjk"
SETS = {"jsquad": DATA / "jsquad" / "valid-v1.3.json", "cmrc2018": DATA / "cmrc2018" / "cmrc2018_dev.json"}


def bigrams(text: str) -> str:
    chars = [c for c in text if not c.isspace()]
    return " ".join(a + b for a, b in pairwise(chars))


class BigramBM25:
    def __init__(self, rows: list[dict], home: Path, name: str) -> None:
        import lancedb
        from lancedb.index import FTS

        db = lancedb.connect(str(home / "bigram-bm25"))
        self.table = db.create_table(name, data=[{"id": r["id"], "grams": bigrams(r["content"])} for r in rows])
        self.table.create_index(
            "grams",
            config=FTS(
                base_tokenizer="whitespace", stem=False, remove_stop_words=False, ascii_folding=False, lower_case=True
            ),
        )

    def __call__(self, query: str, k: int) -> list[str]:
        rows = self.table.search(bigrams(query), query_type="fts").select(["id", "_score"]).limit(k).to_list()
        return [r["id"] for r in rows]


def load_set(name: str, path: Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """The set's paragraphs as bullet records (one project scope per set) and its (question, paragraph
    id) pairs."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    rows, questions = [], []
    for a, article in enumerate(data):
        for p, para in enumerate(article["paragraphs"]):
            pid = f"{name}-{a}-{p}"
            rows.append(bullet_record(pid, para["context"], f"project:{name}"))
            questions += [(q["question"], pid) for q in para["qas"]]
    return rows, questions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--mixed", action="store_true", help="both sets in one scope")
    parser.add_argument("--no-cross-language", action="store_true", help="experiment: the rule off")
    args = parser.parse_args()
    if args.no_cross_language:
        import dataclasses

        from memx_mcp.domain import catalog
        from memx_mcp.usecases import deps

        deps.spec = lambda name, dim=384: dataclasses.replace(catalog.spec(name, dim), cross_language=False)  # type: ignore[assignment]
    if args.mixed:
        mixed(args)
        return
    models = {"minilm": MINILM, "e5": E5_SMALL, "e5c": E5_CENTRED, "use": MUSE}
    print("| set | paragraphs | questions | ranker | recall@5 | MRR@10 | ms/query |")
    print("|---|---|---|---|---|---|---|")
    for name, path in SETS.items():
        rows, questions = load_set(name, path)
        if args.limit:
            questions = questions[: args.limit]
        rankers = {}
        for short in args.models.split(","):
            memory = fresh_memory(model_name=models[short], model_dim=spec(models[short]).dim)
            load(memory, rows)
            rankers[f"memx recall, {short}"] = lambda q, m=memory, s=f"project:{name}": memx(m, q, s, 10)
        baseline = BigramBM25(rows, memory.settings.home, name)
        rankers = {"character-bigram BM25": lambda q, b=baseline: b(q, 10), **rankers}
        for ranker, rank in rankers.items():
            at5 = mrr = 0.0
            start = time.perf_counter()
            for question, gold in questions:
                top = rank(question)
                at5 += gold in top[:5]
                mrr += 1 / (top.index(gold) + 1) if gold in top else 0
            ms = (time.perf_counter() - start) * 1000 / len(questions)
            print(
                f"| {name} | {len(rows)} | {len(questions)} | {ranker} | {at5 / len(questions):.3f} | "
                f"{mrr / len(questions):.3f} | {ms:.1f} |",
                flush=True,
            )


def mixed(args: argparse.Namespace) -> None:
    """Both sets in one scope; the first ``--limit`` questions of each, recall@5 per set."""
    models = {"minilm": MINILM, "e5": E5_SMALL, "e5c": E5_CENTRED, "use": MUSE}
    rows, questions = [], {}
    for name, path in SETS.items():
        r, q = load_set(name, path)
        rows += [{**x, "scope": "project:mixed"} for x in r]
        questions[name] = q[: args.limit] if args.limit else q
    print("| sets in one scope | ranker | JSQuAD recall@5 | CMRC recall@5 |")
    print("|---|---|---|---|")
    for short in args.models.split(","):
        memory = fresh_memory(model_name=models[short], model_dim=spec(models[short]).dim)
        load(memory, rows)
        cells = []
        for qs in questions.values():
            hits = sum(gold in memx(memory, q, "project:mixed", 5) for q, gold in qs)
            cells.append(f"{hits / len(qs):.3f} ({len(qs)} q.)")
        print(f"| JSQuAD + CMRC | memx recall, {short} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
