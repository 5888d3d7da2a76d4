"""The Reflector on the five real Claude Code sessions in benchmarks/data/transcripts.

1. Rules mode: bullets per session, time per session, the distribution of instructivity scores, and the
   precision of the detected candidates against our hand labels (benchmarks/data/reflector_labels.jsonl;
   a candidate matches a label by session, step and rule; unlabelled candidates are listed).
2. Hybrid against llm: LLM calls of each over the same sessions, against a loopback HTTP server that
   speaks the Anthropic Messages API (tests/messages_api.py), started by this script.

    python benchmarks/reflector.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))
from tests.messages_api import MessagesAPI  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
SESSIONS = sorted(p for p in (DATA / "transcripts").glob("*-*-*-*-*.jsonl"))


def rules_mode() -> None:
    rows = list(map(json.loads, (DATA / "reflector_labels.jsonl").open()))
    labels = {(r["session"], r["step"], r["rule"]): r["label"] for r in rows}
    # a candidate whose rule changed (ErrorFix seen to be a RetrySuccess) is still the same event
    by_step = {(r["session"], r["step"]): r["label"] for r in rows}
    sanitizer = PrivacySanitizer()
    scores: list[float] = []
    judged: list[int] = []
    unlabelled = []
    print("## Rules mode")
    print("| session | lines | steps | candidates | bullets | seconds (parse + learn secrets + reflect) | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for path in SESSIONS:
        text = path.read_text(encoding="utf-8")
        start, cpu = time.perf_counter(), time.process_time()
        transcript = parse_transcript(text)  # as memx_mcp.usecases.reflect does: the sanitizer learns the session first
        report = Reflector(sanitizer.learning(transcript.text), "rules").reflect(transcript)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(
            f"| {path.name[:8]} | {text.count(chr(10))} | {report.steps} | {report.candidates} | "
            f"{len(report.bullets)} | {seconds:.3f} | {cpu:.3f} |"
        )
        scores += [b.score for b in report.bullets]
        for b in report.bullets:
            key = (path.name[:8], b.step, b.rule)
            if key in labels:
                judged.append(labels[key])
            elif key[:2] in by_step:
                judged.append(by_step[key[:2]])
            else:
                unlabelled.append(key)
    bins = Counter(int(s // 10) * 10 for s in scores)
    print(
        f"\nbullets: {len(scores)}; instructivity score min {min(scores):.0f}, median {statistics.median(scores):.0f}, "
        f"max {max(scores):.0f}, {len(set(scores))} distinct values"
    )
    print("score histogram: " + ", ".join(f"{b}-{b + 9}: {bins[b]}" for b in sorted(bins)))
    print(
        f"precision on hand-labelled candidates: {sum(judged)}/{len(judged)} = {sum(judged) / len(judged):.3f}"
        f" (unlabelled candidates: {len(unlabelled)} {unlabelled[:5]})"
    )


def llm_calls() -> None:
    print("\n## Hybrid against llm (loopback Messages API)")
    print("| session | events | llm-mode calls | hybrid calls | hybrid / llm |")
    print("|---|---|---|---|---|")
    total_llm = total_hybrid = 0
    for path in SESSIONS:
        t = parse_transcript(path.read_text(encoding="utf-8"))
        counts = {}
        for mode, behaviour in (("llm", "extract"), ("hybrid", "keep")):
            with MessagesAPI(behaviour).running() as api:
                refiner = AnthropicRefiner("loopback-key", "claude-test", api.url, timeout=10)
                report = Reflector(PrivacySanitizer(), mode, refiner).reflect(t)
                counts[mode] = (report.events, report.llm_calls)
        total_llm += counts["llm"][1]
        total_hybrid += counts["hybrid"][1]
        print(
            f"| {path.name[:8]} | {counts['llm'][0]} | {counts['llm'][1]} | {counts['hybrid'][1]} | "
            f"{counts['hybrid'][1] / counts['llm'][1]:.3f} |"
        )
    print(f"\nall sessions: hybrid made {total_hybrid} calls, llm {total_llm}: {total_hybrid / total_llm:.3f} of llm's")


if __name__ == "__main__":
    rules_mode()
    llm_calls()
