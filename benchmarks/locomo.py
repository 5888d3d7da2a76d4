"""LoCoMo (benchmarks/data/locomo, CC BY-NC 4.0): long conversations as memory, questions as queries.

Every dialog turn is imported as a bullet, one project scope per conversation. Three protocols, each in a
store of its own:

- ``aged`` (the main figure: what a real user's store looks like after months of use): the bullets of
  ``bare``, with Decay on as shipped and the clock standing one day after each conversation's newest turn
  when its questions are asked (the conversation shifted so that its last session ended yesterday; the
  clock moves rather than the dates, so that a date a question names still is the date of its turns).
  Beside the shipped ranking, the same store ranked with Decay off (``half_life_days`` 1e9) and as SPEC §7
  writes it (the Decay weight in full, RecencyBoost 1.2: the ranking before docs/spec-changes.md), and
  ranked with SPEC's blend in place of the learned ranking (``MEMX_RANKING=spec``).

- ``bare`` (what memx itself stores when a turn is remembered): the content is ``speaker: text``, the
  session's date and time is the bullet's ``created_at`` (turn k of a session ``k`` × 30 s after the
  session's start: turns are written one after the other). Whatever more is searched (a neighbouring
  turn's context, the date) is memx's own indexing. The clock stands at the creation time of the newest
  turn of all conversations plus one day; decay is off (see ``open_memory_for``), all else is shipped.
  (Until issue 28 the benchmark set an attribute Memory never read, so this clock was the machine's.)
- ``enriched``: the text a benchmark-written import would carry: ``[date] speaker: text``, a shared
  photo's caption and "(replying to <previous turn>)", all with one creation time (decay and recency
  neutral). That context is written by the benchmark, not by memx.

Every question of categories 1-4 is a query in its conversation's scope. recall@k = the share of
questions with at least one evidence turn in the top k; all@5 = the share with every evidence turn in the
top 5. The baselines run in the same run and store: plain BM25 (LanceDB's default full-text index, English
stemming and stop words) over the same bullet texts, BM25 over memx's own tokenization, and the shipped
model's cosine alone. Conversations 0-4 are the part retrieval was tuned on, 5-9 are held out: both are
printed apart, and all ten.

    python benchmarks/locomo.py [--protocol aged|bare|enriched|both|all] [--conversations 0-4] [--model minilm|e5]
                                [--keep DIR] [--fast]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import PlainBM25, _model_cache, bm25, bullet_record, fresh_memory, load, memx, vector
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.domain.catalog import E5_SMALL, MINILM
from memx_mcp.engine.retrieval import RetrievalParams
from memx_mcp.memory import Memory
from memx_mcp.usecases.deps import with_learned_ranking

DATA = Path(__file__).parent / "data" / "locomo" / "locomo10.json"
TUNED = range(0, 5)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TURN_SPACING = timedelta(seconds=30)
MODELS = {"minilm": MINILM, "e5": E5_SMALL}


def turn_id(n: int, dia_id: str) -> str:
    """A bullet id for turn ``D1:3`` of conversation ``n`` (ids allow letters, digits, ``_`` and ``-``)."""
    return f"c{n}-{dia_id.replace(':', '_')}"


def session_time(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` as a UTC time."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sessions(conv: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    c = conv["conversation"]
    return [
        (c.get(f"{key}_date_time", ""), turns)
        for key, turns in c.items()
        if key.startswith("session_") and isinstance(turns, list)
    ]


def enriched_records(conversations: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for n, conv in conversations:
        previous = ""
        for when, turns in sessions(conv):
            for t in turns:
                text = f"[{when}] {t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shared a photo: {t['blip_caption']}]"
                context = f" (replying to {previous[:300]})" if previous else ""
                previous = f"{t['speaker']}: {t['text']}"
                out.append(bullet_record(turn_id(n, t["dia_id"]), text + context, f"project:locomo-{n}"))
    return out


def bare_records(conversations: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for n, conv in conversations:
        for when, turns in sessions(conv):
            start = session_time(when)
            for k, t in enumerate(turns):
                record = bullet_record(turn_id(n, t["dia_id"]), f"{t['speaker']}: {t['text']}", f"project:locomo-{n}")
                created = (start + k * TURN_SPACING).isoformat()
                record.update(created_at=created, updated_at=created)
                out.append(record)
    return out


def newest_turn(conversations: list[tuple[int, dict[str, Any]]]) -> datetime:
    return max(session_time(when) for _, conv in conversations for when, _ in sessions(conv))


def timed_recall(memory: Memory, clocks: dict[int, datetime], retrieval: RetrievalParams | None = None) -> Ranker:
    """memx recall with the clock of the asking conversation, ranked with the store's own parameters or
    with ``retrieval`` (Decay off, SPEC's multipliers) in the same store."""

    def rank(n: int, q: str, k: int) -> list[str]:
        deps = memory.deps
        saved = deps.retrieval
        deps.clock = lambda: clocks[n]
        deps.retrieval = retrieval or saved
        try:
            return memx(memory, q, f"project:locomo-{n}", k)
        finally:
            deps.retrieval = saved

    return rank


Ranker = Callable[[int, str, int], list[str]]


def evaluate(rank: Ranker, questions: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    hits: list[tuple[int, int, bool, bool, bool]] = []
    start = time.perf_counter()
    for n, q in questions:
        gold = {turn_id(n, e) for e in q.get("evidence", [])}
        top = rank(n, q["question"], 10)
        at5, at10 = set(top[:5]), set(top[:10])
        hits.append((n, q["category"], bool(gold & at5), bool(gold & at10), bool(gold) and gold <= at5))
    ms = (time.perf_counter() - start) * 1000 / max(1, len(questions))
    return {"hits": hits, "ms": ms}


def share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def report(name: str, result: dict[str, Any]) -> str:
    hits = result["hits"]
    tuned = [h for h in hits if h[0] in TUNED]
    held = [h for h in hits if h[0] not in TUNED]
    cats = [share([h[2] for h in hits if h[1] == c]) for c in CATEGORIES]
    cells = [share([h[2] for h in tuned]), share([h[2] for h in held]), f"**{share([h[2] for h in hits])}**"]
    cells += [share([h[3] for h in hits]), share([h[4] for h in hits]), *cats, f"{result['ms']:.1f}"]
    return f"| {name} | {' | '.join(cells)} |"


def open_memory_for(protocol: str, keep: Path | None, model: str = "minilm") -> tuple[Memory, bool]:
    """A fresh store, or the one kept in ``keep`` from an earlier run (True: already filled)."""
    # Decay off in the bare protocol: its turns span up to a year, and the shipped 30-day half-life would rank
    # a conversation's last month above everything else (recall@5 0.189 on conversations 0-4 with it).
    settings: dict[str, Any] = {"half_life_days": 1e9} if protocol == "bare" else {}
    settings["model_name"] = MODELS[model]
    if keep is None:
        return fresh_memory(**settings), False
    stored = "bare" if protocol == "aged" else protocol  # the same bullets: one kept store serves both
    home = keep / (stored if model == "minilm" else f"{stored}-{model}")
    filled = (home / "store" / "meta.json").is_file()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "models").exists():
        (home / "models").symlink_to(_model_cache())
    memory = open_memory(Settings(home=home, **settings), cwd=home)
    memory.deps.embedder.get(120.0)
    return memory, filled


def run(
    protocol: str, conversations: list[tuple[int, dict[str, Any]]], keep: Path | None, model: str, fast: bool = False
) -> None:
    rows = enriched_records(conversations) if protocol == "enriched" else bare_records(conversations)
    memory, filled = open_memory_for(protocol, keep, model)
    seconds = 0.0 if filled else load(memory, rows)
    questions = [(n, q) for n, conv in conversations for q in conv["qa"] if q["category"] in CATEGORIES]
    print(
        f"\n{protocol}, {memory.settings.model_name}: imported {len(rows)} turns in {seconds:.1f} s; "
        f"{len(questions)} questions (categories 1-4)"
    )
    plain = PlainBM25(memory, name=f"plain{time.time_ns()}")
    rankers: dict[str, Ranker] = {
        "plain BM25 (LanceDB English)": lambda n, q, k: plain(q, f"project:locomo-{n}", k),
        "BM25 (memx tokenizer)": lambda n, q, k: bm25(memory, q, (f"project:locomo-{n}",), k),
        "vector only": lambda n, q, k: vector(memory, q, (f"project:locomo-{n}",), k),
        "memx recall": lambda n, q, k: memx(memory, q, f"project:locomo-{n}", k),
    }
    if protocol != "enriched":
        # the clock of each question: one day after its conversation's newest turn (aged), or one for all (bare)
        now = newest_turn(conversations) + timedelta(days=1)
        clocks = {
            n: newest_turn([(n, conv)]) + timedelta(days=1) if protocol == "aged" else now for n, conv in conversations
        }
        shipped = memory.deps.retrieval
        blend = dataclasses.replace(shipped, ranking=None)  # SPEC's blend (MEMX_RANKING=spec)
        spec = dataclasses.replace(shipped.fusion, recency_boost=1.2, decay_share=1.0)
        del rankers["memx recall"]
        if not fast:
            rankers["memx recall before issue 28 (SPEC §7: × Decay, × 1.2 recency)"] = timed_recall(
                memory, clocks, dataclasses.replace(blend, fusion=spec)
            )
        if protocol == "aged" and not fast:
            rankers["memx recall, Decay off (half-life 1e9 days)"] = timed_recall(
                memory,
                clocks,
                dataclasses.replace(shipped, decay=dataclasses.replace(shipped.decay, half_life_days=1e9)),
            )
        rankers[f"memx recall ({protocol}, SPEC's blend: MEMX_RANKING=spec)"] = timed_recall(memory, clocks, blend)
        learned = with_learned_ranking(shipped)  # MEMX_RANKING=learned
        rankers[f"memx recall ({protocol}, learned ranking: MEMX_RANKING=learned)"] = timed_recall(
            memory, clocks, learned
        )
    head = " | ".join(CATEGORIES.values())
    print(
        "| ranker | r@5 conv. 0-4 (tuned) | r@5 conv. 5-9 (held out) | r@5 all | r@10 all | all evidence in top 5 "
        f"| {head} | ms/query |"
    )
    print("|---|---|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|")
    for name, rank in rankers.items():
        print(report(name, evaluate(rank, questions)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=("aged", "bare", "enriched", "both", "all"), default="all")
    parser.add_argument("--conversations", default="0-9", help="a range of conversation numbers, e.g. 0-4")
    parser.add_argument("--model", choices=sorted(MODELS), default="minilm")
    parser.add_argument("--keep", type=Path, help="keep the stores in this folder and reuse them (tuning runs)")
    parser.add_argument(
        "--fast", action="store_true", help="leave out the rows of earlier rankings (before issue 28, Decay off)"
    )
    args = parser.parse_args()
    first, _, last = args.conversations.partition("-")
    wanted = range(int(first), int(last or first) + 1)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    conversations = [(n, conv) for n, conv in enumerate(data) if n in wanted]
    chosen = {"both": ("bare", "enriched"), "all": ("aged", "bare", "enriched")}.get(args.protocol, (args.protocol,))
    for protocol in chosen:
        run(protocol, conversations, args.keep, args.model, args.fast)


if __name__ == "__main__":
    main()
