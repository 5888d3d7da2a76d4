"""Prototype (issue 33 point 1, seventh round): store-level BM25 statistics for the learned ranking, measured
on the cached candidates of ``fit_ranking.py`` (training data only: LoCoMo conversations 0-4 and the coding
training sets).

``fit_ranking.py --extract`` caches each candidate's id, each query's text and scope, and every scope's active
bullets (``corpus.json``). Here each candidate gets extra features computed from the whole scope, not from the
~70 candidates of one recall: BM25 of its own stems with the scope's document frequencies and mean length, the
same of the bullet written just before it and just after it (separate fields, each its own feature), and a
BM25F of the three; a speaker prior (the query names the bullet's leading name). The listwise fit of
``fit_ranking.py`` then runs over today's features plus the chosen extra ones, and the proxy r@5 is reported
in-sample and leave-one-conversation-out (fit on four of 0-4, rank the fifth), which is the figure to choose
by.

    python benchmarks/ranking_store_stats.py --cache /tmp/rank7/feat-base [--sets plain,store,...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from fit_ranking import SETS, fit, log_sigmoid, recall_at
from memx_mcp.engine.retrieval.ranking import FEATURES
from memx_mcp.text.stems import names, query_stems, stem_counts

K1, B = 1.2, 0.75
WINDOW = 3600.0


class Scope:
    """One scope's bullets: stems, document frequencies, mean length, neighbours in time."""

    def __init__(self, rows: list[list[str]]) -> None:
        self.ids = [r[0] for r in rows]
        self.pos = {i: k for k, i in enumerate(self.ids)}
        self.text = [r[1] for r in rows]
        self.when = [datetime.fromisoformat(r[2]).timestamp() for r in rows]
        self.stems = [stem_counts(t) for t in self.text]
        self.df: Counter[str] = Counter()
        for s in self.stems:
            self.df.update(s.keys())
        self.n = len(rows)
        self.mean = sum(sum(s.values()) for s in self.stems) / max(1, self.n)
        self.lead = [t.split(":", 1)[0].strip().lower() if ":" in t[:40] else "" for t in self.text]

    def idf(self, stem: str) -> float:
        df = self.df.get(stem, 0)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def neighbour(self, k: int, step: int) -> int | None:
        j = k + step
        if 0 <= j < self.n and 0 < abs(self.when[j] - self.when[k]) <= WINDOW:
            return j
        return None


def bm25(query: list[str], idf: dict[str, float], counts: Counter[str], length: float, mean: float) -> float:
    norm = K1 * (1.0 - B + B * length / (mean or 1.0))
    score = 0.0
    for s in query:
        tf = counts.get(s, 0)
        if tf:
            score += idf[s] * tf * (K1 + 1.0) / (tf + norm)
    return score


EXTRA = (
    "s_own",  # BM25 own field, scope statistics, / max possible
    "s_prev",  # BM25 of the bullet before it
    "s_next",  # BM25 of the bullet after it
    "s_f",  # BM25F: own + 0.5 prev + 0.5 next as one document
    "s_rel",  # s_own / the best s_own among the query's candidates
    "s_frel",  # s_f / the best s_f among the query's candidates
    "s_cover",  # IDF share of the query's stems the bullet has
    "s_cover_ctx",  # IDF share the bullet or a neighbour has
    "speaker",  # the query names the bullet's leading name (before ':')
    "speaker_other",  # the query names a leading name of the scope, not this bullet's
    "names_ctx",  # share of the query's names found in the bullet or a neighbour
    "sem_rel",  # semantic / the best semantic among the query's candidates
    "s_ctx_rel",  # max(s_prev, s_next) / the best s_own among the query's candidates
)


def extra_features(
    cache: Path, name: str, corpus: dict[str, Scope], fw: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """(rows x EXTRA) for one cached set, and each query's conversation number (-1 for coding)."""
    d = np.load(cache / f"{name}.npz")
    ids, qid, texts, scopes = d["ids"], d["qid"], d["text"], d["scope"]
    out = np.zeros((len(ids), len(EXTRA)))
    starts = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    conv = np.full(len(texts), -1)
    for q in range(len(texts)):
        sc = corpus[str(scopes[q])]
        scope = str(scopes[q])
        if scope.startswith("project:locomo-"):
            conv[q] = int(scope.rsplit("-", 1)[1])
        text = str(texts[q])
        stems = list(query_stems(text))
        idf = {s: sc.idf(s) for s in stems}
        top = sum(idf.values()) * (K1 + 1.0)
        said = names(text)
        leads = {lead for lead in sc.lead if lead}
        for r in range(starts[q], starts[q + 1]):
            k = sc.pos.get(str(ids[r]))
            if k is None or not top:
                continue
            own = sc.stems[k]
            p, n = sc.neighbour(k, -1), sc.neighbour(k, +1)
            prev = sc.stems[p] if p is not None else Counter()
            nxt = sc.stems[n] if n is not None else Counter()
            merged: Counter[str] = Counter()
            for s, c in own.items():
                merged[s] += c
            for s, c in prev.items():
                merged[s] += fw[0] * c  # type: ignore[assignment]
            for s, c in nxt.items():
                merged[s] += fw[1] * c  # type: ignore[assignment]
            length = sum(merged.values())
            total_idf = sum(idf.values()) or 1.0
            out[r, 0] = bm25(stems, idf, own, sum(own.values()), sc.mean) / top
            out[r, 1] = bm25(stems, idf, prev, sum(prev.values()), sc.mean) / top
            out[r, 2] = bm25(stems, idf, nxt, sum(nxt.values()), sc.mean) / top
            out[r, 3] = bm25(stems, idf, merged, length, sc.mean * (1 + sum(fw))) / top
            out[r, 6] = sum(idf[s] for s in stems if s in own) / total_idf
            out[r, 7] = sum(idf[s] for s in stems if s in own or s in prev or s in nxt) / total_idf
            lead = sc.lead[k]
            out[r, 8] = 1.0 if lead and lead in said else 0.0
            out[r, 9] = 1.0 if any(x in said for x in leads - {lead}) and lead not in said else 0.0
            if said:
                words = set(sc.text[k].lower().replace(":", " ").split())
                for j in (p, n):
                    if j is not None:
                        words |= set(sc.text[j].lower().replace(":", " ").split())
                out[r, 10] = sum(1 for x in said if x in words) / len(said)
        seg = slice(starts[q], starts[q + 1])
        for src, dst in ((0, 4), (3, 5)):
            best = out[seg, src].max()
            out[seg, dst] = out[seg, src] / best if best > 0 else 0.0
        best = out[seg, 0].max()
        out[seg, 12] = np.maximum(out[seg, 1], out[seg, 2]) / best if best > 0 else 0.0
        sem = d["x"][seg, FEATURES.index("semantic")]
        out[seg, 11] = sem / sem.max() if sem.max() > 0 else 0.0
    return out, conv


def fit_kept(
    data: dict[str, tuple[Any, ...]],
    design: Callable[[str], np.ndarray],
    keep: dict[str, np.ndarray],
    l2: float,
    steps: int,
) -> tuple[np.ndarray, float]:
    """``fit_ranking.fit`` over the kept queries of every set (``data``: name -> (x, extra, y, multipliers,
    query ids, total, conversation)), each query renumbered, a coding query weighing 5, a LoCoMo one 0.5 (its two
    protocols: 1), from zero weights."""
    xs, ys, ms, qs, ws = [], [], [], [], []
    off = 0
    for name, (_, _, y, m, qid, _, _) in data.items():
        mask = keep[name][qid]
        if not mask.any():
            continue
        _, renum = np.unique(qid[mask], return_inverse=True)
        xs.append(design(name)[mask])
        ys.append(y[mask])
        ms.append(m[mask])
        qs.append(renum + off)
        n = renum.max() + 1
        ws.append(np.full(n, 5.0 if name.startswith("coding") else 0.5))
        off += n
    x = np.concatenate(xs)
    beta, b, _ = fit(
        x,
        np.concatenate(ys),
        np.concatenate(ms),
        np.concatenate(qs),
        np.concatenate(ws),
        l2,
        (np.zeros(x.shape[1]), -2.0),
        steps=steps,
    )
    return beta, b


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--variants", default="today,store")
    parser.add_argument("--fw", default="0.5,0.5", help="BM25F weights of the previous and next bullet")
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--cv", action="store_true", help="also leave one conversation of 0-4 out")
    parser.add_argument("--ranks", action="store_true", help="where the first gold lands (in-sample fit)")
    args = parser.parse_args()
    fw = tuple(float(v) for v in args.fw.split(","))
    raw = json.loads((args.cache / "corpus.json").read_text(encoding="utf-8"))
    corpus = {scope: Scope(rows) for scope, rows in raw.items()}
    data = {}
    for name in SETS:
        d = np.load(args.cache / f"{name}.npz")
        extra, conv = extra_features(args.cache, name, corpus, fw)  # type: ignore[arg-type]
        data[name] = (d["x"], extra, d["y"], d["m"], d["qid"], int(d["total"]), conv)
    variants = {
        "today": [],
        "store": ["s_own", "s_prev", "s_next", "s_f"],
        "store+rel": ["s_own", "s_prev", "s_next", "s_f", "s_rel", "s_frel"],
        "store+cover": ["s_own", "s_prev", "s_next", "s_f", "s_cover", "s_cover_ctx"],
        "store+speaker": ["s_own", "s_prev", "s_next", "s_f", "speaker", "speaker_other"],
        "all": list(EXTRA[:10]),
        "speaker": ["speaker", "speaker_other"],
        "ssr": ["s_own", "s_prev", "s_next", "s_f", "s_rel", "s_frel", "speaker", "speaker_other"],
        "ssr+names": ["s_own", "s_prev", "s_next", "s_f", "s_rel", "s_frel", "speaker", "speaker_other", "names_ctx"],
        "ssr+semrel": ["s_own", "s_prev", "s_next", "s_f", "s_rel", "s_frel", "speaker", "speaker_other", "sem_rel"],
        "ssr+ctxrel": ["s_own", "s_prev", "s_next", "s_f", "s_rel", "s_frel", "speaker", "speaker_other", "s_ctx_rel"],
        "all13": list(EXTRA),
    }
    for v in args.variants.split(","):
        cols = [EXTRA.index(c) for c in variants[v]]

        def design(name: str, cols: list[int] = cols) -> np.ndarray:
            x, extra = data[name][0], data[name][1]
            return np.column_stack([x, extra[:, cols]]) if cols else x

        def fit_on(keep: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
            return fit_kept(data, design, keep, args.l2, args.steps)

        every = {name: np.ones(len(data[name][6]), dtype=bool) for name in data}
        beta, b = fit_on(every)
        line = [f"{v:14}"]
        for name, (_x, _extra, y, m, qid, total, _conv) in data.items():
            s = np.exp(log_sigmoid(design(name) @ beta + b)) * m
            line.append(f"{name} {recall_at(s, y, qid, total):.3f}")
        if args.ranks:
            for name, (_x, _extra, y, m, qid, _total, _conv) in data.items():
                s = np.exp(log_sigmoid(design(name) @ beta + b)) * m
                first = []
                for q in np.unique(qid):
                    rows = qid == q
                    first.append(int(np.flatnonzero(y[rows][np.argsort(-s[rows], kind="stable")])[0]))
                r = np.array(first)
                line.append(
                    f"{name} gold ranks 1-5 {(r < 5).sum()}, 6-10 {((r >= 5) & (r < 10)).sum()}, "
                    f"11-20 {((r >= 10) & (r < 20)).sum()}, >20 {(r >= 20).sum()} of {len(r)}"
                )
        if args.cv:
            found = {n: 0 for n in data if n.startswith("locomo")}
            for c in range(5):
                keep = {n: (data[n][6] != c) for n in data}
                bc, cc = fit_on(keep)
                for n in found:
                    _x, extra, y, m, qid, total, conv = data[n]
                    rows = conv[qid] == c
                    s = np.exp(log_sigmoid(design(n)[rows] @ bc + cc)) * m[rows]
                    # hits only (the queries with no gold candidate are misses either way)
                    found[n] += round(recall_at(s, y[rows], qid[rows], 1))
            for n in found:
                line.append(f"cv {n} {found[n] / data[n][5]:.3f}")
        print(" | ".join(line), flush=True)
        names_ = [*FEATURES[: data[SETS[0]][0].shape[1]], *variants[v]]  # (the cache's own features)
        print("   " + " ".join(f"{k}={w:+.2f}" for k, w in zip(names_, beta, strict=True)) + f" b={b:+.2f}", flush=True)


if __name__ == "__main__":
    main()
