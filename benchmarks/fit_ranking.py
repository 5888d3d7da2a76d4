"""Fit the learned ranking (``engine/retrieval/ranking.py``) on the training split only.

Training data: the questions of LoCoMo conversations 0-4 (the bare protocol's store of all ten
conversations, so that the full-text statistics are those every LoCoMo run sees), the tune prompts of
``data/prompt_floor.jsonl`` (coding facts among the bullets reflected from five real sessions) and the
training half of DevBench (``devbench.py``'s hash rule). Conversations 5-9, the prompt-floor held-out prompts
and DevBench's held-out half are never read here.

For each query, memx's own recall runs with the current weights and every scored candidate's features
are read (``RetrievalParams.trace``), labelled 1 when it is an evidence turn / the query's fact. The
features are cached (``--cache``, an .npz per set) so that refits are cheap; ``--extract`` recomputes them
with the weights now shipped (the candidates that get their neighbours read depend on the ranking, so
extract, fit, extract again). The fit: listwise logistic regression (each query's candidates in one
softmax; numpy), each query weighing the same within its set, the coding sets ``--coding-weight`` times a
LoCoMo question (pointwise logistic regression ranked worse than SPEC's blend on the cached candidates). Then
``scale``/``shift`` map the logit onto SPEC's Blended (a least-squares fit of logit(Blended) on the
candidates), so that ``min_relevance`` and the prompt floor keep about their meaning.

    python benchmarks/fit_ranking.py --extract --keep /tmp/ranking-locomo [--write]
    python benchmarks/fit_ranking.py [--l2 1.0] [--write]   # refit from the cached features
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from memx_mcp.domain.models import Bullet
from memx_mcp.engine.retrieval.ranking import FEATURES, RankingWeights
from memx_mcp.memory import Memory
from memx_mcp.usecases.deps import shipped_ranking

WEIGHTS = Path(__file__).parents[1] / "src" / "memx_mcp" / "engine" / "retrieval" / "ranking_weights.json"
CACHE = Path(tempfile.gettempdir()) / "memx-ranking-features"

Query = tuple[np.ndarray, np.ndarray, np.ndarray]  # features (candidates x FEATURES), labels, multipliers


CONTEXT: dict[str, int] = {}  # context_rescore / context_expand for the extraction (--rescore, --expand)


def features_of(memory: Memory, query: str, scope: str, gold: set[str], clock: Any = None) -> Query | None:
    """memx recall of ``query`` with every candidate's features and multipliers (Decay's effect x recency x
    scope) read; None when no gold is a candidate (nothing to learn from: the candidate generator missed it)."""
    seen: dict[str, tuple[Sequence[float], float]] = {}

    def trace(b: Bullet, f: Sequence[float], multiplier: float) -> None:
        seen[b.id] = (f, multiplier)

    deps = memory.deps
    saved, saved_clock = deps.retrieval, deps.clock
    deps.retrieval = dataclasses.replace(
        saved,
        ranking=shipped_ranking(),
        trace=trace,
        min_relevance=0.0,
        **CONTEXT,  # type: ignore[arg-type]
    )
    if clock is not None:
        deps.clock = lambda: clock
    try:
        memory.recall(query, scope=scope, max_results=5, token_budget=50_000, reinforce=False)
    finally:
        deps.retrieval, deps.clock = saved, saved_clock
    ids = list(seen)
    y = np.array([1.0 if i in gold else 0.0 for i in ids])
    if not y.any():
        return None
    return np.array([seen[i][0] for i in ids], dtype=float), y, np.array([seen[i][1] for i in ids], dtype=float)


def locomo_queries(keep: Path, conversations: range, protocol: str) -> list[Query | None]:
    """The questions of ``conversations`` in the kept store of all ten, as ``locomo.py --protocol`` asks
    them: ``bare`` (Decay off, one clock a day after the newest turn of all) or ``aged`` (Decay as shipped,
    each conversation's clock a day after its own newest turn)."""
    import locomo

    data = json.loads(locomo.DATA.read_text(encoding="utf-8"))
    convs = list(enumerate(data))
    memory, filled = locomo.open_memory_for(protocol, keep)
    if not filled:
        from harness import load

        print(f"importing {sum(1 for _ in locomo.bare_records(convs))} turns", flush=True)
        load(memory, locomo.bare_records(convs))
    everyone = locomo.newest_turn(convs) + timedelta(days=1)
    out = []
    for n, conv in convs:
        if n not in conversations:
            continue
        clock = locomo.newest_turn([(n, conv)]) + timedelta(days=1) if protocol == "aged" else everyone
        for q in conv["qa"]:
            if q["category"] in locomo.CATEGORIES:
                gold = {locomo.turn_id(n, e) for e in q.get("evidence", [])}
                out.append(features_of(memory, q["question"], f"project:locomo-{n}", gold, clock))
    return out


def coding_queries() -> list[Query | None]:
    """The prompt-floor store's tune prompts and DevBench's training half."""
    import coding_recall
    import devbench

    out: list[Query | None] = []
    memory, facts, scope = coding_recall.build()
    for fact_id, row in facts.items():
        out.append(features_of(memory, row["tune"], scope, {fact_id}))
    memory, queries = devbench.build()
    for q in queries:
        if q["expected_tags"] and not devbench.held_out(q):
            out.append(features_of(memory, q["question"], devbench.SCOPE, set(q["expected_tags"])))
    return out


Set = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]  # x, y, multipliers, query ids, queries asked


def save(cache: Path, name: str, queries: list[Query | None]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    kept = [q for q in queries if q is not None]
    np.savez_compressed(
        cache / f"{name}.npz",
        x=np.concatenate([q[0] for q in kept]),
        y=np.concatenate([q[1] for q in kept]),
        m=np.concatenate([q[2] for q in kept]),
        qid=np.concatenate([np.full(len(q[1]), i) for i, q in enumerate(kept)]),
        total=len(queries),
    )
    print(f"{name}: {len(kept)} of {len(queries)} queries have a gold candidate", flush=True)


def load_set(cache: Path, name: str) -> Set:
    d = np.load(cache / f"{name}.npz")
    return d["x"], d["y"], d["m"], d["qid"], int(d["total"])


def log_sigmoid(u: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -u)


def fit(
    x: np.ndarray,
    y: np.ndarray,
    mult: np.ndarray,
    qid: np.ndarray,
    qw: np.ndarray,
    l2: float,
    start: tuple[np.ndarray, float],
    steps: int = 3000,
) -> tuple[np.ndarray, float, float]:
    """Listwise logistic regression on the score memx ranks by: each query's candidates compete in one
    softmax over ``gamma * log(sigmoid(beta . x + b) * multiplier)`` (the relevance times Decay's effect,
    recency and scope, as ``fuse_learned`` multiplies them); the loss is -log of the share its gold candidates
    get, L2-regularised on beta, each query weighted by ``qw``. Adam on the exact gradient, numpy only. Rows
    of one query are contiguous in ``qid`` order. Returns beta, b and the softmax's sharpness gamma (gamma
    only shapes the loss: the ranking is that of the relevance times the multipliers)."""
    starts = np.r_[0, np.flatnonzero(np.diff(qid)) + 1]
    seg = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(qid)]))
    w = qw[seg]
    logm = np.log(np.maximum(mult, 1e-12))
    theta = np.r_[start[0], start[1], np.log(4.0)]  # beta, b, log gamma
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    k = x.shape[1]
    for t in range(1, steps + 1):
        beta, b, gamma = theta[:k], theta[k], np.exp(theta[k + 1])
        u = x @ beta + b
        ell = log_sigmoid(u) + logm
        s = gamma * ell
        e = np.exp(s - np.maximum.reduceat(s, starts)[seg])
        p_all = e / np.add.reduceat(e, starts)[seg]
        p_gold = e * y / np.maximum(np.add.reduceat(e * y, starts)[seg], 1e-300)
        g = w * (p_all - p_gold)  # dLoss/ds
        du = g * gamma * (1.0 - np.exp(log_sigmoid(u)))
        grad = np.r_[x.T @ du + l2 * beta, du.sum(), (g * ell).sum() * gamma]
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        theta -= 0.02 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta[:k], float(theta[k]), float(np.exp(theta[k + 1]))


def recall_at(s: np.ndarray, y: np.ndarray, qid: np.ndarray, total: int, k: int = 5) -> float:
    """Share of all queries (those without a gold candidate count as misses) with a gold in the top k of
    the cached candidates, ranked by the scores ``s``."""
    found = 0
    for q in np.unique(qid):
        m = qid == q
        top = np.argsort(-s[m], kind="stable")[:k]
        found += bool(y[m][top].any())
    return found / total


def spec_blended(x: np.ndarray) -> np.ndarray:
    """SPEC's Blended from the features (L1 and L2 with the context's share, as the Generator adds it)."""
    f = {name: x[:, i] for i, name in enumerate(FEATURES)}
    l1 = np.minimum(15.0, 15 * (f["exact"] + 0.7 * f["context_exact"]))
    l2 = np.minimum(10.0, 10 * (f["fuzzy"] + 0.7 * f["context_only"]))
    keyword = (l1 + l2 + 10 * f["metadata"]) / 35.0
    semantic = f["semantic"] + 0.5 * f["context_semantic"]
    return np.where(f["keyword_only"] > 0, keyword, 0.6 * keyword + 0.4 * semantic)


SETS = ("locomo-bare-0-4", "locomo-aged-0-4", "coding-train")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extract", action="store_true", help="recompute the cached features with the shipped weights")
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "memx-ranking-locomo")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the extracted features are kept")
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--coding-weight", type=float, default=5.0)
    parser.add_argument("--write", action="store_true", help="write the fitted weights into the package")
    parser.add_argument("--rescore", type=int, help="context_rescore for the extraction (default: as shipped)")
    parser.add_argument("--expand", type=int, help="context_expand for the extraction (default: as shipped)")
    args = parser.parse_args()
    if args.rescore is not None:
        CONTEXT["context_rescore"] = args.rescore
    if args.expand is not None:
        CONTEXT["context_expand"] = args.expand
    if args.extract:
        save(args.cache, "locomo-bare-0-4", locomo_queries(args.keep, range(0, 5), "bare"))
        save(args.cache, "locomo-aged-0-4", locomo_queries(args.keep, range(0, 5), "aged"))
        save(args.cache, "coding-train", coding_queries())
    sets = {name: load_set(args.cache, name) for name in SETS}
    xs, ys, ms, qs, ws = [], [], [], [], []
    offset = 0
    for name, (x, y, mult, qid, _) in sets.items():
        xs.append(x)
        ys.append(y)
        ms.append(mult)
        qs.append(qid + offset)
        # a LoCoMo question weighs 1 over its two protocols; a coding query ``--coding-weight``
        ws.append(np.full(qid.max() + 1, args.coding_weight if name.startswith("coding") else 0.5))
        offset += qid.max() + 1
    x, y = np.concatenate(xs), np.concatenate(ys)
    now = shipped_ranking()
    start = (np.array(now.weights) * now.scale, now.scale * now.intercept + now.shift)
    beta, b, gamma = fit(x, y, np.concatenate(ms), np.concatenate(qs), np.concatenate(ws), args.l2, start)
    model = RankingWeights(tuple(float(v) for v in beta), b)
    for name, (sx, sy, sm, sq, total) in sets.items():
        learned = recall_at(np.exp(log_sigmoid(sx @ beta + b)) * sm, sy, sq, total)
        shipped = recall_at(np.exp(log_sigmoid(sx @ start[0] + start[1])) * sm, sy, sq, total)
        spec = recall_at(spec_blended(sx) * sm, sy, sq, total)
        print(
            f"{name}: r@5 over the cached candidates (x multipliers), fitted {learned:.3f}, "
            f"shipped {shipped:.3f}, SPEC's blend {spec:.3f}"
        )
    rel = np.exp(log_sigmoid(x @ beta + b))
    for label, part in (("gold", rel[y > 0]), ("other", rel[y == 0])):
        q = np.quantile(part, [0.05, 0.25, 0.5, 0.75, 0.95])
        print(f"  relevance of {label} candidates, quantiles 5/25/50/75/95 %: " + " ".join(f"{v:.3f}" for v in q))
    print(f"  floor (every feature 0): {np.exp(log_sigmoid(np.array(b))):.3f}")
    for name, value in zip(FEATURES, model.weights, strict=True):
        print(f"  {name:18} {value:+.3f}")
    print(f"  intercept {model.intercept:+.3f}; softmax sharpness {gamma:.2f}")
    if args.write:
        command = " ".join(["python benchmarks/fit_ranking.py", *sys.argv[1:]])
        WEIGHTS.write_text(
            json.dumps(
                {
                    "version": hashlib.sha256(beta.tobytes()).hexdigest()[:12],
                    "command": command,
                    "training": "LoCoMo conversations 0-4 (bare store of all ten; bare and aged protocols), "
                    "prompt_floor.jsonl tune prompts, DevBench training half",
                    "intercept": model.intercept,
                    "weights": dict(zip(FEATURES, model.weights, strict=True)),
                    "scale": model.scale,
                    "shift": model.shift,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {WEIGHTS}")


if __name__ == "__main__":
    main()
