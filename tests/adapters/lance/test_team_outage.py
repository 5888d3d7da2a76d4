"""The team store through outages, on the real S3-compatible server (moto's) behind a loopback gate that can
reset every connection or hang them: writes and recall counts kept in the outbox and sent when the store
answers, a process that recovers by itself (started before or during the outage), a real second process
sending what the first one kept, and a hung endpoint that costs no call more than its deadline."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.adapters.lance.team import TeamStore
from memx_mcp.cli.doctor import _team as doctor_team_line
from memx_mcp.config import Settings
from memx_mcp.domain.errors import TeamStoreRefused, TeamStoreUnavailable
from memx_mcp.domain.models import Status
from memx_mcp.ports import Embedder

from ...conftest import MODEL
from ...helpers import env_for, script
from ...s3_gate import Gate
from ...s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from .test_team import LESSON, _closed, _credentials, machine, routed, team_of  # noqa: F401 (fixtures)

KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture
def gate(s3: S3Server) -> Iterator[Gate]:
    g = Gate(s3.port)
    yield g
    g.stop()


def gated(home: Path, gate: Gate, bucket: str, **extra: object) -> Settings:
    values: dict[str, object] = {
        "home": home,
        "scope": "project:shared",
        "team_store": f"s3://{bucket}/team",
        "team_scopes": "project:shared",
        "team_s3_endpoint": gate.endpoint,
        "team_s3_region": REGION,
        "team_s3_allow_http": 1,
        "team_staleness_seconds": 0.5,
        "team_timeout_seconds": 5.0,
        **extra,
    }
    return Settings(**values)  # type: ignore[arg-type]


def rows(s3: S3Server, bucket: str, cache: Path) -> dict[str, Any]:
    """The team table as a fresh machine reads it straight from the server (not through the gate)."""
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
    return {b.id: b for b in store.all_bullets()}


def until(done: Callable[[], bool], seconds: float = 90.0) -> None:
    """Wait for what a background thread does; a generous bound, only so that a failure does not hang."""
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, "not done in time"
        time.sleep(0.1)


def test_writes_and_recall_counts_made_during_an_outage_wait_in_the_outbox_and_reach_the_store_when_it_answers(
    tmp_path: Path, s3: S3Server, gate: Gate, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    m = machine(gated(tmp_path / "a", gate, bucket), embedder)
    before = m.remember(LESSON)
    assert [h.bullet.id for h in m.recall("redis port for the api tests").hits] == [before.bullet.id]
    team_of(m).flush_recalls()
    gate.set("down")
    team = team_of(m)
    assert not team.sync()  # what the background thread finds at its next check
    during = m.remember(f"The staging deploy reads its token from the vault, never from {KEY} pasted in chat")
    assert during.action == "inserted"
    with pytest.raises(TeamStoreUnavailable, match=f"the team store s3://{bucket}/team: (timed out|unreachable)") as e:
        m.forget([before.bullet.id])  # a change to a stored team bullet needs its row: refused, and said why
    assert "repair" not in str(e.value) and str(routed(m).personal.root) not in str(e.value)
    found = m.recall("where does the staging deploy read its token")
    assert during.bullet.id in [h.bullet.id for h in found.hits]  # this machine's copy holds it meanwhile
    assert any("outbox" in n for n in found.notes)
    assert any("unreachable" in n or "timed out" in n for n in found.notes)
    team.flush_recalls()  # recall counts: kept too
    kept = list(team.outbox.folder.glob("*.arrow"))
    assert len(kept) == 2  # the bullet, the recall counts
    for path in kept:
        assert KEY.encode() not in path.read_bytes() and path.stat().st_mode & 0o077 == 0
    assert routed(m).personal.all_bullets() == []  # never stored where the team would not see it
    gate.set("open")
    until(lambda: not team.outbox.entries())  # the running process sends them by itself
    stored = rows(s3, bucket, tmp_path / "check")
    assert stored[before.bullet.id].status is Status.ACTIVE and stored[before.bullet.id].recall_count >= 1
    assert stored[during.bullet.id].status is Status.ACTIVE and KEY not in stored[during.bullet.id].content
    assert stored[during.bullet.id].recall_count >= 1
    assert m.recall("where does the staging deploy read its token").notes == ()


def test_a_process_started_during_an_outage_keeps_its_writes_and_opens_the_store_by_itself_when_it_answers(
    tmp_path: Path, s3: S3Server, gate: Gate, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    gate.set("down")
    m = machine(gated(tmp_path / "a", gate, bucket), embedder)
    team = team_of(m)
    assert team.offline
    stored = m.remember(LESSON)
    found = m.recall("redis port for the api tests")
    assert any(
        f"the team store s3://{bucket}/team cannot be used" in n and ("unreachable" in n or "timed out" in n)
        for n in found.notes
    )
    check = doctor_team_line(m)
    assert check.status == "FAIL" and "1 write(s) wait in this machine's outbox" in check.detail
    gate.set("open")
    until(lambda: not team.offline and not team.outbox.entries())
    assert list(rows(s3, bucket, tmp_path / "check")) == [stored.bullet.id]
    found = m.recall("redis port for the api tests")
    assert [h.bullet.id for h in found.hits] == [stored.bullet.id] and found.notes == ()


def test_a_hung_endpoint_costs_no_call_more_than_its_deadline_and_the_error_says_it_timed_out(
    tmp_path: Path, s3: S3Server, gate: Gate, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    gate.set("hang")
    spans: dict[str, float] = {}

    def timed(name: str, call: Callable[[], Any]) -> Any:
        began = time.monotonic()
        try:
            return call()
        finally:
            spans[name] = time.monotonic() - began

    settings = gated(tmp_path / "a", gate, bucket, team_timeout_seconds=1.5)
    m = timed("open", lambda: machine(settings, embedder))
    stored = timed("remember", lambda: m.remember(LESSON))
    found = timed("recall", lambda: m.recall("redis port for the api tests"))
    check = timed("doctor", lambda: doctor_team_line(m))
    timed("sync", team_of(m).sync)
    print({k: round(v, 2) for k, v in spans.items()})
    # Generous bounds (a loaded machine), far below the minutes a hung endpoint cost before.
    assert max(spans.values()) < 30, spans
    assert any("timed out" in n and "1.5 s" in n for n in found.notes), found.notes
    assert "timed out" in check.detail
    assert [p.name for p in team_of(m).outbox.entries()] != [] and stored.action == "inserted"


def test_a_second_process_sends_what_a_first_one_kept_during_the_outage(
    tmp_path: Path, s3: S3Server, gate: Gate
) -> None:
    bucket = s3.bucket()
    home = tmp_path / "home"
    team = {k: v for k, v in s3.env(home, bucket, staleness=0.5).items() if k != "MEMX_HOME"}
    team.update(MEMX_TEAM_S3_ENDPOINT=gate.endpoint)
    env = env_for(home, **team)

    def memx(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*script("memx"), *args, "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )

    gate.set("down")
    first = memx("remember", LESSON, "--scope", "project:shared")
    assert first.returncode == 0, first.stderr
    wanted = json.loads(first.stdout)["bullet"]["id"]
    assert len(list((home / "team" / "outbox").glob("*.arrow"))) == 1  # the process has ended: the write is on disk
    gate.set("open")
    second = memx("recall", "redis port for the api tests", "--scope", "project:shared")
    assert second.returncode == 0, second.stderr
    assert list((home / "team" / "outbox").glob("*.arrow")) == []
    assert list(rows(s3, bucket, tmp_path / "check")) == [wanted]


def test_a_write_the_server_refuses_is_refused_naming_the_team_store_and_why_and_the_next_one_goes_through(
    tmp_path: Path, s3: S3Server, gate: Gate, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    m = machine(gated(tmp_path / "a", gate, bucket), embedder)
    first = m.remember(LESSON)
    gate.set("read-only")  # what read-only credentials meet: reads answered, every PUT a 403 AccessDenied
    assert team_of(m).sync()
    with pytest.raises(TeamStoreRefused) as refused:
        m.remember("The API's staging URL moved to api.staging.example.test")
    text = str(refused.value)
    assert text.startswith(f"the team store s3://{bucket}/team: refused — access denied"), text
    assert "repair" not in text and "damaged" not in text and str(routed(m).personal.root) not in text
    assert team_of(m).outbox.entries() == [] and routed(m).personal.all_bullets() == []
    assert [h.bullet.id for h in m.recall("redis port for the api tests").hits] == [first.bullet.id]
    gate.set("open")
    again = m.remember("The API's staging URL moved to api.staging.example.test")
    assert set(rows(s3, bucket, tmp_path / "check")) == {first.bullet.id, again.bullet.id}
