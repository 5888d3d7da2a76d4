"""Experiment (issue 33 point 2, ninth round): does the prompt gate hear natural questions better when each
bullet carries the questions it answers?

Each bullet the prompt hook's recall can return got three "asks" (a symptom, a goal, a short casual form), written
by a model from the bullet's text alone, as the Reflector's model could write them when it reads a session
(``data/prompt_gate_asks.jsonl``, provenance in ``data/PROMPT_GATE_ASKS.md``). The feature ``ask`` is the largest
cosine (the shipped MiniLM) between the prompt and a hit's asks; ``ask_lead`` is how far it stands above the best
other hit's. Nothing here is shipped: memx stores no asks today.

Reads the hits ``prompt_gate.py collect --part tune|heldout`` kept (``/tmp/memx-gate/<part>.jsonl``; the hook's
own recall, 5 hits, 400 tokens, no relevance cut; the gate sees hits at ``min_relevance`` and above).

    python benchmarks/prompt_gate.py collect --part tune && python benchmarks/prompt_gate_asks.py tune
    python benchmarks/prompt_gate.py collect --part heldout && python benchmarks/prompt_gate_asks.py heldout

``tune``: the trade-off curves (relevant prompts served at most N % unrelated prompts injected) of the fused
score, ``ask`` alone (one threshold) and logistic gates with and without ``ask`` (cross-validated, leave one
repository out, as ``prompt_gate.py fit``). ``heldout``: the two rules fixed on tune (A: ``ask`` >= the tune
threshold at <= 5 % unrelated; B: the five gate features + ``ask``, fitted on all of tune, at its cross-validated
threshold) beside the shipped gate and the shipped floor.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import prompt_gate as pg
from memx_mcp.compose import make_embedder
from memx_mcp.config import Settings
from memx_mcp.domain.inputs import MAX_QUERY_CHARS
from memx_mcp.engine.retrieval import gate
from memx_mcp.usecases.prompt_gate import shipped_gate

ASKS = Path(__file__).parent / "data" / "prompt_gate_asks.jsonl"
NAMES = (*gate.FEATURES, "ask", "ask_lead")
ALLOWED = 0.05


def _unit(v: Any) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-9)


def table(
    part: str,
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray, list[int], list[str], list[str], list[float]]:
    """Every visible hit of every prompt of ``part``: gate features + ask + ask_lead, label, owner, fold, id,
    blended score."""
    asks = {r["bullet"]: r["asks"] for r in (json.loads(x) for x in ASKS.read_text("utf-8").splitlines() if x)}
    rows = [json.loads(x) for x in (pg.CACHE / f"{part}.jsonl").read_text("utf-8").splitlines() if x.strip()]
    lazy = make_embedder(Settings())
    lazy.start()
    model = lazy.get(300)
    assert model is not None, "the shipped model did not load"
    prompts = _unit(model.embed_queries([r["prompt"][:MAX_QUERY_CHARS] for r in rows]))
    texts = sorted({h["text"] for r in rows for h in pg._visible(r)})
    missing = [t for t in texts if t not in asks]
    if missing:
        raise SystemExit(f"{len(missing)} visible hits have no asks in {ASKS.name}, e.g. {missing[0][:80]!r}")
    flat = [(t, a) for t in texts for a in asks[t]]
    vectors: dict[str, list[np.ndarray]] = {}
    for (t, _), v in zip(flat, _unit(model.embed_queries([a for _, a in flat])), strict=True):
        vectors.setdefault(t, []).append(v)
    x, y, owner, groups, ids, blended = [], [], [], [], [], []
    for i, row in enumerate(rows):
        hits = pg._visible(row)
        feats = gate.features(row["prompt"][:MAX_QUERY_CHARS], [(h["text"], h["semantic"]) for h in hits])
        sims = [max(float(v @ prompts[i]) for v in vectors[h["text"]]) for h in hits]
        for k, (h, f) in enumerate(zip(hits, feats, strict=True)):
            other = max((s for j, s in enumerate(sims) if j != k), default=0.0)
            x.append([*f, sims[k], sims[k] - other])
            y.append(1.0 if h["relevant"] else 0.0)
            owner.append(i)
            ids.append(h["id"])
            blended.append(h["blended"])
            groups.append(f"{row['set']}:{row['repo']}" if row["repo"] else f"{row['set']}:{i}")
    return rows, np.array(x), np.array(y), owner, groups, ids, blended


def decisions(rows: list[dict[str, Any]], owner: list[int], ids: list[str], passed: np.ndarray) -> list[set[str]]:
    out: list[set[str]] = [set() for _ in rows]
    for o, hid, ok in zip(owner, ids, passed, strict=True):
        if ok:
            out[o].add(hid)
    return out


def curve(rows: list[dict[str, Any]], owner: list[int], ids: list[str], scores: np.ndarray) -> list[tuple[float, ...]]:
    points = []
    for t in [*sorted(set(np.round(scores, 4))), 9.0]:
        s, rel, inj, unrel = pg.rates(rows, decisions(rows, owner, ids, scores >= t))
        points.append((float(t), s / rel, inj / unrel))
    return points


def best(points: list[tuple[float, ...]], allowed: float) -> tuple[float, ...]:
    return max((p for p in points if p[2] <= allowed + 1e-9), key=lambda p: (p[1], -p[0]))


def cross_validated(x: np.ndarray, y: np.ndarray, groups: list[str]) -> np.ndarray:
    out = np.zeros(len(y))
    for g in sorted(set(groups)):
        test = np.array([k == g for k in groups])
        out[test] = pg._prob(pg._fit(x[~test], y[~test]), x[test])
    return out


GATES = {"gate 5": [0, 1, 2, 3, 4], "gate 5 + ask": [0, 1, 2, 3, 4, 5], "gate 5 + ask + ask_lead": list(range(7))}


def tune() -> dict[str, float]:
    rows, x, y, owner, groups, ids, blended = table("tune")
    print(f"tune: {len(rows)} prompts ({sum(r['related'] for r in rows)} relevant), {len(y)} visible hits")
    scores = {"fused score (one floor)": np.array(blended), "ask alone (one threshold)": x[:, 5]}
    scores |= {f"{name} (cross-validated)": cross_validated(x[:, cols], y, groups) for name, cols in GATES.items()}
    chosen = {}
    for name, s in scores.items():
        points = curve(rows, owner, ids, s)
        cells = []
        for allowed in (0.0, 0.02, 0.05, 0.10):
            t, served, unrelated = best(points, allowed)
            cells.append(f"<= {allowed:.2f}: {served:.2f} ({unrelated:.3f}) at {t:.3f}")
        print(f"  {name:36} " + " | ".join(cells))
        chosen[name] = best(points, ALLOWED)[0]
    return {"A": chosen["ask alone (one threshold)"], "B": chosen["gate 5 + ask (cross-validated)"]}


def heldout(thresholds: dict[str, float]) -> None:
    _, t_x, t_y, *_ = table("tune")
    model_b = pg._fit(t_x[:, GATES["gate 5 + ask"]], t_y)
    rows, x, y, owner, _, ids, blended = table("heldout")
    shipped = shipped_gate()
    z = (x[:, :5] - np.array(shipped.mean)) / np.array(shipped.scale)
    gate_p = 1 / (1 + np.exp(-(z @ np.array(shipped.coef) + shipped.bias)))
    rules = {
        f"A: ask >= {thresholds['A']:.3f}": x[:, 5] >= thresholds["A"],
        f"B: gate 5 + ask >= {thresholds['B']:.3f}": pg._prob(model_b, x[:, GATES["gate 5 + ask"]]) >= thresholds["B"],
        f"shipped gate >= {shipped.threshold:.3f}": gate_p >= shipped.threshold,
        "shipped floor: blended >= 0.25": np.array(blended) >= Settings().inject_min_relevance,
    }
    print(f"held-out: {len(rows)} prompts ({sum(r['related'] for r in rows)} relevant), {len(y)} visible hits")
    print("  set          rule                            relevant served    unrelated injected")
    for name in ("real", "new", "synthetic", "real+new", "all"):
        keep = [i for i, r in enumerate(rows) if name == "all" or r["set"] in name.split("+")]
        for rule, passed in rules.items():
            made = decisions(rows, owner, ids, passed)
            s, rel, inj, unrel = pg.rates([rows[i] for i in keep], [made[i] for i in keep])
            served, injected = (
                f"{s:3}/{rel:3} = {s / max(1, rel):.2f}",
                f"{inj:3}/{unrel:3} = {inj / max(1, unrel):.3f}",
            )
            print(f"  {name:12} {rule:32} {served}   {injected}")
    within = sum(1 for r in rows if r["related"] and any(h["relevant"] for h in pg._visible(r)))
    related = sum(r["related"] for r in rows)
    print(f"  relevant prompts whose relevant bullet is among the visible hits: {within} of {related}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["tune", "heldout"])
    args = parser.parse_args()
    thresholds = tune()
    if args.part == "heldout":
        heldout(thresholds)


if __name__ == "__main__":
    main()
