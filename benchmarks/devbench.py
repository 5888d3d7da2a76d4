"""DevBench (doobidoo/mcp-memory-service, Apache-2.0; ``data/devbench/``): 30 developer memories (decisions,
configuration, bugs, ...) and 20 queries, each with the memories that answer it. Every memory is imported as
a bullet at its own date (its topical tags as the bullet's tags; the dataset's id tags and ``devbench`` left
out), the clock one day after the newest; recall@5 and MRR through memx's own recall, Decay as shipped.

The held-out half was fixed before any run: a query is held out when the first byte of the SHA-256 of its
id is even (``held_out``). The other half is training data of the learned ranking (``fit_ranking.py``).

    python benchmarks/devbench.py [--ranking learned|spec|both]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from harness import fresh_memory, load
from memx_mcp.memory import Memory

DATA = Path(__file__).parent / "data" / "devbench" / "devbench_dataset.json"
SCOPE = "project:devbench"


def bullet_id(tag: str) -> str:
    return tag.replace(":", "-")


def held_out(query: dict[str, Any]) -> bool:
    return hashlib.sha256(query["id"].encode()).digest()[0] % 2 == 0


def build() -> tuple[Memory, list[dict[str, Any]]]:
    """A fresh store with the memories, its clock one day after the newest; the queries, their
    ``expected_tags`` turned into bullet ids."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    records = []
    for m in data["memories"]:
        created = m["created_at_iso"].replace("Z", "+00:00")
        records.append(
            {
                "id": bullet_id(m["id"]),
                "content": m["content"],
                "scope": SCOPE,
                "created_at": created,
                "updated_at": created,
                "section": "GENERAL",
                "knowledge_type": "KNOWLEDGE",
                "instructivity_score": 50,
                "tools": [],
                "entities": [],
                "tags": [t for t in m["tags"] if t != "devbench" and not t.startswith("bench:")],
            }
        )
    memory = fresh_memory()
    load(memory, records)
    now = max(datetime.fromisoformat(r["created_at"]) for r in records) + timedelta(days=1)
    memory.deps.clock = lambda: now
    queries = [{**q, "expected_tags": [bullet_id(t) for t in q["expected_tags"]]} for q in data["queries"]]
    return memory, queries


def rank(memory: Memory, query: dict[str, Any]) -> int | None:
    hits = memory.recall(query["question"], scope=SCOPE, max_results=5, token_budget=50_000, reinforce=False).hits
    ids = [h.bullet.id for h in hits]
    found = [ids.index(t) + 1 for t in query["expected_tags"] if t in ids]
    return min(found) if found else None


def summary(found: list[int | None]) -> str:
    if not found:
        return "-"
    r5 = sum(1 for r in found if r is not None) / len(found)
    mrr = sum(1.0 / r for r in found if r is not None) / len(found)
    return f"recall@5 {r5:.3f}, MRR {mrr:.3f} (n={len(found)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranking", choices=("learned", "spec", "both"), default="both")
    args = parser.parse_args()
    memory, queries = build()
    shipped = memory.deps.retrieval
    for name in ("spec", "learned") if args.ranking == "both" else (args.ranking,):
        from memx_mcp.usecases.deps import with_learned_ranking

        memory.deps.retrieval = (
            dataclasses.replace(shipped, ranking=None) if name == "spec" else with_learned_ranking(shipped)
        )
        answered = [q for q in queries if q["expected_tags"]]  # the 5 "negative" queries have no answer
        train = [rank(memory, q) for q in answered if not held_out(q)]
        held = [rank(memory, q) for q in answered if held_out(q)]
        print(f"{name:8} training half {summary(train)}; held-out half {summary(held)}; all {summary(train + held)}")
    memory.deps.retrieval = shipped


if __name__ == "__main__":
    main()
