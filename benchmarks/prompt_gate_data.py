"""A NEW set of real prompts for the prompt gate (issue 33 point 2), built the way
`prompt_floor_real.py` built its set, from prompts that set never asked:

- ``first``: each multi-session repository's FIRST session (its first 12 prompts), asked of the store built
  from the repository's LATER sessions (rules mode plus their labelled lessons): the old set never asked a
  first session's prompts (its store was empty then);
- ``later``: prompts 13 to 24 of every later session, asked of the store of the sessions before it (the old
  set took each session's first 12 only).

Split by repository with the old set's rule (`prompt_floor_real.split_of`): rows of held-out repositories
form the NEW held-out part; rows of tune repositories extend the tune part. `--dump` writes candidates only,
no score; the labels are written by reading prompt and candidates (`data/PROMPT_GATE_NEW.md`).

    python benchmarks/prompt_gate_data.py --dump data/prompt_gate_new.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Iterator
from pathlib import Path

import prompt_floor_real as real
from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.usecases.reflect import read_transcript, reflect

FIRST = 12
LATER = (12, 24)


def all_prompts(path: Path) -> list[str]:
    keep = real.MAX_PROMPTS
    real.MAX_PROMPTS = 10_000
    try:
        return real.prompts(path)
    finally:
        real.MAX_PROMPTS = keep


def _memory(home: Path, repo: str, tag: str):  # type: ignore[no-untyped-def]
    folder = home / (hashlib.sha1(repo.encode()).hexdigest()[:12] + tag)
    scope = "project:" + repo.replace("/", "-").lower()
    return open_memory(load_settings(home=folder, scope=scope), cwd=folder), scope


def _add(memory, scope: str, session: real.Session) -> None:  # type: ignore[no-untyped-def]
    reflect(memory.deps, read_transcript(session.path), path=session.path, mode="rules", scope=scope)
    for lesson in session.lessons:
        memory.remember(lesson, scope=scope)


def walk(home: Path) -> Iterator[dict[str, object]]:
    for repo, found in sorted(real.sessions().items()):
        memory, scope = _memory(home, repo, "-fwd")
        for i, session in enumerate(found):
            if i:
                bullets = [(b.id, b.content) for b in memory.store.active_in([scope, "global"])]
                for prompt in all_prompts(session.path)[LATER[0] : LATER[1]] if bullets else []:
                    yield _row(repo, "later", session, prompt, bullets, memory)
            _add(memory, scope, session)
        back, scope = _memory(home, repo, "-back")
        for session in found[1:]:
            _add(back, scope, session)
        bullets = [(b.id, b.content) for b in back.store.active_in([scope, "global"])]
        for prompt in all_prompts(found[0].path)[:FIRST] if bullets else []:
            yield _row(repo, "first", found[0], prompt, bullets, back)


def _row(repo, kind, session, prompt, bullets, memory):  # type: ignore[no-untyped-def]
    return {
        "repo": repo,
        "split": real.split_of(repo),
        "kind": kind,
        "session": session.path.name,
        "prompt": prompt,
        "candidates": [{"id": b, "text": t} for b, t in bullets],
        "memory": memory,
    }


def dump(target: Path) -> None:
    real.dump(target, walk, prefix="gate-new")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", type=Path, required=True)
    dump(parser.parse_args().dump)


if __name__ == "__main__":
    main()
