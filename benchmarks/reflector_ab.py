"""Issue 31's "precision and lessons not below today's", like with like: the code that produced today's figures
(the recording commit of each held-out split) and this checkout, both answered by one model.

In the seventh round one helper model answered, fresh, every prompt the old and the new code send on heldout7
and on each group of heldout6 (`docs/notes/r7-rec7.md`, `r7-rec6cc.md`, `r7-rec6fmt.md`; the prompts this
round's later fixes changed: `r7-rec6fix.md`, `r7-rec6fix2.md`, `r7-rec7b.md`, `r7-rec6ccb.md`,
`r7-rec6fmtb.md`, `r7-rec7c.md` and `llm_answers_r7_rec6cc_fix.jsonl`), and blind helper judges labelled
every bullet no earlier judgement covered (`judgements_r7_*.jsonl`). This script runs both sides of each part
with those answers and every judgement, and prints their TOTAL rows and the held-for-review line of the new
side (`docs/notes/r7-lead31.md`).

    python benchmarks/reflector_ab.py            # needs git (the old code comes from `git archive`)

Each side runs the old commit's own ``benchmarks/reflector_corpus.py`` with its own source; a group of a split
is run alone through a corpus folder that links to it. Unjudged bullets would count as not keep."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).parents[1]
CORPUS = ROOT / "benchmarks" / "data" / "reflector_corpus"
# (name, split, group or "" for the whole split, old commit, answer files of the old side, of the new side)
PARTS = (
    (
        "heldout7",
        "heldout7",
        "",
        "eba1849",
        ("llm_answers_r7_rec7.jsonl",),
        (
            "llm_answers_r7_rec7.jsonl",
            "llm_answers_r7_rec7b.jsonl",
            "llm_answers_r7_rec7c.jsonl",
            "llm_answers_r8_refix7.jsonl",
        ),
    ),
    (
        "heldout6 cc",
        "heldout6",
        "cc",
        "ad7ff74",
        ("llm_answers_r7_rec6cc.jsonl",),
        (
            "llm_answers_r7_rec6cc.jsonl",
            "llm_answers_r7_rec6cc_fix.jsonl",
            "llm_answers_r7_rec6ccb.jsonl",
            "llm_answers_r8_refix6.jsonl",
        ),
    ),
    (
        "heldout6 fmt",
        "heldout6",
        "fmt",
        "ad7ff74",
        ("llm_answers_r7_rec6fmt.jsonl",),
        (
            "llm_answers_r7_rec6fmt.jsonl",
            "llm_answers_r7_rec6fix.jsonl",
            "llm_answers_r7_rec6fix2.jsonl",
            "llm_answers_r7_rec6fmtb.jsonl",
        ),
    ),
)


def _rows(out: str) -> list[str]:
    keep = ("| TOTAL", "LLM:", "## Held for review")
    return [line for line in out.splitlines() if line.startswith(keep)]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, split, group, commit, old_answers, new_answers in PARTS:
            judgements = work / f"{split}-judgements.jsonl"
            judgements.write_text(
                "".join(p.read_text(encoding="utf-8") for p in sorted((CORPUS / split).glob("judgements*.jsonl"))),
                encoding="utf-8",
            )
            corpus = CORPUS
            if group:
                corpus = work / f"corpus-{split}-{group}"
                (corpus / split).mkdir(parents=True)
                (corpus / split / group).symlink_to(CORPUS / split / group)
            old = work / f"old-{commit}"
            if not old.exists():
                old.mkdir()
                archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True)
                subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
            common = ["--split", split, "--corpus", str(corpus), "--llm-mode", "session"]
            common += ["--judgements", str(judgements), "--unjudged", str(work / "unjudged.jsonl")]
            print(f"## {name}: old {commit} against this checkout, one model's answers\n")
            for side, code, answers, extra in (
                ("old", old, old_answers, []),
                ("new", ROOT, new_answers, ["--held"]),
            ):
                files = [str(CORPUS / split / a) for a in answers]
                done = subprocess.run(
                    [sys.executable, "benchmarks/reflector_corpus.py", *common, "--llm-answers", *files, *extra],
                    cwd=code,
                    env={**os.environ, "PYTHONPATH": str(code / "src")},
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    print(done.stderr[-2000:], file=sys.stderr)
                    return done.returncode
                for line in _rows(done.stdout):
                    print(f"{side}: {line}")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
