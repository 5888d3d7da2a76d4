"""The candidate models of the multilingual extra side by side (issue 33): load time, resident memory after
loading, and one-query embedding time (60 short English, Chinese and Japanese questions, one thread, p50 /
p95), each model in a fresh process, one after the other in one run. Nothing is downloaded: run it with
``HF_HUB_OFFLINE=1`` and no proxy to check.

    python benchmarks/multilingual_models.py [--models minilm,e5,e5c,use]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from harness import _model_cache

CHILD = """
import json, statistics, sys, time
from pathlib import Path

def rss():
    return {k: int(v.split()[0]) // 1024 for k, v in
            (line.split(":", 1) for line in open("/proc/self/status")) if k in ("VmRSS", "VmHWM")}

before = rss()["VmRSS"]
start = time.perf_counter()
name = sys.argv[1]
if name == "minilm":
    from memx_mcp.adapters.fastembed import FastEmbedEmbedder, prepare_shipped_model
    from memx_mcp.domain.catalog import MINILM
    model = FastEmbedEmbedder(MINILM, prepare_shipped_model(Path(sys.argv[2])), 384)
elif name in ("e5", "e5c"):
    from memx_mcp.adapters.e5 import Centring, E5Embedder
    model = E5Embedder(centring=Centring.load() if name == "e5c" else None)
else:
    from memx_mcp.adapters.muse import MuseEmbedder
    model = MuseEmbedder()
loaded = time.perf_counter() - start
queries = json.loads(sys.argv[3])
model.embed_queries(queries[:2])
times = []
for q in queries:
    t = time.perf_counter()
    model.embed_queries([q])
    times.append((time.perf_counter() - t) * 1000)
times.sort()
after = rss()
print(json.dumps({"load_s": loaded, "rss_added_mb": after["VmRSS"] - before, "peak_mb": after["VmHWM"],
                  "p50_ms": statistics.median(times), "p95_ms": times[int(len(times) * 0.95) - 1]}))
"""

QUERIES = [
    "How do we change the database schema?",
    "Which port does the local Postgres use?",
    "What should I check first when the E2E tests are flaky?",
    "本地启动 API 之前要先做什么？",
    "数据库里的时间戳用什么时区？",
    "Terraform の状態ファイルはどこに保存されている？",
    "Android のビルドにはどの JDK が必要？",
    "How should I clear the cache?",
    "为什么改了依赖之后 CI 缓存就失效了？",
    "バックグラウンドジョブの時間制限は？",
] * 6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,e5,e5c,use")
    args = parser.parse_args()
    print("| model | load | RSS added | peak RSS | query embed p50 / p95 |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, name, str(_model_cache()), json.dumps(QUERIES)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"| {name} | {r['load_s']:.2f} s | {r['rss_added_mb']} MB | {r['peak_mb']} MB | "
            f"{r['p50_ms']:.1f} / {r['p95_ms']:.1f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    main()
