"""Shared helpers for the retrieval benchmarks: a real Memory (LanceDB + the shipped model) in a temporary
folder, filled through the import path, and the three rankers compared in one run."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.text.tokenize import query_terms
from memx_mcp.usecases import maintenance

WORK = Path(__file__).parent / ".work"

SERVER = [str(Path(sys.executable).parent / "memx-mcp")]
if not Path(SERVER[0]).exists():
    SERVER = [sys.executable, "-m", "memx_mcp.server.app"]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    """One JSON-RPC message to a stdio server, as a client writes it."""
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def receive(proc: subprocess.Popen[bytes], wanted_id: int) -> dict[str, Any]:
    """The answer with ``wanted_id`` (notifications before it are skipped)."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == wanted_id:
            return message


def fresh_memory(defer_reinforcement: bool = False, **settings: Any) -> Memory:
    home = Path(tempfile.mkdtemp(prefix="memx-bench-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)  # a 100k store takes ~1 GB
    (home / "models").symlink_to(_model_cache())  # share the checked model copy between runs
    memory = open_memory(Settings(home=home, **settings), cwd=home, defer_reinforcement=defer_reinforcement)
    memory.embedder.get(120.0)
    return memory


def _model_cache() -> Path:
    WORK.mkdir(exist_ok=True)
    (WORK / "models").mkdir(exist_ok=True)
    return (WORK / "models").resolve()


CREATED = "2026-01-01T00:00:00+00:00"


def bullet_record(bullet_id: str, content: str, scope: str) -> dict[str, Any]:
    """An import record with everything fixed but the text: one creation time for all (decay and
    recency neutral), no metadata, a neutral score."""
    return {
        "id": bullet_id,
        "content": content,
        "scope": scope,
        "created_at": CREATED,
        "updated_at": CREATED,
        "section": "GENERAL",
        "knowledge_type": "KNOWLEDGE",
        "instructivity_score": 50,
        "tools": [],
        "entities": [],
        "tags": [],
    }


def load(memory: Memory, records: Iterable[dict[str, Any]]) -> float:
    """Import records (each with an id: restored as they are, embedded in batches). Returns seconds."""
    start = time.perf_counter()
    result = maintenance.import_records(memory, (json.dumps(r, ensure_ascii=False) for r in records))
    assert not result.errors, result.errors[:3]
    memory.store.optimize()
    return time.perf_counter() - start


class PlainBM25:
    """Off-the-shelf BM25: LanceDB's own full-text index (its default tokenizer, English stemming and stop
    words) over the same bullet texts, in a table of its own. The baseline memx must beat."""

    def __init__(self, memory: Memory, texts: dict[str, str] | None = None, name: str = "plain") -> None:
        """Over the bullets' texts, or over ``texts`` (id → text) given instead."""
        import lancedb

        db = lancedb.connect(str(memory.settings.home / "plain-bm25"))
        rows = [
            {"id": b.id, "content": (texts or {}).get(b.id, b.content), "scope": b.scope}
            for b in memory.store.all_bullets()
        ]
        self.table = db.create_table(name, data=rows)
        self.table.create_fts_index("content")

    def __call__(self, query: str, scope: str, k: int) -> list[str]:
        text = " ".join(w for w in query.replace('"', " ").split())
        rows = (
            self.table.search(text, query_type="fts")
            .where(f"scope = '{scope}'", prefilter=True)
            .select(["id", "_score"])
            .limit(k)
            .to_list()
        )
        return [r["id"] for r in rows]


def bm25(memory: Memory, query: str, scopes: Sequence[str], k: int) -> list[str]:
    """LanceDB full-text (BM25) over memx's own tokenization (code parts, CJK bigrams, light stemming)."""
    return [b.id for b in memory.store.keyword_candidates(query_terms(query), scopes, k)]


def vector(memory: Memory, query: str, scopes: Sequence[str], k: int) -> list[str]:
    """Cosine over the model's vectors (the question embedded as a query), alone."""
    embedder = memory.embedder.get(60.0)
    assert embedder is not None
    return [b.id for b in memory.store.vector_candidates(embedder.embed_queries([query])[0], scopes, k)]


def memx(memory: Memory, query: str, scope: str, k: int) -> list[str]:
    result = memory.recall(query, scope=scope, max_results=k, token_budget=50_000, reinforce=False)
    return [h.bullet.id for h in result.hits]
