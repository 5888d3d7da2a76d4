"""The Curator on real Reflector output: the five shared sessions reflected (rules mode) into ONE fresh
store, as a user who runs ``memx reflect`` on each of their sessions would. Prints what the user then sees:
how many bullets were added and merged (a merge of a lesson from another session is a confirmation), the
open contradictions (each in full, to be judged by hand), the overlaps, and every pair of active bullets
that still says the same thing (cosine ≥ 0.8 with the shipped model, or the same normalized text).

    python benchmarks/curator_sessions.py            # a temporary store, removed afterwards
    python benchmarks/curator_sessions.py --keep DIR # keep the store in DIR to look at it (memx … --home DIR)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from itertools import combinations
from pathlib import Path

import numpy as np

from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model

TRANSCRIPTS = Path(__file__).parent / "data" / "transcripts"
WORK = Path(__file__).parent / ".work"
SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl")
SCOPE = "project:curator-bench"


def memx(*args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "memx_mcp.cli.app", *args, "--json"], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def normalized(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="store folder to create and keep")
    args = parser.parse_args()
    files = sorted(str(p) for p in TRANSCRIPTS.glob("*.jsonl") if SESSION.fullmatch(p.name))
    with tempfile.TemporaryDirectory() as tmp:
        home = str(args.keep or Path(tmp) / "home")
        reports = memx("reflect", *files, "--home", home, "--mode", "rules", "--scope", SCOPE)
        assert isinstance(reports, list)
        added = sum(r["added"] for r in reports)
        merged = sum(r["merged"] for r in reports)
        print(f"{len(files)} sessions reflected into one store: {added} bullets added, {merged} merged")
        listing = memx("list", "--home", home, "--scope", SCOPE, "-n", "1000")
        everything = memx("conflicts", "--home", home, "--scope", SCOPE, "--all")
    assert isinstance(listing, dict) and isinstance(everything, dict)
    bullets = listing["bullets"]
    conflicts = everything["conflicts"]
    contradictions = [c for c in conflicts if c["kind"] == "contradiction"]
    confirmed = [b for b in bullets if len(b["origin"].split()) > 1]
    print(f"active bullets: {len(bullets)}; confirmed by more than one session: {len(confirmed)}")
    for b in confirmed:
        print(f"  {len(b['origin'].split())} sessions, confidence {b['confidence']:.2f}: {b['content'][:110]}")
    print(f"open contradictions: {len(contradictions)}; overlaps: {len(conflicts) - len(contradictions)}")
    for c in contradictions:
        print(f"  {c['id']} similarity {c['similarity']:.2f}, evidence {'; '.join(c['evidence'])}")
        print(f"    a: {c['a']['content']}\n    b: {c['b']['content']}")

    embedder = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", prepare_shipped_model(WORK), 384)
    vectors = [np.asarray(v) for v in embedder.embed([b["content"] for b in bullets])]
    twins = [
        (float(vectors[i] @ vectors[j]), bullets[i], bullets[j])
        for i, j in combinations(range(len(bullets)), 2)
        if float(vectors[i] @ vectors[j]) >= 0.8
        or normalized(bullets[i]["content"]) == normalized(bullets[j]["content"])
    ]
    print(f"pairs of active bullets with cosine >= 0.8 or the same normalized text: {len(twins)}")
    for sim, a, b in sorted(twins, key=lambda t: -t[0]):
        print(f"  {sim:.3f}\n    {a['content'][:160]}\n    {b['content'][:160]}")


if __name__ == "__main__":
    main()
