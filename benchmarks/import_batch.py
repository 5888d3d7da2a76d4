"""`memx import` of new records (no ids): the batched write path against one record at a time.

Builds a deterministic set of realistic bullets (seeded): distinct facts about many services and tools,
with near-duplicates (paraphrases and repeats) and contradicting variants (another value, a negation,
the opposite advice) of facts met earlier in the file or already in the store, in two scopes. A store is
pre-filled with bullets that some records repeat or contradict. The same file is imported into two fresh
stores filled alike, once batched (the default) and once one by one (`import_records(one_by_one=True)`:
each record stored as it is decided, the way before batching), and the results are compared: the stored
bullets (content, scope, recalls, confidence, origin, tags) and the conflict records (the two contents,
kind, evidence, similarity).

    python benchmarks/import_batch.py                      # 10,000 records, both ways on all of them
    python benchmarks/import_batch.py --records 2000 --one-by-one 2000
    python benchmarks/import_batch.py --one-by-one 0       # batched only
    python benchmarks/import_batch.py --write /tmp/imp     # the files, for `memx import`: imp.prefill.jsonl, imp.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter
from typing import Any

from harness import fresh_memory
from memx_mcp.memory import Memory

SERVICES = (
    "billing api, checkout, search indexer, auth gateway, notifications worker, reporting job, admin panel, "
    "mobile backend, payments webhook, inventory sync, email sender, image resizer, analytics pipeline, "
    "feature flag service, user profile api, order history, recommendation engine, audit log, file uploader, "
    "rate limiter, chat relay, pdf renderer, geocoder, pricing engine, ledger, session store, cron scheduler, "
    "metrics exporter, web frontend, docs site"
).split(", ")
SETTINGS = (
    ("connection pool size", "connections", (5, 10, 20, 25, 40, 50, 64, 100)),
    ("request timeout", "seconds", (5, 10, 15, 30, 45, 60, 90, 120)),
    ("retry limit", "attempts", (2, 3, 4, 5, 8, 10)),
    ("worker count", "processes", (2, 4, 6, 8, 12, 16)),
    ("cache TTL", "minutes", (1, 5, 10, 15, 30, 60)),
    ("batch size", "rows", (100, 250, 500, 1000, 5000)),
    ("memory limit", "MB", (256, 512, 768, 1024, 2048)),
    ("log retention", "days", (7, 14, 30, 90)),
)
TOOLS = (
    ("pytest -x", "stop at the first failing test"),
    ("pytest -n auto", "run the suite on every core"),
    ("ruff check --fix", "fix lint findings before committing"),
    ("mypy --strict", "type-check the package"),
    ("uv sync --frozen", "install the locked dependencies in CI"),
    ("docker compose up -d", "start the local databases"),
    ("git rebase -i", "squash work-in-progress commits"),
    ("npm ci", "install exactly what package-lock.json pins"),
    ("terraform plan", "preview infrastructure changes"),
    ("kubectl rollout restart", "reload pods after a config change"),
    ("alembic upgrade head", "apply pending database migrations"),
    ("make lint", "run every linter the CI runs"),
    ("pre-commit run --all-files", "check the whole tree after changing hooks"),
    ("cargo clippy", "catch common Rust mistakes"),
    ("go test -race", "find data races in the Go workers"),
)
ENVS = ("staging", "production", "CI", "the laptops", "the preview environments")
STORES = ("Postgres", "Redis", "S3", "Kafka", "Elasticsearch", "SQLite", "DynamoDB", "RabbitMQ")
TEAMS = ("payments", "platform", "growth", "identity", "data", "mobile", "search", "infra")
FLAGS = ("strict mode", "request tracing", "the query cache", "debug logging", "gzip compression", "HTTP/2")


def _setting(rng: random.Random) -> tuple[str, str, str, str, int]:
    service = rng.choice(SERVICES)
    name, unit, values = rng.choice(SETTINGS)
    env = rng.choice(ENVS)
    return service, name, unit, env, rng.choice(values)


REASONS = (
    "",
    "",
    "",
    " because the nightly load test showed it",
    " since the last incident review",
    " (see the runbook)",
    " after the move to the new cluster",
    " or the deploy check fails",
    " to keep the on-call pager quiet",
    " as agreed with the platform team",
    " until the upstream fix ships",
    " otherwise CI runs out of memory",
)


def fact(rng: random.Random) -> dict[str, Any]:
    """One fact, with a paraphrase and a contradiction of it, in one of several wordings."""
    kind, style, why = rng.randrange(6), rng.randrange(2), rng.choice(REASONS)
    if kind == 0:
        service, name, unit, env, value = _setting(rng)
        other = rng.choice([v for v in dict((s[0], s[2]) for s in SETTINGS)[name] if v != value])
        text = (
            f"Set the {name} of the {service} to {value} {unit} in {env}{why}",
            f"{env.capitalize()} runs the {service} with a {name} of {value} {unit}{why}",
        )[style]
        same = f"In {env}, the {service} needs its {name} at {value} {unit}"
        return {"text": text, "same": same, "against": text.replace(f" {value} {unit}", f" {other} {unit}")}
    if kind == 1:
        command, task = rng.choice(TOOLS)
        service = rng.choice(SERVICES)
        text = (
            f"Run `{command}` to {task} in the {service} repository{why}",
            f"For the {service}, `{command}` is the way to {task}{why}",
        )[style]
        return {
            "text": text,
            "same": f"In the {service} repository, use `{command}` to {task}",
            "against": f"Never run `{command}` to {task} in the {service} repository",
        }
    if kind == 2:
        service, store, env = rng.choice(SERVICES), rng.choice(STORES), rng.choice(ENVS)
        text = (
            f"The {service} keeps its state in {store} on {env}{why}",
            f"{store} holds everything the {service} stores on {env}{why}",
        )[style]
        return {
            "text": text,
            "same": f"On {env} the {service} stores its state in {store}",
            "against": f"The {service} does not keep its state in {store} on {env}",
        }
    if kind == 3:
        service, flag, env = rng.choice(SERVICES), rng.choice(FLAGS), rng.choice(ENVS)
        text = (
            f"Enable {flag} for the {service} in {env}{why}",
            f"Keep {flag} enabled on the {service} in {env}{why}",
        )[style]
        return {
            "text": text,
            "same": f"In {env}, {flag} should be enabled for the {service}",
            "against": text.replace("Enable", "Disable").replace("enabled", "disabled"),
        }
    if kind == 4:
        service, other_service = rng.sample(SERVICES, 2)
        owner = rng.choice(TEAMS)
        text = (
            f"The {owner} team owns the {service}; page them before touching its {other_service} client{why}",
            f"Ask the {owner} team about the {service} and its calls into the {other_service}{why}",
        )[style]
        return {
            "text": text,
            "same": f"The {service} belongs to the {owner} team, who also know its {other_service} client",
            "against": f"The {owner} team does not own the {service} or its {other_service} client",
        }
    service, store = rng.choice(SERVICES), rng.choice(STORES)
    command, _ = rng.choice(TOOLS)
    return {
        "text": f"When `{command}` fails on the {service} with a {store} connection error, restart {store} first",
        "same": f"A {store} connection error in `{command}` on the {service} goes away after restarting {store}",
        "against": f"When `{command}` fails on the {service} with a {store} connection error, do not restart {store}",
    }


def build(records: int, prefill: int, seed: int) -> tuple[list[str], list[str]]:
    """(pre-fill lines, import lines): JSONL records without ids."""
    rng = random.Random(seed)
    seen: set[str] = set()

    def fresh() -> dict[str, Any]:
        while True:
            f = fact(rng)
            if f["text"] not in seen:
                seen.add(f["text"])
                return f

    scope = lambda: "global" if rng.random() < 0.1 else None  # noqa: E731
    stored = [(fresh(), scope()) for _ in range(prefill)]
    earlier: list[tuple[dict[str, Any], str | None]] = []
    lines = []
    for _ in range(records):
        roll = rng.random()
        pool = stored if rng.random() < 0.4 else earlier
        if roll < 0.06 and pool:  # a paraphrase of a fact met before
            f, sc = rng.choice(pool)
            text = f["same"]
        elif roll < 0.08 and pool:  # the very same bullet again
            f, sc = rng.choice(pool)
            text = f["text"]
        elif roll < 0.12 and pool:  # a contradiction of it
            f, sc = rng.choice(pool)
            text = f["against"]
        else:
            f, sc = fresh(), scope()
            text = f["text"]
            earlier.append((f, sc))
        lines.append(_line(text, sc, rng))
    return [_line(f["text"], sc, rng) for f, sc in stored], lines


def _line(text: str, scope: str | None, rng: random.Random) -> str:
    record: dict[str, Any] = {"content": text, "source": "import", "origin": f"team-notes:{rng.randrange(40)}"}
    if scope:
        record["scope"] = scope
    return json.dumps(record)


def state(memory: Memory) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """What the import left, without ids and times (each store makes its own): the bullets and conflicts."""
    bullets = memory.store.all_bullets()
    content = {b.id: b.content for b in bullets}
    kept = {(b.content, b.scope, b.recall_count, b.confidence, b.origin, b.tags, b.status.value) for b in bullets}
    scopes = sorted({b.scope for b in bullets})
    conflicts = {
        (content[c.a_id], content[c.b_id], c.kind, c.evidence, c.similarity)
        for c in memory.store.conflicts(scopes)
        if c.a_id in content and c.b_id in content
    }
    return kept, conflicts


def run(lines: list[str], prefill: list[str], one_by_one: bool, threads: int = 1) -> dict[str, Any]:
    memory = fresh_memory(scope="project:bench", embed_threads=threads)
    memory.import_records(prefill)
    before = Counter(c[2] for c in state(memory)[1])
    embedding = [0.0]
    embed = memory.deps.embed_texts

    def timed(texts: Any) -> Any:  # how much of the import is the model's own time
        start = time.perf_counter()
        try:
            return embed(texts)
        finally:
            embedding[0] += time.perf_counter() - start

    memory.deps.embed_texts = timed  # type: ignore[method-assign]  # the use cases embed through Deps
    load = os.getloadavg()[0]
    cpu, start = time.process_time(), time.perf_counter()
    result = memory.import_records(lines, one_by_one=one_by_one)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert not result.errors, result.errors[:3]
    kept, conflicts = state(memory)
    kinds = Counter(c[2] for c in conflicts) - before
    return {
        "seconds": seconds,
        "cpu": cpu,
        "embedding": embedding[0],
        "load": (load, os.getloadavg()[0]),
        "inserted": result.inserted,
        "merged": result.merged,
        "conflicts": sum(kinds.values()),
        "kinds": dict(kinds),
        "state": (kept, conflicts),
    }


def show(name: str, r: dict[str, Any]) -> dict[str, Any]:
    n = r["inserted"] + r["merged"]
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(r["kinds"].items()))
    print(
        f"| {name} | {n} | {r['seconds']:.1f} | {r['embedding']:.1f} | {r['cpu']:.1f} | {n / r['seconds']:.0f} | "
        f"{r['inserted']} | {r['merged']} | {r['conflicts']} ({kinds}) | {r['load'][0]:.1f} → {r['load'][1]:.1f} |",
        flush=True,
    )
    return r


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--prefill", type=int, default=500)
    parser.add_argument("--one-by-one", type=int, default=None, help="records imported one by one (default all)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--embed-threads", type=int, default=1, help="the model's cores (MEMX_EMBED_THREADS)")
    parser.add_argument("--write", help="write PREFIX.prefill.jsonl and PREFIX.jsonl and stop")
    args = parser.parse_args()
    prefill, lines = build(args.records, args.prefill, args.seed)
    if args.write:
        for path, rows in ((f"{args.write}.prefill.jsonl", prefill), (f"{args.write}.jsonl", lines)):
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in rows)
        return
    compared = args.records if args.one_by_one is None else args.one_by_one
    print(f"{len(lines)} records ({len(set(lines))} distinct lines), store pre-filled with {len(prefill)} bullets")
    print("| path | records | wall s | of it embedding s | CPU s | records/s | inserted | merged | conflicts | load |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    runs = {"batched": show("batched", run(lines, prefill, False, args.embed_threads))}
    if compared:
        runs["one by one"] = show("one by one", run(lines[:compared], prefill, True))
        if compared < len(lines):
            runs["batched, same sample"] = show("batched, same sample", run(lines[:compared], prefill, False))
    if compared:
        batched = runs["batched"] if compared == len(lines) else runs["batched, same sample"]
        reference = runs["one by one"]
        same_bullets = batched["state"][0] == reference["state"][0]
        same_conflicts = batched["state"][1] == reference["state"][1]
        same_counts = all(batched[k] == reference[k] for k in ("inserted", "merged", "conflicts"))
        print(
            f"identical to one by one on {compared} records: counts {same_counts}, stored bullets {same_bullets} "
            f"({len(batched['state'][0])}), conflict records {same_conflicts} ({len(batched['state'][1])})"
        )


if __name__ == "__main__":
    main()
