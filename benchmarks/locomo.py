"""LoCoMo (benchmarks/data/locomo, CC BY-NC 4.0): long conversations as memory, questions as queries.

Every dialog turn is imported as a bullet, one project scope per conversation, all with the same creation
time so that decay and recency are neutral. A bullet carries its turn with the context a memory import
would keep: when it was said (the session's date), who said it, the caption of a shared photo, and the turn
it replies to. Every question of categories 1-4 is a query in its conversation's scope. recall@k = the share of
questions with at least one evidence turn in the top k; all@5 = the share with every evidence turn in the
top 5. The baselines run in the same run: plain BM25 (LanceDB's default full-text index) over the bare turns
and over the same bullets, BM25 over memx's own tokenization, and the shipped model's cosine alone.

    python benchmarks/locomo.py [--limit N]   # N conversations (default all 10)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from harness import PlainBM25, bm25, bullet_record, fresh_memory, load, memx, vector

DATA = Path(__file__).parent / "data" / "locomo" / "locomo10.json"


def records(conversations: list[dict]) -> list[dict]:
    out = []
    for n, conv in enumerate(conversations):
        c = conv["conversation"]
        previous = ""
        for key, turns in c.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            when = c.get(f"{key}_date_time", "")
            for t in turns:
                text = f"[{when}] {t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shared a photo: {t['blip_caption']}]"
                context = f" (replying to {previous[:300]})" if previous else ""
                previous = f"{t['speaker']}: {t['text']}"
                out.append(bullet_record(f"c{n}-{t['dia_id']}", text + context, f"project:locomo-{n}"))
    return out


def raw_turns(conversations: list[dict]) -> dict[str, str]:
    return {
        f"c{n}-{t['dia_id']}": f"{t['speaker']}: {t['text']}"
        for n, conv in enumerate(conversations)
        for key, turns in conv["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for t in turns
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    conversations = json.loads(DATA.read_text(encoding="utf-8"))[: args.limit]
    memory = fresh_memory()
    rows = records(conversations)
    seconds = load(memory, rows)
    print(f"imported {len(rows)} turns in {seconds:.1f} s")
    questions = [(n, q) for n, conv in enumerate(conversations) for q in conv["qa"] if q["category"] in (1, 2, 3, 4)]
    plain = PlainBM25(memory)
    turns_only = PlainBM25(memory, raw_turns(conversations), "turns")
    rankers = {
        "plain BM25 over the bare turns": lambda n, q, k: turns_only(q, f"project:locomo-{n}", k),
        "plain BM25 over the same bullets": lambda n, q, k: plain(q, f"project:locomo-{n}", k),
        "BM25 only (memx tokenizer)": lambda n, q, k: bm25(memory, q, (f"project:locomo-{n}",), k),
        "vector only": lambda n, q, k: vector(memory, q, (f"project:locomo-{n}",), k),
        "memx recall": lambda n, q, k: memx(memory, q, f"project:locomo-{n}", k),
    }
    print(f"questions (categories 1-4): {len(questions)}")
    print("| ranker | recall@5 | recall@10 | all evidence in top 5 | ms/query |")
    print("|---|---|---|---|---|")
    for name, rank in rankers.items():
        at5 = at10 = all5 = 0
        start = time.perf_counter()
        for n, q in questions:
            gold = {f"c{n}-{e}" for e in q.get("evidence", [])}
            top = rank(n, q["question"], 10)
            at5 += bool(gold & set(top[:5]))
            at10 += bool(gold & set(top[:10]))
            all5 += bool(gold) and gold <= set(top[:5])
        ms = (time.perf_counter() - start) * 1000 / len(questions)
        total = len(questions)
        print(f"| {name} | {at5 / total:.3f} | {at10 / total:.3f} | {all5 / total:.3f} | {ms:.1f} |")


if __name__ == "__main__":
    main()
