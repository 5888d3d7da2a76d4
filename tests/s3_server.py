"""A real S3-compatible server on loopback for the team store's tests and benchmark: moto's server (the
``moto[server]`` package of the dev extra) in a process of its own, on a free port of 127.0.0.1, with
test credentials that exist only here. It honours ``If-None-Match: *``, which Lance's commits rely on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ACCESS_KEY = "memx-test-key"
SECRET_KEY = "memx-test-secret"  # moto accepts any: not a credential of anything
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    """``start`` it, ``bucket`` a fresh bucket, ``stop`` (and ``start`` again: moto keeps nothing, so a
    restarted server is empty; the outage test only stops it)."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "1"},
        )
        assert self.process.stderr is not None
        for line in self.process.stderr:  # the server says when it listens: wait for that, not a timer
            if "Running on" in line:
                break
        else:
            raise RuntimeError(f"moto's server did not start (exit {self.process.wait()})")
        # it logs every request there: keep reading, or a full pipe stops the server
        threading.Thread(target=self.process.stderr.read, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def bucket(self) -> str:
        import boto3

        name = f"memx-team-{uuid.uuid4().hex[:12]}"
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )
        client.create_bucket(Bucket=name)
        return name

    def env(self, home: Path, bucket: str, scopes: str = "project:shared", staleness: float = 5.0) -> dict[str, str]:
        """The environment of a machine using the team store ``bucket``: its settings and the credentials
        an object store's client reads from the environment."""
        return {
            "MEMX_HOME": str(home),
            "MEMX_TEAM_STORE": f"s3://{bucket}/team",
            "MEMX_TEAM_SCOPES": scopes,
            "MEMX_TEAM_STALENESS_SECONDS": str(staleness),
            "MEMX_TEAM_S3_ENDPOINT": self.endpoint,
            "MEMX_TEAM_S3_REGION": REGION,
            "MEMX_TEAM_S3_ALLOW_HTTP": "1",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        }
