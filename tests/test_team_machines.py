"""Machines sharing one team store on a real S3-compatible server on loopback: each machine a `memx-mcp`
server process with a data folder of its own, driven over stdio by the real MCP client; the Curator pass
run by the real `memx` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.adapters.lance.team import TeamStore

from .conftest import MODEL
from .helpers import env_for, script
from .s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from .test_concurrency import acked, facts

LESSON = "Run the API integration tests with `make test-api`; they need Redis listening on port 6380"
WRITES = 60
# The run: the writes spread over at least 60 s (on two loaded cores they take longer anyway);
# MEMX_TEAM_TEST_SECONDS=10 keeps the same shape in less time on a fast machine.
SECONDS = float(os.environ.get("MEMX_TEAM_TEST_SECONDS", "60"))


@pytest.fixture
def s3() -> Iterator[S3Server]:
    server = S3Server().start()
    yield server
    server.stop()


def machine_env(s3: S3Server, home: Path, bucket: str, staleness: float) -> dict[str, str]:
    """A deadline far above the default: these tests are about commits racing on a loaded machine (moto on two
    shared cores answers in seconds), not outages (``adapters/lance/test_team_outage.py``): a write that timed
    out would wait in its machine's outbox, not be in the table this test reads."""
    team = {k: v for k, v in s3.env(home, bucket, staleness=staleness).items() if k != "MEMX_HOME"}
    return env_for(home, **team, MEMX_TEAM_TIMEOUT_SECONDS="60")


def params(s3: S3Server, home: Path, bucket: str, staleness: float = 5.0) -> StdioServerParameters:
    home.mkdir(parents=True, exist_ok=True)
    cmd = script("memx-mcp")
    return StdioServerParameters(
        command=cmd[0], args=cmd[1:], env=machine_env(s3, home, bucket, staleness), cwd=str(home.parent)
    )


def team_rows(s3: S3Server, bucket: str, cache: Path) -> list[dict[str, Any]]:
    store = TeamStore(
        f"s3://{bucket}/team",
        cache,
        MODEL,
        384,
        storage_options={
            "aws_endpoint": s3.endpoint,
            "aws_region": REGION,
            "allow_http": "true",
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
        },
        background=False,
    )
    return [{"id": b.id, "content": b.content, "status": b.status.value} for b in store.all_bullets()]


async def writer(
    p: StdioServerParameters,
    name: str,
    start: anyio.Event,
    ready: list[str],
    acks: list[str],
    lesson_acks: list[str],
    errors: list[str],
) -> None:
    async with stdio_client(p) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("recall", {"query": "warm up", "scope": "project:shared"})  # the copy is loaded
        ready.append(name)
        await start.wait()  # all three write the same lesson at the same moment
        r = await session.call_tool("remember", {"text": LESSON, "scope": "project:shared"})
        if r.is_error:
            errors.append(f"{name}: {r.content[0].text}")  # type: ignore[union-attr]
        else:
            lesson_acks.append(acked(r.structured_content or {}))
        began = time.monotonic()
        for n, text in enumerate(facts(name, WRITES)):
            r = await session.call_tool("remember", {"text": text, "scope": "project:shared"})
            if r.is_error:
                errors.append(f"{name}: {r.content[0].text}")  # type: ignore[union-attr]
            else:
                acks.append(acked(r.structured_content or {}))
            q = await session.call_tool("recall", {"query": text[:60], "scope": "project:shared"})
            if q.is_error:
                errors.append(f"{name} recall: {q.content[0].text}")  # type: ignore[union-attr]
            await anyio.sleep(max(0.0, began + (n + 1) * SECONDS / WRITES - time.monotonic()))  # pacing, not waiting


def test_three_machines_writing_and_recalling_at_once_keep_every_write_once_and_the_pass_leaves_one_lesson(
    tmp_path: Path, s3: S3Server
) -> None:
    bucket = s3.bucket()
    acks: dict[str, list[str]] = {n: [] for n in ("ann", "bob", "cyd")}
    lesson: list[str] = []
    errors: list[str] = []
    ready: list[str] = []

    spans: list[float] = []

    async def run() -> None:
        start = anyio.Event()
        with anyio.fail_after(SECONDS + 240):
            async with anyio.create_task_group() as tg:
                for name in acks:
                    p = params(s3, tmp_path / name / "home", bucket)
                    tg.start_soon(writer, p, name, start, ready, acks[name], lesson, errors)
                while len(ready) < len(acks):  # each server up, its copy loaded
                    await anyio.sleep(0.05)
                start.set()
                began = time.monotonic()
            spans.append(time.monotonic() - began)

    anyio.run(run)
    print(f"3 machines x {WRITES} writes, each followed by a recall: {spans[0]:.0f} s")
    assert errors == []
    assert [len(a) for a in acks.values()] == [WRITES] * 3 and len(lesson) == 3

    curate = subprocess.run(
        [*script("memx"), "team", "curate", "--json"],
        capture_output=True,
        text=True,
        env=machine_env(s3, tmp_path / "dee" / "home", bucket, 5.0),
        cwd=tmp_path,
        timeout=300,
    )
    assert curate.returncode == 0, curate.stderr
    rows = team_rows(s3, bucket, tmp_path / "check")
    counts = Counter(r["id"] for r in rows)
    assert [i for i, n in counts.items() if n > 1] == [], "a bullet is stored twice"
    every = [i for a in acks.values() for i in a] + lesson
    assert [i for i in every if i not in counts] == [], "an acknowledged write is missing"
    assert [r["id"] for r in rows if r["content"] == LESSON and r["status"] == "active"] != []
    assert len([r for r in rows if r["content"] == LESSON and r["status"] == "active"]) == 1
    again = subprocess.run(
        [*script("memx"), "team", "curate", "--json"],
        capture_output=True,
        text=True,
        env=machine_env(s3, tmp_path / "eve" / "home", bucket, 5.0),
        cwd=tmp_path,
        timeout=300,
    )
    assert json.loads(again.stdout)["merged"] == {}  # a second pass, on another machine, changes nothing


def test_a_bullet_remembered_on_a_reaches_b_and_b_answers_from_its_copy_with_the_server_stopped(
    tmp_path: Path, s3: S3Server
) -> None:
    bucket = s3.bucket()
    staleness = 1.0
    seen: dict[str, Any] = {}

    async def run() -> None:
        pa, pb = params(s3, tmp_path / "a", bucket, staleness), params(s3, tmp_path / "b", bucket, staleness)
        async with (
            stdio_client(pa) as (ra, wa),
            ClientSession(ra, wa) as a,
            stdio_client(pb) as (rb, wb),
            ClientSession(rb, wb) as b,
        ):
            await a.initialize()
            await b.initialize()
            query = {"query": "which redis port do the api tests need", "scope": "project:shared"}
            first = await b.call_tool("recall", query)
            assert first.structured_content is not None and first.structured_content["results"] == []
            stored = await a.call_tool("remember", {"text": LESSON, "scope": "project:shared"})
            assert not stored.is_error
            wanted = acked(stored.structured_content or {})
            began = time.monotonic()
            with anyio.fail_after(60):
                while True:  # B's copy is refreshed by its own background thread: watch for it
                    found = await b.call_tool("recall", query)
                    if wanted in [h["id"] for h in (found.structured_content or {})["results"]]:
                        break
                    await anyio.sleep(0.1)
            seen["delay"] = time.monotonic() - began
            s3.stop()
            answers = []
            with anyio.fail_after(60):
                while True:  # until B's next check has found the server gone
                    r = await b.call_tool("recall", query)
                    assert not r.is_error
                    answers.append(r.structured_content or {})
                    if any("unreachable" in n for n in answers[-1]["notes"]):
                        break
                    await anyio.sleep(0.1)
            seen["answers"] = answers
            seen["wanted"] = wanted

    anyio.run(run)
    print(f"A's bullet reached B's recall after {seen['delay']:.2f} s (staleness {staleness:g} s)")
    for answer in seen["answers"]:
        assert seen["wanted"] in [h["id"] for h in answer["results"]]
    assert any("this machine's copy" in n for n in seen["answers"][-1]["notes"])


def test_credentials_are_read_from_the_environment_and_never_written_to_the_data_folder(
    tmp_path: Path, s3: S3Server
) -> None:
    bucket = s3.bucket()
    home = tmp_path / "home"
    env = machine_env(s3, home, bucket, 5.0)
    done = subprocess.run(
        [*script("memx"), "remember", LESSON, "--scope", "project:shared", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert ACCESS_KEY.encode() not in data and SECRET_KEY.encode() not in data, path
    assert [r["content"] for r in team_rows(s3, bucket, tmp_path / "check")] == [LESSON]
