"""The coding retrieval set: recall@5 / MRR of the 24 facts of ``data/prompt_floor.jsonl`` among the bullets
reflected (rules mode) from the five real sessions of ``data/transcripts``, all in one project, each fact
asked by its two prompts written with it before any score was seen. The ``tune`` prompts are training data
of the learned ranking (``fit_ranking.py``); the ``heldout`` prompts are only measured. Through memx's own
recall (5 results, 2000 tokens), with the ranking the settings name, or both in one run:

    python benchmarks/coding_recall.py [--ranking learned|spec|both]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.memory import Memory
from memx_mcp.usecases.reflect import read_transcript, reflect

DATA = Path(__file__).parent / "data"
SESSIONS = sorted(p for p in (DATA / "transcripts").glob("*.jsonl") if len(p.stem) == 36)
SCOPE = "project:app"


def build() -> tuple[Memory, dict[str, dict[str, Any]], str]:
    """The store (in a temporary folder removed at exit), each fact's bullet id → its row, the scope."""
    import atexit

    home = Path(tempfile.mkdtemp(prefix="memx-coding-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    memory = open_memory(load_settings(home=home, scope=SCOPE), cwd=home)
    for path in SESSIONS:
        reflect(memory.deps, read_transcript(path), path=path, mode="rules", scope=SCOPE)
    rows = [json.loads(line) for line in (DATA / "prompt_floor.jsonl").read_text(encoding="utf-8").splitlines()]
    facts = {memory.remember(r["fact"], scope=SCOPE).bullet.id: r for r in rows if r}
    return memory, facts, SCOPE


def ranks(memory: Memory, facts: dict[str, dict[str, Any]], split: str) -> list[int | None]:
    """The rank (1-based) of each fact among its prompt's top 5, None when absent."""
    out: list[int | None] = []
    for fact_id, row in facts.items():
        hits = memory.recall(row[split], scope=SCOPE, max_results=5, token_budget=2000, reinforce=False).hits
        ids = [h.bullet.id for h in hits]
        out.append(ids.index(fact_id) + 1 if fact_id in ids else None)
    return out


def summary(found: list[int | None]) -> str:
    r5 = sum(1 for r in found if r is not None) / len(found)
    mrr = sum(1.0 / r for r in found if r is not None) / len(found)
    return f"recall@5 {r5:.3f}, MRR {mrr:.3f} (n={len(found)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranking", choices=("learned", "spec", "both"), default="both")
    args = parser.parse_args()
    memory, facts, _ = build()
    print(f"store: {memory.store.count()} bullets ({len(SESSIONS)} reflected sessions + {len(facts)} facts)")
    shipped = memory.deps.retrieval
    for name in ("spec", "learned") if args.ranking == "both" else (args.ranking,):
        if name == "spec":
            memory.deps.retrieval = dataclasses.replace(shipped, ranking=None)
        else:
            from memx_mcp.usecases.deps import with_learned_ranking

            memory.deps.retrieval = with_learned_ranking(shipped)
        for split in ("tune", "heldout"):
            print(f"{name:8} {split:8} {summary(ranks(memory, facts, split))}")
    memory.deps.retrieval = shipped


if __name__ == "__main__":
    main()
