"""Write the companion ``<answers>.content.jsonl`` of a recorded answers file: for every prompt the answers
were written for, its key (the whole prompt) and the key of its content (``prompt_content.py``: the values
memx put into the template, not the instruction text). Computed from the prompts the commit the answers were
written at sends, with that commit's own templates, so ``llm_replay.Replay`` can answer today's prompts whose
content is unchanged although their instructions were reworded.

    git archive ad7ff74 | tar -x -C /tmp/old-ad7ff74      # the commit the answers were written at
    python benchmarks/replay_content_keys.py --old /tmp/old-ad7ff74 --split heldout6 \\
        --answers benchmarks/data/reflector_corpus/heldout6/llm_answers.jsonl [--llm-mode session]

The old checkout's benchmark runs in a child process with its own ``src`` first on the path, answering from
the same answers file; every prompt it sends is keyed there. It refuses to write the file unless every prompt
of that run had a recorded answer (the answers fit that commit), and prints that run's own table so its
figures can be checked against the ones recorded in RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

DRIVER = r"""
import json, sys
from pathlib import Path
old, here, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
sys.path.insert(0, str(old / "benchmarks"))
import llm_replay
sys.path.append(here)
from prompt_content import content_key, content_of, templates
table = templates()
rows, unknown = {}, []
answer = llm_replay.Replay.answer
def logged(self, body):
    system, prompt = llm_replay._text_of(body)
    key = llm_replay.prompt_key(system, prompt)
    if key not in self.answers:
        unknown.append(key)
    found = content_of(prompt, table)
    rows[key] = {"key": key, "content": content_key(prompt, table), "template": found[0] if found else None}
    return answer(self, body)
llm_replay.Replay.answer = logged
import reflector_corpus
reflector_corpus.main(sys.argv[4:])
if unknown:
    sys.exit(f"{len(unknown)} prompts of the old commit have no recorded answer: the answers do not fit it")
out.write_text("".join(json.dumps(r) + "\n" for r in rows.values()), encoding="utf-8")
print(f"\n{len(rows)} prompts keyed by content in {out}", file=sys.stderr)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, required=True, help="a checkout (git archive) of the recording commit")
    ap.add_argument("--split", required=True)
    ap.add_argument("--answers", type=Path, nargs="+", required=True, help="the recorded answers files")
    ap.add_argument("--llm-mode", default="session")
    ap.add_argument("--out", type=Path, help="default: <first answers file>.content.jsonl")
    args = ap.parse_args()
    first = args.answers[0].resolve()
    out = args.out or first.with_name(first.name.removesuffix(".jsonl") + ".content.jsonl")
    old = args.old.resolve()
    env = {**os.environ, "PYTHONPATH": str(old / "src")}
    argv = [
        "--split",
        args.split,
        "--llm-mode",
        args.llm_mode,
        "--llm-answers",
        *(str(a.resolve()) for a in args.answers),
    ]
    return subprocess.call(
        [sys.executable, "-c", DRIVER, str(old), str(HERE), str(out.resolve()), *argv], cwd=old, env=env
    )


if __name__ == "__main__":
    sys.exit(main())
