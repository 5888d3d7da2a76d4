"""The Reflector on the labelled multi-project corpus (benchmarks/data/reflector_corpus): rules mode, or
hybrid mode with a model's recorded answers (``--llm-record`` / ``--llm-answers``, see llm_replay.py).

Every session of one split (all groups: ``cc``, ``fmt``) is reflected as ``memx reflect`` would (the
sanitizer learns the session first). A bullet catches a labelled lesson when it contains every one of the
lesson's ``must_contain`` strings (case-insensitive). Bullets are judged by hand in
``<split>/judgements.jsonl`` (one line per bullet: session, hash of the bullet text, label
keep|noise|false, why); bullets without a judgement are listed and written to a file for a judge.

    python benchmarks/reflector_corpus.py --split tune
    python benchmarks/reflector_corpus.py --split heldout --corpus DIR --unjudged /tmp/unjudged.jsonl
    python benchmarks/reflector_corpus.py --split all-tune      # old tune + old heldout: both are tuning data now
    python benchmarks/reflector_corpus.py --split heldout2 --bullets heldout2/bullets.jsonl   # measured once
    python benchmarks/reflector_corpus.py --split all-seen      # every set measured and read so far: tuning data
    python benchmarks/reflector_corpus.py --split heldout3 --bullets heldout3/bullets.jsonl   # measured once
    python benchmarks/reflector_corpus.py --split heldout3 --llm-record /tmp/prompts.jsonl    # hybrid, pass 1
    python benchmarks/reflector_corpus.py --split heldout3 --llm-answers heldout3/llm_answers.jsonl  # pass 2
    python benchmarks/reflector_corpus.py --split heldout4      # the fourth held-out set (heldout3 is tuning data)
    python benchmarks/reflector_corpus.py --split heldout5      # the fifth (heldout4, measured once, is tuning data)

Printed: per session and in total, bullets, lessons, lessons caught, precision (keep / bullets), the share
of bullets stating something false, and per format. Which figures are on tuned data is said in
benchmarks/RESULTS.md: ``tune`` and ``heldout`` (measured once, then read) are both tuning data now, so
``all-tune`` runs the two with each half's judgements; ``heldout2`` was measured once and read, so
``all-seen`` (all three) was the tuning set and ``heldout3`` the unseen one; ``heldout3``, measured in rules and
llm mode and read, is tuning data too (``before-heldout4``), and ``heldout4`` the unseen one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.readings import registry
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

ROOT = Path(__file__).parents[1]
DEFAULT_CORPUS = ROOT / "benchmarks" / "data" / "reflector_corpus"
LABELS = ("keep", "noise", "false")


def bullet_hash(text: str) -> str:
    """The key of a bullet in the judgement file: the same text in the same session is judged once."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise SystemExit(f"{path}:{n}: not JSON ({exc})") from exc
    return rows


@dataclass
class SessionResult:
    group: str
    session: str
    format: str
    bullets: list[str] = field(default_factory=list)
    lessons: list[dict[str, Any]] = field(default_factory=list)
    caught: list[str] = field(default_factory=list)
    judged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))
    unjudged: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    llm_input_tokens: int = 0
    fallbacks: int = 0
    rejected: int = 0
    chars: int = 0  # of the transcript file
    held: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # bullets held for review, with why
    voices: dict[str, int] = field(default_factory=dict)  # bullets per voice (issue 31: who said it)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (why, text) of each lesson a check dropped


def _drop_kind(why: str) -> str:
    """The kind of a drop's reason, its variable parts (steps, quotes) left out."""
    if why.startswith("LLM:"):
        return "dropped by the consolidation call"
    if why.startswith("outcome "):
        return why.split(":", 1)[0]
    return re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\d+", "…", why)[:90]


def catches(bullet: str, lesson: dict[str, Any]) -> bool:
    low = bullet.lower()
    needles = [str(m).lower() for m in lesson.get("must_contain") or []]
    return bool(needles) and all(m in low for m in needles)


SPLITS = {
    "tune": ("tune",),
    "heldout": ("heldout",),
    "heldout2": ("heldout2",),
    "heldout3": ("heldout3",),
    "all-tune": ("tune", "heldout"),
    "all-seen": ("tune", "heldout", "heldout2"),
    "heldout4": ("heldout4",),
    "before-heldout4": ("tune", "heldout", "heldout2", "heldout3"),
    "heldout5": ("heldout5",),
    "heldout6": ("heldout6",),
    "before-heldout6": ("tune", "heldout", "heldout2", "heldout3", "heldout4", "heldout5"),
    "heldout7": ("heldout7",),
    "before-heldout7": ("tune", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6"),
}
TUNED_ON = {
    "tune", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "all-tune", "all-seen", "before-heldout4",
    "before-heldout6", "heldout6", "before-heldout7",
}  # fmt: skip


def run(
    corpus: Path,
    split: str,
    judgements_path: Path | None = None,
    llm_url: str = "",
    mode: str = "rules",
    store: Path | None = None,
) -> list[SessionResult]:
    """Every session of ``split`` (one folder, or the folders an alias such as ``all-tune`` names); with
    ``llm_url``, in ``mode`` against that Messages API: hybrid (the LLM writes the bullets of each episode
    the rules found) or llm (the LLM reads the excerpt around every user message and tool result). With
    ``store``, each session goes through ``memx reflect`` into that one store (a project scope per session)
    and its bullets are what the store then holds there, after the Curator."""
    results: list[SessionResult] = []
    for folder in SPLITS.get(split, (split,)):
        own = judgements_path if judgements_path is not None else corpus / folder / "judgements.jsonl"
        results.extend(_run_folder(corpus, folder, own, llm_url, mode, store))
    return results


FLOOR = {"value": "strict"}  # the rules' floor, as memx ships it (--floor all: every rule's bullet)


def _reflector(sanitizer: PrivacySanitizer, llm_url: str, mode: str) -> Reflector:
    if not llm_url:
        return Reflector(sanitizer, "rules", floor=FLOOR["value"])
    refiner = AnthropicRefiner("replay", "replay", llm_url, timeout=60)
    return Reflector(sanitizer, mode, refiner, writes=mode == "hybrid", window_chars=40_000, floor=FLOOR["value"])


def _stored(store: Path, path: Path, session: str, mode: str, llm_url: str) -> tuple[list[str], list[str]]:
    """``memx reflect`` of one session into ``store`` as a user runs it (an API key and base URL when
    there is an LLM): the bullets its scope then holds, and the reflect's notes."""
    env = {**os.environ, "MEMX_LLM_BASE_URL": llm_url, "ANTHROPIC_API_KEY": "replay" if llm_url else ""}
    env |= {"MEMX_RULES_FLOOR": FLOOR["value"], "MEMX_LLM_BACKEND": "anthropic" if llm_url else "none"}
    scope = f"project:{session[:60]}"
    common = ["--home", str(store), "--scope", scope, "--json"]
    cli = [sys.executable, "-m", "memx_mcp.cli.app"]
    command = [*cli, "reflect", str(path), "--mode", mode, *common]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-400:])
    notes = [n for r in json.loads(done.stdout) for n in r.get("notes", [])]
    listed = subprocess.run([*cli, "list", "-n", "1000", *common], capture_output=True, text=True, check=True)
    return [b["content"] for b in json.loads(listed.stdout)["bullets"]], notes


def _run_folder(
    corpus: Path,
    split: str,
    judgements_path: Path,
    llm_url: str = "",
    mode: str = "rules",
    store: Path | None = None,
) -> list[SessionResult]:
    base = corpus / split
    if not base.is_dir():
        raise SystemExit(f"no split folder {base}")
    judgements = {(j["session"], j["hash"]): j for j in _jsonl(judgements_path)}
    sanitizer = PrivacySanitizer()
    results: list[SessionResult] = []
    for group_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        sessions = _jsonl(group_dir / "sessions.jsonl")
        labels: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in _jsonl(group_dir / "labels.jsonl"):
            if row.get("lesson"):
                labels[row["session"]].append(row)
        for meta in sessions:
            path = group_dir / meta["file"]
            r = SessionResult(group_dir.name, meta["session"], meta.get("format", "?"))
            r.lessons = labels.get(meta["session"], [])
            start = time.process_time()
            if store is not None:
                try:
                    r.bullets, r.notes = _stored(store, path, meta["session"], mode, llm_url)
                except Exception as exc:
                    r.error = f"{type(exc).__name__}: {exc}"
                _judge(r, judgements)
                results.append(r)
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                transcript = parse_transcript(text)
                report = _reflector(sanitizer.learning(transcript.text), llm_url, mode).reflect(transcript)
            except Exception as exc:  # one unreadable session is reported, the others still count
                r.error = f"{type(exc).__name__}: {exc}"
                results.append(r)
                continue
            r.seconds = time.process_time() - start
            r.notes = list(report.notes)
            r.llm_calls, r.fallbacks = report.llm_calls, report.fallbacks
            r.llm_input_tokens, r.chars = report.llm_input_tokens, len(text)
            r.rejected = sum(1 for d in report.dropped if d.reason.startswith("LLM bullet rejected"))
            r.dropped = [(d.reason, d.text) for d in report.dropped if d.rule == "session"]
            r.bullets = [b.content for b in report.bullets]
            r.held = [(b.content, b.held) for b in report.bullets if b.held]
            for b in report.bullets:
                r.voices[b.voice or "?"] = r.voices.get(b.voice or "?", 0) + 1
            _judge(r, judgements)
            results.append(r)
    return results


def _judge(r: SessionResult, judgements: dict[tuple[str, str], dict[str, Any]]) -> None:
    r.caught = [lesson["lesson"] for lesson in r.lessons if any(catches(b, lesson) for b in r.bullets)]
    for b in r.bullets:
        j = judgements.get((r.session, bullet_hash(b)))
        if j is None or j.get("label") not in LABELS:
            r.unjudged.append(b)
        else:
            r.judged[j["label"]] += 1


def held_report(results: list[SessionResult], judgements_of: dict[str, dict[tuple[str, str], str]]) -> None:
    """How many bullets would wait for review (issue 31: at most 5 % of those judged keep), and why."""
    label = {
        (r.session, bullet_hash(b)): judgements_of.get(r.group, {}).get((r.session, bullet_hash(b)), "")
        for r in results
        for b in r.bullets
    }
    bullets = sum(len(r.bullets) for r in results)
    keep = sum(r.judged["keep"] for r in results)
    held = [(r.session, b, why) for r in results for b, why in r.held]
    held_keep = sum(1 for s, b, _ in held if label.get((s, bullet_hash(b))) == "keep")
    voices: dict[str, int] = defaultdict(int)
    for r in results:
        for v, n in r.voices.items():
            voices[v] += n
    shares = f"{_ratio(len(held), bullets)} of the bullets; judged keep and held: {_ratio(held_keep, keep)}"
    print(f"\n## Held for review: {shares}")
    print("voices: " + ", ".join(f"{v} {n}" for v, n in sorted(voices.items())))
    reasons: dict[str, int] = defaultdict(int)
    for _, _, why in held:
        for w in why:
            reasons[w.split(":")[0]] += 1
    for w, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"- {n} × {w}")
    for s, b, why in held:
        print(f"  - [{label.get((s, bullet_hash(b))) or 'unjudged'}] {s[:30]}: {b[:160]}  ← {'; '.join(why)[:200]}")


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.3f}" if b else f"{a}/0"


def report(results: list[SessionResult], split: str, mode: str = "rules") -> None:
    print(f"## Reflector, {mode} mode, on the {split} split ({'TUNED ON' if split in TUNED_ON else 'held out'})")
    print(
        "| group | session | format | KB | bullets | keep | noise | false | unjudged | lessons | caught | LLM calls "
        "| input tokens | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        j = r.judged
        print(
            f"| {r.group} | {r.session[:40]} | {r.format} | {r.chars // 1024} | {len(r.bullets)} | {j['keep']} | "
            f"{j['noise']} | {j['false']} | {len(r.unjudged)} | {len(r.lessons)} | {len(r.caught)} | {r.llm_calls} | "
            f"{r.llm_input_tokens} | {r.seconds:.2f} |" + (f" ERROR {r.error}" if r.error else "")
        )
    groups: dict[str, list[SessionResult]] = defaultdict(list)
    for r in results:
        groups[f"format {r.format}"].append(r)
    groups["TOTAL"] = results
    print(
        "\n| set | sessions | bullets | precision (keep / bullets) | false / bullets | lessons caught | unjudged "
        "| LLM calls | input tokens |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rs in sorted(groups.items(), key=lambda kv: (kv[0] == "TOTAL", kv[0])):
        bullets = sum(len(r.bullets) for r in rs)
        keep = sum(r.judged["keep"] for r in rs)
        false = sum(r.judged["false"] for r in rs)
        lessons = sum(len(r.lessons) for r in rs)
        caught = sum(len(r.caught) for r in rs)
        unjudged = sum(len(r.unjudged) for r in rs)
        calls = sum(r.llm_calls for r in rs)
        tokens = sum(r.llm_input_tokens for r in rs)
        print(
            f"| {name} | {len(rs)} | {bullets} | {_ratio(keep, bullets)} | {_ratio(false, bullets)} | "
            f"{_ratio(caught, lessons)} | {unjudged} | {calls} | {tokens} |"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split", choices=tuple(SPLITS), default="tune")
    ap.add_argument("--judgements", type=Path, help="default: <corpus>/<folder>/judgements.jsonl of each folder")
    ap.add_argument("--bullets", type=Path, help="write every bullet printed (session, bullet) to this JSONL file")
    ap.add_argument("--unjudged", type=Path, help="where to write unjudged bullets (default: <split>/unjudged.jsonl)")
    ap.add_argument("--missed", action="store_true", help="also list the lessons no bullet caught")
    ap.add_argument(
        "--dropped", action="store_true", help="session mode: list the lessons the model wrote that a check dropped"
    )
    ap.add_argument("--llm-record", type=Path, help="LLM modes, pass 1: write the prompts memx sends here")
    ap.add_argument(
        "--llm-answers",
        type=Path,
        nargs="+",
        help="LLM modes, pass 2: answer from these files (with --llm-record: the known, recording the new)",
    )
    ap.add_argument(
        "--llm-mode",
        choices=[m.name for m in registry.modes() if m.needs_model],
        default="hybrid",
        help="with --llm-*: which mode",
    )
    ap.add_argument("--store", action="store_true", help="through `memx reflect` into one store: what it keeps")
    ap.add_argument("--held", action="store_true", help="print the bullets held for review (issue 31) and why")
    ap.add_argument(
        "--floor", choices=("strict", "all"), default="strict", help="the rules' floor (strict: as memx ships it)"
    )
    args = ap.parse_args(argv)
    FLOOR["value"] = args.floor
    if args.llm_record or args.llm_answers:
        sys.path.insert(0, str(Path(__file__).parent))
        from llm_replay import Replay

        if args.llm_record:
            args.llm_record.unlink(missing_ok=True)
        replay = Replay(record=args.llm_record, answers=args.llm_answers or ())
        with replay.running() as api, tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) if args.store else None
            results = run(args.corpus, args.split, args.judgements, api.url, args.llm_mode, store)
        report(results, args.split, args.llm_mode)
        calls = sum(replay.seen.values())
        print(f"\nLLM: {calls} calls, {len(replay.seen)} distinct prompts, {replay.unknown} without an answer")
        if replay.answers and replay.record is None:
            print(replay.summary())
        if not args.store:  # the CLI's reflect says these in its own notes
            print(
                f"{sum(r.fallbacks for r in results)} fallbacks to rules, "
                f"{sum(r.rejected for r in results)} bullets the LLM wrote rejected by memx's checks"
            )
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = run(args.corpus, args.split, args.judgements, store=Path(tmp) if args.store else None)
        report(results, args.split)
    if args.held:
        labels_of = {  # the judgements the run used: --judgements when given (it was ignored here before)
            folder: {
                (j["session"], j["hash"]): str(j.get("label", ""))
                for j in _jsonl(args.judgements or args.corpus / folder / "judgements.jsonl")
            }
            for folder in SPLITS.get(args.split, (args.split,))
        }
        merged = {k: v for table in labels_of.values() for k, v in table.items()}
        held_report(results, {r.group: merged for r in results})
    if args.bullets:
        rows = [{"session": r.session, "hash": bullet_hash(b), "bullet": b} for r in results for b in r.bullets]
        args.bullets.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
        print(f"\n{len(rows)} bullets written to {args.bullets}")
    unjudged = [
        {"session": r.session, "hash": bullet_hash(b), "label": "", "why": "", "bullet": b}
        for r in results
        for b in r.unjudged
    ]
    if unjudged:
        folder = SPLITS.get(args.split, (args.split,))[0]
        out = args.unjudged or args.corpus / folder / "unjudged.jsonl"
        out.write_text("".join(json.dumps(u, ensure_ascii=False) + "\n" for u in unjudged), encoding="utf-8")
        print(f"\n{len(unjudged)} unjudged bullets written to {out}")
    if args.dropped:
        dropped = [(r.session, why, text) for r in results for why, text in r.dropped]
        print(f"\n## What the session reading dropped: {len(dropped)} lessons the model wrote")
        kinds: dict[str, int] = {}
        for _, why, _ in dropped:
            kind = _drop_kind(why)
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
            print(f"- {n} × {kind}")
        for session, why, text in dropped:
            print(f"  - {session[:30]}: {text[:160]}  ← {why[:160]}")
    if args.missed:
        print("\n## Lessons not caught")
        for r in results:
            for lesson in r.lessons:
                if lesson["lesson"] not in r.caught:
                    print(f"- {r.session[:30]}: {lesson['lesson']}  must_contain={lesson.get('must_contain')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
