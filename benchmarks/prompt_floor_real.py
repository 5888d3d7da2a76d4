"""The prompt floor calibrated on real prompts of real coding sessions.

For every repository with several published sessions (`data/reflector_corpus/*/*/sessions.jsonl` and the
five sessions of `data/transcripts`, all marot/spotter), the sessions are taken in the order they were held
(first timestamp, else file name): each session's user prompts are asked of the store built, in rules mode,
from the sessions before it, then the session itself is added: reflected in rules mode, and its lessons
labelled true in the corpus (`<group>/labels.jsonl`, written by reading each session whole) written as
`remember`, as a user who keeps what a session taught would.

`data/prompt_floor_real.jsonl` holds one line per prompt: the repository, the split, the prompt, the store's
active bullets at that moment (the candidates) and which of them a reader judged relevant, written by reading
prompt and bullets only, before any memx score was seen (`--dump` writes the candidates without labels and
without scores). The split is by repository, fixed before labelling (`data/PROMPT_FLOOR_REAL.md`).

A relevant prompt is served when one of its relevant bullets is injected (the hook's own recall, 5 results,
400 tokens, at or above the floor); an unrelated prompt (no relevant bullet) is silent when nothing reaches
the floor. The floor is chosen on tune only: the one that keeps at most 5 % of unrelated prompts injected
and serves the most relevant ones (ties: the lowest). The held-out part is measured with that floor.

    python benchmarks/prompt_floor_real.py            # the floor it would choose, on tune
    python benchmarks/prompt_floor_real.py --heldout  # and the held-out part measured with it
    python benchmarks/prompt_floor_real.py --dump F   # candidates for labelling, no scores
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.domain.inputs import MAX_QUERY_CHARS
from memx_mcp.domain.models import Hit
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.text.sentences import split_sentences
from memx_mcp.text.tokenize import query_terms
from memx_mcp.usecases.injection import prompt_hits
from memx_mcp.usecases.reflect import read_transcript, reflect

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "reflector_corpus"
LABELS = DATA / "prompt_floor_real.jsonl"
FLOORS = [round(0.05 + 0.01 * i, 2) for i in range(56)]
MAX_PROMPTS = 12  # per session: the first ones, as a session's opening prompts are the ones memory serves
MAX_PROMPT_CHARS = 600  # a pasted log is not a question; the hook sees it whole, the labeller its head
UNRELATED_ALLOWED = 0.05


def split_of(repo: str) -> str:
    """Held out when the first hex digit of sha1(repo lower-cased) is 8-f, else tune (the corpus's own rule
    reversed, so that each half mixes the corpus's halves)."""
    return "heldout" if hashlib.sha1(repo.lower().encode()).hexdigest()[0] in "89abcdef" else "tune"


@dataclass(frozen=True)
class Session:
    repo: str
    path: Path
    start: str
    lessons: tuple[str, ...] = ()


def sessions() -> dict[str, list[Session]]:
    by_repo: dict[str, list[Session]] = {}
    for index in sorted(CORPUS.glob("*/*/sessions.jsonl")):
        lessons: dict[str, list[str]] = {}
        for label in _rows(index.parent / "labels.jsonl"):
            if label.get("lesson"):
                lessons.setdefault(label["session"], []).append(label["lesson"])
        for row in _rows(index):
            path = index.parent / row["file"]
            taught = tuple(lessons.get(row["session"], ()))
            by_repo.setdefault(row["repo"], []).append(Session(row["repo"], path, _start(path), taught))
    for path in sorted((DATA / "transcripts").glob("*.jsonl")):
        if len(path.stem) == 36:
            by_repo.setdefault("marot/spotter", []).append(Session("marot/spotter", path, _start(path)))
    return {
        repo: sorted(found, key=lambda s: (s.start, s.path.name)) for repo, found in by_repo.items() if len(found) > 1
    }


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _start(path: Path) -> str:
    steps = parse_transcript(read_transcript(path)).steps
    stamps = [s.timestamp for s in steps if s.timestamp is not None]
    return min(stamps).isoformat() if stamps else ""


def prompts(path: Path) -> list[str]:
    """The user's own prompts of a session: not the client's command wrappers, summaries or tool echoes."""
    out: list[str] = []
    for step in parse_transcript(read_transcript(path)).steps:
        text = (step.text or "").strip()
        if step.role != "user" or len(text) < 4 or text in out:
            continue
        if text.startswith(("<", "Caveat:", "This session is being continued", "[Request interrupted")):
            continue
        out.append(text)
    return out[:MAX_PROMPTS]


def walk(home: Path) -> Iterator[dict[str, object]]:
    """Every later session's prompts with the store built from the earlier ones, and the Memory to ask."""
    for repo, found in sorted(sessions().items()):
        folder = home / hashlib.sha1(repo.encode()).hexdigest()[:12]
        scope = "project:" + repo.replace("/", "-").lower()
        memory = open_memory(load_settings(home=folder, scope=scope), cwd=folder)
        for i, session in enumerate(found):
            if i:
                bullets = [(b.id, b.content) for b in memory.store.active_in([scope, "global"])]
                for prompt in prompts(session.path) if bullets else []:
                    yield {
                        "repo": repo,
                        "split": split_of(repo),
                        "session": session.path.name,
                        "prompt": prompt,
                        "candidates": [{"id": b, "text": t} for b, t in bullets],
                        "memory": memory,
                    }
            reflect(memory.deps, read_transcript(session.path), path=session.path, mode="rules", scope=scope)
            for lesson in session.lessons:
                memory.remember(lesson, scope=scope)


def dump(
    target: Path, rows: Callable[[Path], Iterator[dict[str, object]]] | None = None, prefix: str = "floor-real"
) -> None:
    """Every prompt ``rows`` (default: this set's ``walk``) asks, with its candidates, unlabelled, for labelling."""
    home = Path(tempfile.mkdtemp(prefix=f"memx-{prefix}-"))
    try:
        with target.open("w", encoding="utf-8") as out:
            for row in (rows or walk)(home):
                row.pop("memory")
                row["prompt"] = str(row["prompt"])[:MAX_PROMPT_CHARS]
                row["relevant"] = []
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def measure(heldout: bool, verbose: bool, by_sentence: bool) -> None:
    labelled = {
        (r["repo"], r["session"], r["prompt"]): r
        for r in (json.loads(x) for x in LABELS.read_text(encoding="utf-8").splitlines() if x.strip())
    }
    home = Path(tempfile.mkdtemp(prefix="memx-floor-real-"))
    results: dict[str, list[tuple[set[str], list[tuple[str, float]]]]] = {"tune": [], "heldout": []}
    try:
        for row in walk(home):
            key = (row["repo"], row["session"], str(row["prompt"])[:MAX_PROMPT_CHARS])
            if key not in labelled:
                continue
            texts = {c["text"]: c["id"] for c in row["candidates"]}  # type: ignore[attr-defined]
            relevant = {texts[t] for t in labelled[key]["relevant"] if t in texts}
            memory = row["memory"]
            scored = (
                _sentence_best(memory, str(row["prompt"]))
                if by_sentence
                else prompt_hits(memory.deps, str(row["prompt"]), 400)[1]
            )  # type: ignore[attr-defined]
            results[str(row["split"])].append((relevant, [(h.bullet.id, h.score.blended) for h in scored]))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    tune = results["tune"]
    allowed = [f for f in FLOORS if _rates(tune, f)[1] <= UNRELATED_ALLOWED]
    best = max(allowed, key=lambda f: (_rates(tune, f)[0], -f)) if allowed else FLOORS[-1]
    print("floor  tune served  tune unrelated injected")
    for f in FLOORS[::5]:
        s, u = _rates(tune, f)
        print(f"{f:5.2f}  {s:11.2f}  {u:8.2f}")
    if verbose:
        for relevant, hits in tune:
            mine = max((sc for i, sc in hits if i in relevant), default=0.0)
            top = max((sc for _, sc in hits), default=0.0)
            print(f"  tune {'relevant' if relevant else 'unrelated'} own {mine:.3f} top {top:.3f}")
    for name, rows in results.items():
        if name == "heldout" and not heldout:
            continue
        rel = sum(1 for r, _ in rows if r)
        s, u = _rates(rows, best)
        print(
            f"floor {best:.2f} {name}: {rel} relevant prompts served {s:.2f}, "
            f"{len(rows) - rel} unrelated prompts injected {u:.2f}"
        )
    print(f"chosen floor: {best:.2f}")


def _sentence_best(memory: Any, prompt: str) -> list[Hit]:
    """The variant tried on tune: a prompt of several sentences also asked one sentence at a time (its first
    three), each bullet keeping its best score (not adopted: it served no more tune prompts)."""
    best = {h.bullet.id: h for h in prompt_hits(memory.deps, prompt, 400)[1]}
    parts = [s for s in split_sentences(prompt[:MAX_QUERY_CHARS]) if query_terms(s)]
    for part in parts[:3] if len(parts) > 1 else []:
        for h in prompt_hits(memory.deps, part, 400)[1]:
            if h.bullet.id not in best or h.score.blended > best[h.bullet.id].score.blended:
                best[h.bullet.id] = h
    return sorted(best.values(), key=lambda h: -h.score.blended)[:5]


def _rates(rows: list[tuple[set[str], list[tuple[str, float]]]], floor: float) -> tuple[float, float]:
    related = [(r, hits) for r, hits in rows if r]
    unrelated = [hits for r, hits in rows if not r]
    served = sum(any(i in r and s >= floor for i, s in hits) for r, hits in related)
    injected = sum(any(s >= floor for _, s in hits) for hits in unrelated)
    return served / max(1, len(related)), injected / max(1, len(unrelated))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", type=Path, default=None, help="write the candidates (no labels, no scores)")
    parser.add_argument("--heldout", action="store_true", help="also measure the held-out part (once, at the end)")
    parser.add_argument("--verbose", action="store_true", help="every tune prompt's scores")
    parser.add_argument("--by-sentence", action="store_true", help="a long prompt also asked sentence by sentence")
    args = parser.parse_args()
    if args.dump:
        dump(args.dump)
    else:
        measure(args.heldout, args.verbose, args.by_sentence)


if __name__ == "__main__":
    main()
