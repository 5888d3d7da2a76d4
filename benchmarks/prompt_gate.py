"""The prompt gate (issue 33 point 2): is any stored bullet relevant to this prompt?

Three labelled sets of prompts, each asked of its store with the hook's own recall (5 results, 400 tokens);
``collect`` keeps every hit with its score breakdown and text (no ``min_relevance`` cut), ``fit`` uses the
hits the hook sees (blended >= ``min_relevance``), ``measure`` runs the production functions
(``relevant_hits`` for the gate, the fifth round's floor beside it):

- ``real``: `data/prompt_floor_real.jsonl` (fifth round; its held-out half was measured once at the shipped
  floor, so it is reported here as "seen before", never used to fit);
- ``new``: `data/prompt_gate_new.jsonl` (this round; labelled and committed before any score; its held-out
  half is the blind one, measured once at the end);
- ``synthetic``: `data/prompt_floor.jsonl` + `prompt_floor_unrelated.jsonl` (written prompts against a store
  of five reflected sessions and 24 facts; its held-out half was measured in an earlier round: "seen").

    python benchmarks/prompt_gate.py collect --part tune     # hits of every tune prompt -> /tmp/memx-gate/
    python benchmarks/prompt_gate.py fit [--write]           # cross-validated fit on tune, the curve, weights
    python benchmarks/prompt_gate.py measure --part tune     # the shipped gate on tune (in-sample)
    python benchmarks/prompt_gate.py measure --part heldout  # once, at the end: the held-out parts
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import prompt_floor_real as real
import prompt_gate_data as new
from memx_mcp.compose import open_memory
from memx_mcp.config import load_settings
from memx_mcp.domain.inputs import MAX_QUERY_CHARS
from memx_mcp.engine.retrieval import gate
from memx_mcp.usecases.injection import prompt_hits, relevant_hits
from memx_mcp.usecases.recall import recall
from memx_mcp.usecases.reflect import read_transcript, reflect

DATA = Path(__file__).parent / "data"
CACHE = Path("/tmp/memx-gate")
WEIGHTS = Path(__file__).parents[1] / "src" / "memx_mcp" / "engine" / "retrieval" / "gate_weights.json"
MAX_RESULTS = 5
BUDGET = 400


def hits_of(memory: Any, prompt: str) -> list[dict[str, Any]]:
    """The hook's recall with no relevance cut: every hit with what the gate may read."""
    deps = memory.deps
    kept = deps.retrieval
    deps.retrieval = dataclasses.replace(kept, min_relevance=0.0)
    try:
        result = recall(deps, prompt[:MAX_QUERY_CHARS], token_budget=BUDGET, max_results=MAX_RESULTS, reinforce=False)
    finally:
        deps.retrieval = kept
    out = []
    for h in result.hits:
        s = h.score
        out.append(
            {
                "id": h.bullet.id,
                "text": h.bullet.content,
                "kind": str(h.bullet.knowledge_type),
                "section": str(h.bullet.section),
                **{k: getattr(s, k) for k in ("l1", "l2", "l3", "semantic", "keyword", "blended", "final")},
            }
        )
    return out


def _labels(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {(r["repo"], r["session"], r["prompt"]): r for r in rows}


Scorer = Callable[[Any, str], list[dict[str, Any]]]


def _from_walk(
    name: str, walk: Iterator[dict[str, object]], labels: Path, part: str, score: Scorer
) -> Iterator[dict[str, Any]]:
    labelled = _labels(labels)
    for row in walk:
        if row["split"] != part:
            continue
        key = (str(row["repo"]), str(row["session"]), str(row["prompt"])[: real.MAX_PROMPT_CHARS])
        if key not in labelled:
            continue
        relevant = set(labelled[key]["relevant"])
        hits = score(row["memory"], str(row["prompt"]))
        for h in hits:
            h["relevant"] = h["text"] in relevant
        yield {
            "set": name,
            "split": part,
            "repo": row["repo"],
            "kind": row.get("kind", ""),
            "prompt": str(row["prompt"]),
            "related": bool(relevant),
            "hits": hits,
        }


def _synthetic(home: Path, part: str, score: Scorer) -> Iterator[dict[str, Any]]:
    facts = [json.loads(x) for x in (DATA / "prompt_floor.jsonl").read_text(encoding="utf-8").splitlines() if x]
    others = [json.loads(x) for x in (DATA / "prompt_floor_unrelated.jsonl").read_text("utf-8").splitlines() if x]
    memory = open_memory(load_settings(home=home, scope="project:app"), cwd=home)
    for path in sorted(p for p in (DATA / "transcripts").glob("*.jsonl") if len(p.stem) == 36):
        reflect(memory.deps, read_transcript(path), path=path, mode="rules", scope="project:app")
    for f in facts:
        memory.remember(f["fact"], scope="project:app")
    for f in facts:
        hits = score(memory, f[part])
        for h in hits:
            h["relevant"] = h["text"] == f["fact"]
        yield {
            "set": "synthetic",
            "split": part,
            "repo": "",
            "kind": "",
            "prompt": f[part],
            "related": True,
            "hits": hits,
        }
    for o in others:
        if o["split"] == part:
            hits = score(memory, o["prompt"])
            for h in hits:
                h["relevant"] = False
            yield {
                "set": "synthetic",
                "split": part,
                "repo": "",
                "kind": "",
                "prompt": o["prompt"],
                "related": False,
                "hits": hits,
            }


def _rows(part: str, score: Scorer, home: Path) -> Iterator[dict[str, Any]]:
    yield from _from_walk("real", real.walk(home / "real"), real.LABELS, part, score)
    yield from _from_walk("new", new.walk(home / "new"), DATA / "prompt_gate_new.jsonl", part, score)
    yield from _synthetic(home / "synthetic", part, score)


def collect(part: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / f"{part}.jsonl"
    home = Path(tempfile.mkdtemp(prefix="memx-gate-"))
    try:
        with target.open("w", encoding="utf-8") as out:
            for row in _rows(part, hits_of, home):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return target


def decided(memory: Any, prompt: str) -> list[dict[str, Any]]:
    """The hook's own hits, each marked with what the shipped gate (``relevant_hits``) and the fifth round's
    floor (blended >= ``inject_min_relevance``) would inject: the production functions, nothing refitted."""
    text = prompt[:MAX_QUERY_CHARS]
    _, found = prompt_hits(memory.deps, text, BUDGET)
    _, passed = relevant_hits(memory.deps, text, BUDGET)
    gated = {h.bullet.id for h in passed}
    floor = memory.deps.settings.inject_min_relevance
    return [
        {"id": h.bullet.id, "text": h.bullet.content, "gate": h.bullet.id in gated, "floor": h.score.blended >= floor}
        for h in found
    ]


def measure(part: str) -> None:
    """Every labelled prompt of ``part`` through the production functions; figures per set, gate and floor."""
    home = Path(tempfile.mkdtemp(prefix="memx-gate-"))
    try:
        rows = list(_rows(part, decided, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    (CACHE / f"measured-{part}.jsonl").parent.mkdir(parents=True, exist_ok=True)
    (CACHE / f"measured-{part}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    seen = {
        "real": "seen before" if part == "heldout" else "tune",
        "new": "blind" if part == "heldout" else "tune",
        "synthetic": "seen before" if part == "heldout" else "tune",
    }
    print(f"part {part}: set (status): rule  relevant prompts served  unrelated prompts injected")
    for name in ("real", "new", "synthetic", "real+new"):
        mine = [r for r in rows if r["set"] in name.split("+")]
        for rule in ("gate", "floor"):
            decide = [{h["id"] for h in r["hits"] if h[rule]} for r in mine]
            s, rel, inj, unrel = rates(mine, decide)
            status = seen.get(name, "")
            print(
                f"  {name} ({status or 'both'}): {rule:5s}  {s}/{rel} = {s / max(1, rel):.2f}  "
                f"{inj}/{unrel} = {inj / max(1, unrel):.3f}"
            )


# -- fitting, on tune only ------------------------------------------------------------------------------

MIN_RELEVANCE = load_settings().min_relevance  # the hook's recall drops hits below it before the gate sees them
UNRELATED_ALLOWED = 0.05
L2 = 1.0


def _visible(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for h in row["hits"] if h["blended"] >= MIN_RELEVANCE]


def _table(rows: list[dict[str, Any]]) -> tuple[Any, Any, list[int], list[str]]:
    import numpy as np

    x, y, owner, groups = [], [], [], []
    for i, row in enumerate(rows):
        hits = _visible(row)
        for h, f in zip(
            hits,
            gate.features(row["prompt"][:MAX_QUERY_CHARS], [(h["text"], h["semantic"]) for h in hits]),
            strict=True,
        ):
            x.append(f)
            y.append(1.0 if h["relevant"] else 0.0)
            owner.append(i)
            # cross-validation folds: a repository's prompts together; each written prompt alone
            groups.append(f"{row['set']}:{row['repo']}" if row["repo"] else f"{row['set']}:{i}")
    return np.array(x, dtype=float), np.array(y), owner, groups


def _fit(x: Any, y: Any) -> tuple[Any, Any, Any]:
    """L2-regularised logistic regression (Newton), features standardised; returns mean, scale, coef+bias."""
    import numpy as np

    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    b = np.zeros(z.shape[1])
    penalty = L2 * np.r_[np.ones(z.shape[1] - 1), 0.0]
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ b))
        grad = z.T @ (p - y) + penalty * b
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        b -= step
        if np.abs(step).max() < 1e-9:
            break
    return mean, scale, b


def _prob(model: tuple[Any, Any, Any], x: Any) -> Any:
    import numpy as np

    mean, scale, b = model
    return 1 / (1 + np.exp(-(((x - mean) / scale) @ b[:-1] + b[-1])))


def rates(rows: list[dict[str, Any]], decide: list[set[str]]) -> tuple[int, int, int, int]:
    """(relevant prompts served, relevant prompts, unrelated prompts injected, unrelated prompts) for the ids
    each prompt would inject."""
    served = sum(
        1
        for r, ids in zip(rows, decide, strict=True)
        if r["related"] and any(h["relevant"] and h["id"] in ids for h in r["hits"])
    )
    injected = sum(1 for r, ids in zip(rows, decide, strict=True) if not r["related"] and ids)
    related = sum(1 for r in rows if r["related"])
    return served, related, injected, len(rows) - related


def _decisions(rows: list[dict[str, Any]], owner: list[int], ids: list[str], scores: Any, t: float) -> list[set[str]]:
    out: list[set[str]] = [set() for _ in rows]
    for i, hid, s in zip(owner, ids, scores, strict=True):
        if s >= t:
            out[i].add(hid)
    return out


def fit(write: bool) -> None:
    import numpy as np

    rows = [json.loads(x) for x in (CACHE / "tune.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    x, y, owner, groups = _table(rows)
    ids = [h["id"] for r in rows for h in _visible(r)]
    cv = np.zeros(len(y))
    for g in sorted(set(groups)):
        test = np.array([k == g for k in groups])
        cv[test] = _prob(_fit(x[~test], y[~test]), x[test])
    blended = np.array([h["blended"] for r in rows for h in _visible(r)])
    print(
        f"tune: {len(rows)} prompts ({sum(r['related'] for r in rows)} relevant), {len(y)} hits, "
        f"{len(set(groups))} folds (leave one repository / one written prompt out)"
    )
    curves = {}
    for name, scores in (("gate (cross-validated)", cv), ("fused score (today's floor)", blended)):
        points = []
        for t in [*sorted(set(np.round(scores, 4))), 2.0]:
            s, rel, inj, unrel = rates(rows, _decisions(rows, owner, ids, scores, t))
            points.append((t, s / rel, inj / unrel))
        curves[name] = points
        print(f"{name}: relevant served at most N % unrelated injected")
        for allowed in (0.0, 0.02, 0.05, 0.10, 0.20, 0.30):
            ok = [p for p in points if p[2] <= allowed + 1e-9]
            t, s, u = max(ok, key=lambda p: (p[1], -p[0]))
            print(f"  unrelated <= {allowed:.2f}: served {s:.2f} (unrelated {u:.3f}) at threshold {t:.3f}")
    ok = [p for p in curves["gate (cross-validated)"] if p[2] <= UNRELATED_ALLOWED + 1e-9]
    threshold, served, unrelated = max(ok, key=lambda p: (p[1], -p[0]))
    mean, scale, b = _fit(x, y)
    print(
        "weights (standardised features):",
        {f: round(float(c), 3) for f, c in zip(gate.FEATURES, b[:-1], strict=True)},
        "bias",
        round(float(b[-1]), 3),
        "threshold",
        threshold,
    )
    if write:
        data = {
            "command": "benchmarks/prompt_gate.py collect --part tune, then fit --write",
            "training": "tune parts only: prompt_floor_real.jsonl, prompt_gate_new.jsonl, prompt_floor.jsonl",
            "cross_validated": {"served": round(served, 4), "unrelated_injected": round(unrelated, 4)},
            "features": list(gate.FEATURES),
            "mean": [float(v) for v in mean],
            "scale": [float(v) for v in scale],
            "coef": [float(v) for v in b[:-1]],
            "bias": float(b[-1]),
            "threshold": float(threshold),
        }
        WEIGHTS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS}")


def latency(calls: int) -> None:
    """What the gate adds to the prompt hook: the hook's recall and the gate on its hits, timed in one run
    (the synthetic store: five reflected sessions and 24 facts; each tune and held-out prompt of its files)."""
    import statistics
    import time

    from memx_mcp.usecases.prompt_gate import passing

    facts = [json.loads(x) for x in (DATA / "prompt_floor.jsonl").read_text(encoding="utf-8").splitlines() if x]
    others = [json.loads(x) for x in (DATA / "prompt_floor_unrelated.jsonl").read_text("utf-8").splitlines() if x]
    prompts = [f[k] for f in facts for k in ("tune", "heldout")] + [o["prompt"] for o in others]
    home = Path(tempfile.mkdtemp(prefix="memx-gate-"))
    try:
        memory = open_memory(load_settings(home=home, scope="project:app"), cwd=home)
        for path in sorted(p for p in (DATA / "transcripts").glob("*.jsonl") if len(p.stem) == 36):
            reflect(memory.deps, read_transcript(path), path=path, mode="rules", scope="project:app")
        for f in facts:
            memory.remember(f["fact"], scope="project:app")
        prompt_hits(memory.deps, "warm up", BUDGET)
        recall_ms, gate_ms = [], []
        for prompt in (prompts * (calls // len(prompts) + 1))[:calls]:
            t0 = time.perf_counter()
            _, hits = prompt_hits(memory.deps, prompt, BUDGET)
            t1 = time.perf_counter()
            passing(memory.deps, prompt, hits)
            t2 = time.perf_counter()
            recall_ms.append((t1 - t0) * 1000)
            gate_ms.append((t2 - t1) * 1000)
        print(
            f"store {memory.store.count()} bullets, {calls} prompts: recall p50 {statistics.median(recall_ms):.2f} ms, "
            f"gate p50 {statistics.median(gate_ms):.3f} ms, p95 {sorted(gate_ms)[int(0.95 * calls)]:.3f} ms "
            f"({statistics.median(gate_ms) / statistics.median(recall_ms):.1%} of the recall)"
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["collect", "fit", "measure", "latency"])
    parser.add_argument("--part", choices=["tune", "heldout"], default="tune")
    parser.add_argument("--write", action="store_true", help="fit: write the shipped gate_weights.json")
    parser.add_argument("--calls", type=int, default=200, help="latency: prompts timed")
    args = parser.parse_args()
    if args.command == "collect":
        print(collect(args.part))
    elif args.command == "fit":
        fit(args.write)
    elif args.command == "latency":
        latency(args.calls)
    else:
        measure(args.part)


if __name__ == "__main__":
    main()
