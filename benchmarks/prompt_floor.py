"""Where the UserPromptSubmit hook's relevance floor belongs, measured.

A realistic store: the bullets reflected from the five real sessions of `data/transcripts` (rules mode)
plus 24 facts of the kind users remember (`data/prompt_floor.jsonl`, English, Chinese, Japanese). Each
fact has two prompts written with it, before any score was seen: one to choose the floor on (tune), one
measured only with the chosen floor (heldout); `data/prompt_floor_unrelated.jsonl` holds prompts that no
bullet answers, split the same way. For each prompt the hook's own recall runs (5 results, 400 tokens);
a related prompt is served when its fact is among the hits at or above the floor, an unrelated one stays
silent when no hit reaches it. The floor chosen on tune is the one that serves most related prompts while
keeping every unrelated one silent (ties: the lowest such floor, so that a bullet barely
relevant still reaches the prompt). The reflected sessions' bullets share the facts' scope: they compete
with them as a project's own other bullets would.

    python benchmarks/prompt_floor.py [--floor F]   # --floor: also report a floor of your own
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.usecases.reflect import read_transcript, reflect

DATA = Path(__file__).parent / "data"
SESSIONS = sorted(p for p in (DATA / "transcripts").glob("*.jsonl") if len(p.stem) == 36)
FLOORS = [round(0.05 + 0.01 * i, 2) for i in range(46)]


def load(name: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def scores(memory: object, prompt: str) -> list[tuple[str, float]]:
    result = memory.recall(prompt, max_results=5, token_budget=400, reinforce=False)  # type: ignore[attr-defined]
    return [(h.bullet.id, h.score.blended) for h in result.hits]


def rates(
    related: list[tuple[str, list[tuple[str, float]]]], unrelated: list[list[tuple[str, float]]], floor: float
) -> tuple[int, int]:
    served = sum(any(c == fact and s >= floor for c, s in hits) for fact, hits in related)
    silent = sum(all(s < floor for _, s in hits) for hits in unrelated)
    return served, silent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--floor", type=float, default=None)
    parser.add_argument("--verbose", action="store_true", help="every prompt's scores")
    args = parser.parse_args()
    facts, others = load("prompt_floor.jsonl"), load("prompt_floor_unrelated.jsonl")
    home = Path(tempfile.mkdtemp(prefix="memx-floor-"))
    try:
        memory = open_memory(load_settings(home=home, scope="project:app"), cwd=home)
        for path in SESSIONS:
            reflect(memory, read_transcript(path), path=path, mode="rules", scope="project:app")
        ids = {f["fact"]: memory.remember(f["fact"], scope="project:app").bullet.id for f in facts}
        print(f"store: {memory.store.count()} bullets ({len(SESSIONS)} reflected sessions + {len(facts)} facts)")
        split: dict[str, tuple[list[tuple[str, list[tuple[str, float]]]], list[list[tuple[str, float]]]]] = {}
        for name in ("tune", "heldout"):
            related = [(ids[f["fact"]], scores(memory, f[name])) for f in facts]
            unrelated = [scores(memory, o["prompt"]) for o in others if o["split"] == name]
            split[name] = (related, unrelated)
        related, unrelated = split["tune"]
        best = max(
            (f for f in FLOORS if rates(related, unrelated, f)[1] == len(unrelated)),
            key=lambda f: (rates(related, unrelated, f)[0], -f),
        )
        print("floor  tune served  tune silent")
        for f in FLOORS[::5]:
            s, q = rates(related, unrelated, f)
            print(f"{f:5.2f}  {s:5d}/{len(related)}     {q:5d}/{len(unrelated)}")
        for floor, label in ((best, "chosen on tune"), (args.floor, "asked")):
            if floor is None:
                continue
            for name in ("tune", "heldout"):
                rel, unrel = split[name]
                s, q = rates(rel, unrel, floor)
                print(
                    f"floor {floor:.2f} ({label}) {name}: related served {s}/{len(rel)} = {s / len(rel):.2f}, "
                    f"unrelated silent {q}/{len(unrel)} = {q / len(unrel):.2f}"
                )
        xdist = ids[facts[0]["fact"]]
        readme = next(hits for fact, hits in split["tune"][0] if fact == xdist)
        shown = [f"{s:.3f}" for i, s in readme if i == xdist] or ["not among the hits"]
        print(f"README example {facts[0]['tune']!r}: the pytest-xdist bullet's blended score {shown[0]}")
        if args.verbose:
            for name in ("tune", "heldout"):
                rel, unrel = split[name]
                for (fact, hits), f in zip(rel, facts, strict=True):
                    own = [s for i, s in hits if i == fact]
                    print(f"  {name} related {own[0] if own else 0:.3f} top {hits[0][1] if hits else 0:.3f} {f[name]}")
                mine = [o["prompt"] for o in others if o["split"] == name]
                for hits, prompt in zip(unrel, mine, strict=True):
                    print(f"  {name} unrelated top {hits[0][1] if hits else 0:.3f} {prompt}")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
