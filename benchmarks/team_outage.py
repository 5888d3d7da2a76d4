"""The team store through a hung endpoint and an outage, measured with the real `memx` CLI and in-process.

moto's S3 server (the dev extra) runs on 127.0.0.1 behind a loopback gate (``tests/s3_gate.py``) that either
passes bytes, resets connections (``down``) or accepts and never answers (``hang``).

- Hung endpoint: wall time of `memx remember` (a team scope) and `memx recall` as separate processes, with the
  gate hung from the start, at the default deadline (MEMX_TEAM_TIMEOUT_SECONDS=5); each answered, the write
  kept in the outbox. The same two commands with no team store configured, for the machine's own cost.
- Outage: ``--writes`` team writes made by one process with the gate down (each kept in the outbox), then the
  gate opened: seconds until its background thread has sent them all, and whether every one is in the table.

    python benchmarks/team_outage.py [--writes 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memx_mcp.adapters.lance.routed import RoutedStore
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers import env_for, script
from tests.s3_gate import Gate
from tests.s3_server import REGION, S3Server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=50)
    args = parser.parse_args()
    server = S3Server().start()
    gate = Gate(server.port)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            bucket = server.bucket()
            home = root / "cli"
            team = {k: v for k, v in server.env(home, bucket).items() if k != "MEMX_HOME"}
            team["MEMX_TEAM_S3_ENDPOINT"] = gate.endpoint
            env = env_for(home, **team)
            gate.set("hang")
            alone = env_for(root / "alone")  # the same commands with no team store: what the machine costs anyway
            for what, argv in (
                ("remember", ["remember", "The API tests need Redis on port 6380", "--scope", "project:shared"]),
                ("recall", ["recall", "redis port", "--scope", "project:shared"]),
            ):
                start = time.perf_counter()
                done = subprocess.run([*script("memx"), *argv], capture_output=True, text=True, env=alone, timeout=600)
                print(f"no team store: memx {what} exit {done.returncode} in {time.perf_counter() - start:.1f} s")
            for what, argv in (
                ("remember", ["remember", "The API tests need Redis on port 6380", "--scope", "project:shared"]),
                ("recall", ["recall", "redis port", "--scope", "project:shared"]),
            ):
                start = time.perf_counter()
                done = subprocess.run([*script("memx"), *argv], capture_output=True, text=True, env=env, timeout=600)
                print(f"hung endpoint: memx {what} exit {done.returncode} in {time.perf_counter() - start:.1f} s")
            kept = len(list((home / "team" / "outbox").glob("*.arrow")))
            print(f"hung endpoint: {kept} write(s) kept in the outbox")

            gate.set("down")
            settings = Settings(
                home=root / "proc",
                scope="project:shared",
                team_store=f"s3://{bucket}/outage",
                team_scopes="project:shared",
                team_s3_endpoint=gate.endpoint,
                team_s3_region=REGION,
                team_s3_allow_http=1,
                team_staleness_seconds=1.0,
            )
            os.environ.update({k: v for k, v in team.items() if k.startswith("AWS_")})
            memory = open_memory(settings)
            store = memory.store
            assert isinstance(store, RoutedStore) and store.team is not None
            ids = []
            start = time.perf_counter()
            for n in range(args.writes):
                ids.append(memory.remember(f"Lesson {n}: service s{n} reads its port from S{n}_PORT").bullet.id)
            print(f"outage: {args.writes} writes kept in {time.perf_counter() - start:.1f} s")
            gate.set("open")
            start = time.perf_counter()
            while store.team.outbox.entries():
                time.sleep(0.05)
            sent = time.perf_counter() - start
            stored = {b.id for b in store.team.all_bullets()}
            missing = [i for i in ids if i not in stored]
            print(f"outage: all sent {sent:.1f} s after the store answered again; missing: {len(missing)}")
            store.close()
    finally:
        gate.stop()
        server.stop()


if __name__ == "__main__":
    main()
