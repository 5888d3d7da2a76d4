"""Tuning runs of the LoCoMo aged protocol: memx recall under other ranking parameters, on a store kept by
``locomo.py --keep DIR`` (the bare/aged store), conversations 0-4 unless told (5-9 are held out: measure
them once, with ``locomo.py``, when the defaults are decided).

Each argument is one setting, ``name=value[,name=value...]``, a field of FusionParams (``decay_share``,
``recency_boost`` ...), DecayParams (``half_life_days`` ...) or RetrievalParams (``candidate_limit`` ...);
the others stay as shipped. One table row per argument, in locomo.py's columns.

    python benchmarks/locomo.py --protocol aged --conversations 0-4 --keep /tmp/locomo   # fills the store
    python benchmarks/locomo_sweep.py --keep /tmp/locomo decay_share=0.05 decay_share=0.1,recency_boost=1.0
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from locomo import CATEGORIES, DATA, evaluate, newest_turn, open_memory_for, report, timed_recall
from memx_mcp.engine.retrieval import RetrievalParams


def with_settings(shipped: RetrievalParams, setting: str) -> RetrievalParams:
    given = dict(pair.split("=", 1) for pair in setting.split(","))

    def changed(params: Any) -> Any:
        fields = {f.name for f in dataclasses.fields(params)}
        own = {k: v for k, v in given.items() if k in fields}
        return dataclasses.replace(params, **{k: type(getattr(params, k))(float(v)) for k, v in own.items()})

    known = {f.name for p in (shipped, shipped.fusion, shipped.decay) for f in dataclasses.fields(p)}
    unknown = set(given) - known
    if unknown:
        raise SystemExit(f"unknown setting(s): {', '.join(sorted(unknown))}")
    top = changed(shipped)
    return dataclasses.replace(top, fusion=changed(shipped.fusion), decay=changed(shipped.decay))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True, help="the folder given to locomo.py --keep")
    parser.add_argument("--conversations", default="0-4")
    parser.add_argument("settings", nargs="+")
    args = parser.parse_args()
    first, _, last = args.conversations.partition("-")
    wanted = range(int(first), int(last or first) + 1)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    conversations = [(n, conv) for n, conv in enumerate(data) if n in wanted]
    memory, filled = open_memory_for("aged", args.keep)
    if not filled:
        raise SystemExit(f"no kept store in {args.keep}: run locomo.py --protocol aged --keep {args.keep} first")
    questions = [(n, q) for n, conv in conversations for q in conv["qa"] if q["category"] in CATEGORIES]
    clocks = {n: newest_turn([(n, conv)]) + timedelta(days=1) for n, conv in conversations}
    shipped = memory.deps.retrieval
    for setting in args.settings:
        print(report(setting, evaluate(timed_recall(memory, clocks, with_settings(shipped, setting)), questions)))


if __name__ == "__main__":
    main()
