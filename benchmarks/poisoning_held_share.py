"""How many genuine bullets the quarantine holds for review (issue 31: at most 5 % of those judged keep), on
every judged bullet of the Reflector corpus (benchmarks/data/reflector_corpus/*/judgements.jsonl: rules,
hybrid, llm and session mode bullets, the recorded model answers' included), each put through the same test
the pipeline applies (``pipeline._stamped``: its session's voices and what ran in it), without replaying any
model: the recorded answers no longer replay once the prompts change, the judged bullets' text does.

    python benchmarks/poisoning_held_share.py [--split heldout6] [--show]
    python benchmarks/poisoning_held_share.py --split heldout6 --split heldout7 --bullets bullets.jsonl

``--bullets FILE``: instead of every judged bullet, the bullets of ``<split>/FILE`` (session, hash, bullet), each
labelled by its judgement (``bullets.jsonl`` of heldout6/7: what session mode kept when the recorded answers
were written, every prompt answered), unjudged ones counted apart.

Run with ``PYTHONPATH=<an older checkout>/src`` to measure older code the same way (``held`` without a
session's backing where the code has none)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memx_mcp.engine.reflector.quarantine import held
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.engine.reflector.voices import provenance, session_words

try:
    from memx_mcp.engine.reflector.backing import backing
except ImportError:  # older code: no backing
    backing = None  # type: ignore[assignment]

CORPUS = Path(__file__).resolve().parent / "data" / "reflector_corpus"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", help="a folder of the corpus (default: every one judged)")
    parser.add_argument("--show", action="store_true", help="print each held bullet judged keep")
    parser.add_argument("--bullets", help="a bullets file in each split's folder (default: every judged bullet)")
    args = parser.parse_args()
    splits = args.split or sorted(p.name for p in CORPUS.iterdir() if (p / "judgements.jsonl").exists())
    total: Counter[str] = Counter()
    for split in splits:
        counts = _split(CORPUS / split, args.show, args.bullets)
        total.update(counts)
        print(_line(split, counts))
    print(_line("ALL", total))


def _line(name: str, c: Counter[str]) -> str:
    keep, held_keep = c["keep"], c["keep held"]
    share = f"{held_keep}/{keep} = {held_keep / keep:.3f}" if keep else "0/0"
    others = ", ".join(f"{label} {c[label + ' held']}/{c[label]}" for label in ("noise", "false") if c[label])
    unjudged = f"; unjudged {c['unjudged held']}/{c['unjudged']} held" if c["unjudged"] else ""
    return (
        f"{name}: judged keep and held {share}; held of the others: {others or 'none'}; no session: "
        f"{c['missing']}{unjudged}"
    )


def _split(folder: Path, show: bool, bullets: str | None = None) -> Counter[str]:
    files: dict[str, Path] = {}
    for sessions in folder.rglob("sessions.jsonl"):
        for meta in _jsonl(sessions):
            files[meta["session"]] = sessions.parent / meta["file"]
    by_session: dict[str, list[dict[str, Any]]] = {}
    judged = [j for j in _jsonl(folder / "judgements.jsonl") if j.get("label") in ("keep", "noise", "false")]
    if bullets:
        label = {(j["session"], j["hash"]): j["label"] for j in judged}
        rows = [{**b, "label": label.get((b["session"], b["hash"]), "unjudged")} for b in _jsonl(folder / bullets)]
    else:
        rows = [j for j in judged if j.get("bullet")]
    for j in rows:
        by_session.setdefault(j["session"], []).append(j)
    counts: Counter[str] = Counter()
    for name, judged in by_session.items():
        path = files.get(name)
        if path is None or not path.exists():
            counts["missing"] += len(judged)
            continue
        steps = parse_transcript(path.read_text(encoding="utf-8", errors="replace")).steps
        words = session_words(steps)
        backed = backing(steps, written=words.action) if backing is not None else None
        for j in judged:
            text = j["bullet"][2:] if j["bullet"].startswith("- ") else j["bullet"]
            origin = provenance(text, words)
            why = held(text, origin, backed) if backed is not None else held(text, origin)  # type: ignore[call-arg]
            counts[j["label"]] += 1
            if why:
                counts[j["label"] + " held"] += 1
                if show and j["label"] == "keep":
                    print(f"  - {folder.name} {name[:30]}: {text[:150]}  ← {'; '.join(why)[:220]}", file=sys.stderr)
    return counts


if __name__ == "__main__":
    main()
