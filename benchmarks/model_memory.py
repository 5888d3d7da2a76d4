"""Resident memory of the embedding model: what loading it adds to a process, as memx loads it
(``FastEmbedEmbedder``: fastembed over the shipped int8 model without onnxruntime's memory arena, then the
freed heap given back) and as fastembed alone leaves it: after loading, and after embedding one batch of
256 texts (as `remember` of many bullets or `reflect` do); and memx's two single-threaded sessions that
`memx import` loads on two cores (``MEMX_EMBED_THREADS=2``). Each way runs in a fresh process, five times;
medians are printed.

    python benchmarks/model_memory.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from harness import _model_cache

CHILD = """
import json, sys
from pathlib import Path

def rss():
    return {k: int(v.split()[0]) // 1024 for k, v in
            (line.split(":", 1) for line in open("/proc/self/status")) if k in ("VmRSS", "VmHWM")}

from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model
folder = prepare_shipped_model(Path(sys.argv[2]))
import fastembed  # imported before the baseline so that only the model's own memory is counted
before = rss()
if sys.argv[1].startswith("memx"):
    threads = 2 if sys.argv[1] == "memx2" else 1  # memx2: the two sessions of an import on two cores
    model = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", folder, 384, threads=threads)
    model.embed(["how do I raise the redis pool size?"])
else:
    model = fastembed.TextEmbedding(
        "sentence-transformers/all-MiniLM-L6-v2", specific_model_path=str(folder), threads=1
    )
    list(model.embed(["probe"]))
    list(model.embed(["how do I raise the redis pool size?"]))
after = rss()
batch = [f"when pytest fails with ImportError number {i}, run pip install -e . first" for i in range(256)]
model.embed(batch) if sys.argv[1].startswith("memx") else list(model.embed(batch, batch_size=32))
used = rss()
print(json.dumps({"steady": after["VmRSS"] - before["VmRSS"], "peak": after["VmHWM"] - before["VmRSS"],
                  "batch": used["VmRSS"] - before["VmRSS"]}))
"""


def measure(way: str, runs: int) -> dict[str, float]:
    found: dict[str, list[int]] = {"steady": [], "peak": [], "batch": []}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, way, str(_model_cache())], capture_output=True, text=True, check=True
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        for key in found:
            found[key].append(result[key])
    return {key: statistics.median(values) for key, values in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ways = (
        ("fastembed", "fastembed alone"),
        ("memx", "memx (FastEmbedEmbedder)"),
        ("memx2", "memx, 2 sessions (import)"),
    )
    for way, label in ways:
        m = measure(way, args.runs)
        print(
            f"{label:26} model adds {m['steady']:.0f} MB resident after loading "
            f"(peak while loading +{m['peak']:.0f} MB), {m['batch']:.0f} MB after embedding a batch"
        )


if __name__ == "__main__":
    main()
