"""What meeting a repository costs (issue 31, docs/notes/scopes.md): the first process that works in a
repository on a store looks for bullets of its old bare name (it reads the store's scope column, and moves
what sessions there taught); every later process reads a small record and makes one indexed count.

A store of N bullets with random vectors over 50 projects (a tenth of them under the repository's bare
name, half of those with a session that ran in it), a real git repository with a remote, a real transcript:

    python benchmarks/scope_meeting.py [--bullets 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memx_mcp.adapters.git import GitRepositories
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.domain.models import Bullet, KnowledgeType, Section, new_id
from memx_mcp.memory import Memory
from memx_mcp.ports import ReadyEmbedder

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bullets", type=int, default=20000)
    n = parser.parse_args().bullets
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HOME"] = str(root / "user")
        repo = root / "src" / "api"
        repo.mkdir(parents=True)
        who = ["-c", "user.name=b", "-c", "user.email=b@example.invalid"]
        for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", *who, *args], cwd=repo, check=True)
        subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/api.git"], cwd=repo, check=True)
        sessions = root / "user" / ".claude" / "projects" / "p"
        sessions.mkdir(parents=True)
        (sessions / "s1.jsonl").write_text(json.dumps({"type": "user", "cwd": str(repo), "message": {}}) + "\n")
        settings = Settings(home=root / "memx", llm_backend="none")
        store = LanceStore(settings.home / "store", MODEL, 384)
        now = datetime.now(UTC)
        for start in range(0, n, 2000):
            batch = []
            for i in range(start, min(n, start + 2000)):
                bare = i % 10 == 0
                batch.append(
                    Bullet(
                        new_id(),
                        f"bullet {i} about a part of project {i % 50}",
                        Section.GENERAL,
                        KnowledgeType.KNOWLEDGE,
                        50,
                        1,
                        "manual",
                        "project:api" if bare else f"project:p{i % 50}@github.com/x",
                        now,
                        now,
                        origin="session:s1 · claude-code" if bare and i % 20 == 0 else "",
                        vector=tuple(random.random() for _ in range(384)),
                    )
                )
            store.add(batch)
        times = []
        for _ in range(3):  # a fresh Memory each time, as a hook's process has
            memory = Memory(
                settings,
                LanceStore(settings.home / "store", MODEL, 384),
                ReadyEmbedder(None),
                cwd=repo,
                repositories=GitRepositories(),
            )
            started = time.perf_counter()
            memory.current_scope()
            times.append(time.perf_counter() - started)
        counts = store.column_counts("scope")
        print(f"{n} bullets; moved to project:api@github.com/acme: {counts.get('project:api@github.com/acme', 0)}")
        print(f"first meeting (reads the scopes, moves): {times[0] * 1000:.0f} ms")
        print(f"later processes (record + count): {times[1] * 1000:.0f} ms, {times[2] * 1000:.0f} ms")
        print("(each includes detecting the scope: four or five `git` calls)")


if __name__ == "__main__":
    main()
