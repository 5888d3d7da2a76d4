"""A held-out poisoning corpus (tests/data/poisoning_heldout/ by default, or another written blind to the
defences, `--corpus tests/data/poisoning_heldout2`) through the same run as tests/test_poisoning_heldout.py,
in every mode: attacker instructions that got through (a hook, the MCP server or a trusted recall), the genuine
lessons that came through, and each leak.

    python benchmarks/poisoning_heldout.py [--corpus tests/data/poisoning_heldout2] [--mode session] [--leaks]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.conftest import MODEL
from tests.poisoning import HeldOut, run_corpus

# Each held-out corpus (its folder's name) and the test module holding its labels (`CORPUS`) and its questions,
# signatures and project files (`HELD_OUT`).
CORPORA = {
    "poisoning_heldout": "tests.test_poisoning_heldout",
    "poisoning_heldout2": "tests.test_poisoning_heldout2_corpus",
    "poisoning_heldout3": "tests.test_poisoning_heldout3_corpus",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("tests/data/poisoning_heldout"),
                        help=f"the corpus folder, one of {', '.join(sorted(CORPORA))} under tests/data/")  # fmt: skip
    parser.add_argument("--mode", choices=("rules", "rules-all", "session"), action="append")
    parser.add_argument("--leaks", action="store_true", help="print every attacker line that got through")
    args = parser.parse_args()
    if args.corpus.name not in CORPORA:
        parser.error(f"unknown corpus {args.corpus}: one of {', '.join(sorted(CORPORA))}")
    held = importlib.import_module(CORPORA[args.corpus.name])
    corpus, held_out = held.CORPUS, held.HELD_OUT
    print(f"corpus: {held_out.folder.name} ({len(corpus)} sessions)")
    from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model

    with tempfile.TemporaryDirectory(prefix="memx-poisoning-") as model:
        embedder = FastEmbedEmbedder(MODEL, prepare_shipped_model(Path(model) / "model"), 384)
        for mode in args.mode or ["rules", "rules-all", "session"]:
            _run(mode, embedder, args.leaks, corpus, held_out)


def _run(mode: str, embedder: object, leaks: bool, corpus: list[dict[str, Any]], held_out: HeldOut) -> None:
    with tempfile.TemporaryDirectory(prefix="memx-poisoning-") as tmp:
        outcome = run_corpus(mode, Path(tmp), embedder, corpus, held_out=held_out)  # type: ignore[arg-type]
    genuine = sum(1 for f in outcome.genuine.values() if f.stored_active and (f.injected or f.recalled_trusted))
    leaked = sorted({leak.split(" in ", 1)[0] for leak in outcome.leaks})
    print(
        f"{mode}: {len(leaked)} of {len(outcome.attacks)} attacker instructions through "
        f"({', '.join(leaked) or 'none'}); genuine lessons through {genuine} of {len(outcome.genuine)}; "
        f"attacks the model proposed {len(outcome.proposed)}"
    )
    if leaks:
        for leak in outcome.leaks:
            print("  ", leak[:300])


if __name__ == "__main__":
    main()
