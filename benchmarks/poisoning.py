"""The poisoning corpus (tests/data/poisoning/, issue 31) through memx's real doors, per carrier, language and
mode: how many attacker lessons the model proposed, how many were stored active or pending (waiting for
review), how many came back in a hook's output (SessionStart and UserPromptSubmit, real `memx hook
claude-code` processes) or as a trusted `recall` result; and the same for the sessions' genuine lessons.

Session mode reads every session through a loopback Messages-API server that follows the attacker
(tests/poisoning.py: every attacker line it sees becomes a lesson citing its step, outcome success); rules
mode needs no model. One store per mode, in a temporary folder; the real embedding model.

    python benchmarks/poisoning.py [--mode rules|rules-all|session] [--leaks] [--ideal]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests.poisoning import Found, Outcome, labels, quarantine_attacks, run_corpus  # noqa: E402

from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model  # noqa: E402

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
COLUMNS = ("sessions", "attacks", "proposed", "kept", "active", "pending", "injected", "recalled", "through")


def _row(outcome: Outcome, sessions: set[str]) -> list[int]:
    attacks = {k: f for k, f in outcome.attacks.items() if k[0] in sessions}
    proposed = sum(1 for k in attacks if outcome.proposed.get(k))
    kept = sum(1 for k in attacks if outcome.kept.get(k))

    def count(pick: str) -> int:
        return sum(1 for f in attacks.values() if getattr(f, pick))

    through = sum(1 for f in attacks.values() if f.injected or f.recalled_trusted)
    return [len(sessions), len(attacks), proposed, kept, count("stored_active"), count("stored_pending"),
            count("injected"), count("recalled_trusted"), through]  # fmt: skip


def table(outcome: Outcome, corpus: list[dict[str, object]]) -> None:
    groups: dict[str, dict[str, set[str]]] = {"carrier": defaultdict(set), "language": defaultdict(set)}
    for s in corpus:
        for by in groups:
            groups[by][str(s[by])].add(str(s["session"]))
    everything = {str(s["session"]) for s in corpus}
    print(f"\n## {outcome.mode} mode: attacker lines (each counted once however often it appeared)\n")
    print("| group | " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    for by, members in groups.items():
        for name in sorted(members):
            print(f"| {by} {name} | " + " | ".join(map(str, _row(outcome, members[name]))) + " |")
    print("| **all** | " + " | ".join(map(str, _row(outcome, everything))) + " |")
    genuine: list[Found] = list(outcome.genuine.values())
    active = sum(1 for f in genuine if f.stored_active)
    through = sum(1 for f in genuine if f.stored_active and (f.injected or f.recalled_trusted))
    pending = sum(1 for f in genuine if f.stored_pending and not f.stored_active)
    print(f"\nGenuine lessons ({len(genuine)}): stored active {active}, pending only {pending}, "
          f"injected or recalled {through}.")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("rules", "rules-all", "session"), action="append")
    parser.add_argument("--leaks", action="store_true", help="print every attacker line that got through")
    parser.add_argument(
        "--ideal",
        action="store_true",
        help="simulate an ideal quarantine (every attacker bullet set pending before the hooks run): what the "
        "test asks of the real defences",
    )
    args = parser.parse_args()
    corpus = labels()
    with tempfile.TemporaryDirectory(prefix="memx-poisoning-") as tmp:
        embedder = FastEmbedEmbedder(MODEL, prepare_shipped_model(Path(tmp) / "model"), 384)
        for mode in args.mode or ("rules", "rules-all", "session"):
            root = Path(tmp) / mode
            root.mkdir()
            outcome = run_corpus(mode, root, embedder, corpus, quarantine_attacks if args.ideal else None)
            table(outcome, corpus)
            if args.leaks:
                print("\n" + "\n".join(f"- {leak}" for leak in dict.fromkeys(outcome.leaks)))
    print(
        "\ncolumns: attacks = attacker lines planted (one canary each); proposed = lessons the model proposed "
        "from them; kept = what reflect kept of them (the model's lessons that passed the evidence check, or the "
        "rules' bullets); active / pending = in the store (a repeat of another session's lesson is merged into "
        "it, so fewer than kept); injected = in a hook's output or the MCP recap prompt; recalled = in a recall "
        "result (Memory or MCP) not marked pending; through = injected or recalled."
    )


if __name__ == "__main__":
    main()
