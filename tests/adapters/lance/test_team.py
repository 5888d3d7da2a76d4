"""The team store on a real S3-compatible server (moto's, on loopback): routing, the sanitizer on the way
out, share/unshare, the model check, the Curator pass, retention, and what happens when the server stops."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memx_mcp.adapters.git import GitRepositories
from memx_mcp.adapters.lance.routed import RoutedStore, TeamScopes
from memx_mcp.adapters.lance.team import TeamStore
from memx_mcp.cli.doctor import _team as doctor_team_line
from memx_mcp.compose import open_store, team_guard
from memx_mcp.config import Settings
from memx_mcp.domain.errors import InvalidInputError, ModelMismatchError
from memx_mcp.domain.models import Bullet, Conflict, KnowledgeType, Section, Status
from memx_mcp.memory import Memory
from memx_mcp.ports import ACTIVE, Embedder, ReadyEmbedder
from memx_mcp.privacy import PrivacySanitizer
from memx_mcp.usecases.writes import Draft

from ...conftest import T0, Clock
from ...s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, free_port

LESSON = "Run the API integration tests with `make test-api`; they need Redis listening on port 6380"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """The object store's client reads them from the environment, as on a developer's machine."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)


def team_settings(home: Path, server: S3Server, bucket: str, **extra: object) -> Settings:
    values: dict[str, object] = {
        "home": home,
        "scope": "project:shared",
        "team_store": f"s3://{bucket}/team",
        "team_scopes": "project:shared",
        "team_s3_endpoint": server.endpoint,
        "team_s3_region": REGION,
        "team_s3_allow_http": 1,
        **extra,
    }
    return Settings(**values)  # type: ignore[arg-type]


OPEN: list[RoutedStore] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    """Each machine's background refresher stops with its test (the servers it follows stop too)."""
    yield
    while OPEN:
        OPEN.pop().close()


def machine(settings: Settings, embedder: Embedder, clock: Clock | None = None) -> Memory:
    store = open_store(settings)
    assert isinstance(store, RoutedStore)
    OPEN.append(store)
    return Memory(
        settings,
        store,
        ReadyEmbedder(embedder),
        clock=clock or Clock(),
        cwd=settings.home,
        teams=store,
        repositories=GitRepositories(),
    )


def routed(memory: Memory) -> RoutedStore:
    store = memory.store
    assert isinstance(store, RoutedStore)
    return store


def team_of(memory: Memory) -> TeamStore:
    store = routed(memory).team
    assert store is not None
    return store


def test_a_bullet_of_a_team_scope_goes_to_the_team_store_and_the_rest_stays_personal(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    shared = m.remember(LESSON, scope="project:shared")
    mine = m.remember("I prefer the dark theme in every editor", scope="global")
    workspace = m.remember("The feature branch pins Redis 7.2 in its compose file", scope="workspace:feature")
    store = routed(m)
    assert [b.id for b in team_of(m).all_bullets()] == [shared.bullet.id, workspace.bullet.id]
    assert [b.id for b in store.personal.all_bullets()] == [mine.bullet.id]


def test_recall_puts_together_the_hits_of_the_personal_and_the_team_store(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    shared = m.remember(LESSON, scope="project:shared")
    mine = m.remember("Redis on my laptop runs in Docker on port 6380 too", scope="global")
    found = m.recall("redis port for the api tests", scope="project:shared")
    assert {h.bullet.id for h in found.hits} == {shared.bullet.id, mine.bullet.id}
    assert found.notes == ()


def test_a_second_machine_sees_the_first_machines_bullet_after_it_syncs(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    a = machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    b = machine(team_settings(tmp_path / "b", s3, bucket), embedder)
    assert b.recall("redis port for the api tests").hits == ()  # B's copy is loaded, empty
    stored = a.remember(LESSON)
    assert team_of(b).sync()  # what B's background thread does every staleness period
    assert [h.bullet.id for h in b.recall("redis port for the api tests").hits] == [stored.bullet.id]


def test_a_secret_that_a_newer_pattern_catches_is_masked_when_its_bullet_is_shared(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    before = machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    kept = personal(before, "Staging logins use the ticket ACME-4821 as the change reference")
    after = machine(team_settings(tmp_path / "a", s3, bucket, secret_patterns="ticket=ACME-\\d{4}"), embedder)
    moved = after.share([kept.id])
    assert moved.moved == [kept.id]
    [stored] = team_of(after).get([kept.id])
    assert "ACME-4821" not in stored.content and "[REDACTED:ticket]" in stored.content
    assert stored.vector is not None  # embedded again from the masked text
    assert routed(after).personal.get([kept.id]) == []


def test_the_team_store_masks_a_secret_whatever_door_the_bullet_came_through(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    key = "AKIA" + "Z7QX3MPL4VWN2RTY"
    raw = m.check(Draft(LESSON)).bullet
    leaked = raw.with_changes(content=f"{LESSON}; deploy with {key}", tags=(key,))
    team_of(m).add([leaked])  # as a door that skipped the write path would
    [stored] = team_of(m).get([leaked.id])
    assert key not in stored.content and key not in stored.tags
    assert stored.vector is None  # its vector was made from the unmasked text


def test_share_and_unshare_move_a_bullet_between_the_stores_under_its_id(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    b = personal(m, "Use `uv sync --frozen` in CI so that the lock file is never rewritten")
    assert m.share([b.id, "b_missing"]).not_found == ["b_missing"]
    assert [x.id for x in team_of(m).get([b.id])] == [b.id]
    assert m.share([b.id]).already == [b.id]
    m.forget([b.id])  # a change to a shared bullet goes to the store that holds it
    assert team_of(m).get([b.id])[0].status is Status.ARCHIVED
    assert m.unshare([b.id]).moved == [b.id]
    assert team_of(m).get([b.id]) == []
    assert [x.id for x in routed(m).personal.get([b.id])] == [b.id]


def personal(m: Memory, text: str, scope: str = "project:shared") -> Bullet:
    """A bullet of ``scope`` in the personal store, as one remembered before the team store was set up."""
    b = _bullet(m, text, scope=scope)
    routed(m).personal.add([b])
    return b


def test_share_refuses_a_global_bullet_and_one_of_a_scope_the_team_did_not_list_and_moves_nothing(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    mine = m.remember("I prefer the dark theme in every editor", scope="global")
    other = m.remember("The side project deploys from the main branch", scope="project:side")
    team_scoped = personal(m, "Use `uv sync --frozen` in CI so that the lock file is never rewritten")
    for ids in ([mine.bullet.id], [team_scoped.id, other.bullet.id]):
        with pytest.raises(InvalidInputError, match=r"not shared: .*(global|project:side).* stay personal"):
            m.share(ids)
    assert team_of(m).all_bullets() == []
    assert {b.id for b in routed(m).personal.all_bullets()} == {mine.bullet.id, other.bullet.id, team_scoped.id}


def test_a_machine_configured_with_another_model_is_refused_by_the_team_store(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    options = team_settings(tmp_path / "b", s3, bucket).team_storage_options()
    with pytest.raises(ModelMismatchError, match="every machine of a team uses the team store's model"):
        TeamStore(f"s3://{bucket}/team", tmp_path / "b", "intfloat/multilingual-e5-small", 384, storage_options=options)


def _bullet(m: Memory, text: str, scope: str = "project:shared", **changes: object) -> Bullet:
    b = m.check(Draft(text, scope=scope)).bullet
    vectors, _ = m.embed_texts([b.content])
    assert vectors
    return b.with_changes(vector=vectors[0], **changes)


def test_the_curator_pass_merges_one_lesson_written_by_three_machines_at_once_and_a_second_pass_does_nothing(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    a = machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    b = machine(team_settings(tmp_path / "b", s3, bucket), embedder)
    # What three machines committing in the same second leave: each curated against a table without the others.
    copies = [_bullet(a, LESSON, origin=f"session:{n}", created_at=T0) for n in "xyz"]
    for copy in copies:
        team_of(a).add([copy])
    other = a.remember("The deploy script needs AWS_PROFILE=staging exported first")
    done = b.team_curate()
    kept = min(copies, key=lambda c: c.id)
    assert done.merged == {kept.id: sorted(c.id for c in copies if c.id != kept.id)}
    assert team_of(a).sync()  # A's next check of the table (its background thread's)
    active = team_of(a).all_bullets(ACTIVE)
    assert sorted(x.id for x in active) == sorted([kept.id, other.bullet.id])
    assert {"session:x", "session:y", "session:z"} <= set(next(x for x in active if x.id == kept.id).origin.split())
    again = a.team_curate()
    assert again.merged == {} and again.conflicts_added == []


def test_a_contradiction_written_from_two_machines_becomes_one_conflict(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    a = machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    b = machine(team_settings(tmp_path / "b", s3, bucket), embedder)
    small = _bullet(a, "A Redis pool of 10 connections is enough for the API workers")
    large = _bullet(b, "The API workers are only stable with a Redis pool of 50 connections or more")
    team_of(a).add([small])
    team_of(b).add([large])
    first = a.team_curate()
    second = b.team_curate()  # the other machine's pass finds it recorded (a pass syncs first)
    assert len(first.conflicts_added) == 1 and second.conflicts_added == []
    # Two passes that ran at once would each have written the record: the next pass keeps one.
    [c] = team_of(a).open_conflicts()
    team_of(b).add_conflicts([Conflict("c_late", c.a_id, c.b_id, c.similarity, c.kind, c.evidence, c.scope, T0)])
    assert b.team_curate().conflicts_deduplicated == [max("c_late", c.id)]
    assert team_of(a).sync()
    assert len(team_of(a).open_conflicts()) == 1
    assert [v.conflict.id for v in a.list_conflicts("project:shared")] == [min("c_late", c.id)]


def test_compaction_keeps_the_versions_another_machine_may_still_be_reading(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    a = machine(team_settings(tmp_path / "a", s3, bucket), embedder)
    for n in range(3):
        a.remember(f"Lesson {n}: the {['api', 'web', 'worker'][n]} service reads its port from PORT")
    reader = team_of(machine(team_settings(tmp_path / "b", s3, bucket), embedder))
    pinned = int(reader._bullets.version)
    a.remember("Lesson 3: the scheduler reads its port from SCHEDULER_PORT")
    team_of(a).optimize(erase=True)  # even an erase keeps the retention window
    reader._bullets.checkout(pinned)
    assert reader._bullets.count_rows() == 3


def test_recall_with_the_s3_server_stopped_answers_from_the_copy_and_says_so(
    tmp_path: Path, embedder: Embedder
) -> None:
    server = S3Server().start()
    try:
        m = machine(team_settings(tmp_path / "a", server, server.bucket()), embedder)
        stored = m.remember(LESSON)
        assert m.recall("redis port for the api tests").notes == ()
    finally:
        server.stop()
    assert not team_of(m).sync()  # what the background thread finds at its next check
    check = doctor_team_line(m)
    assert check.status == "FAIL" and "unreachable now" in check.detail
    found = m.recall("redis port for the api tests")
    assert [h.bullet.id for h in found.hits] == [stored.bullet.id]
    assert any("unreachable" in n and "this machine's copy" in n for n in found.notes)
    personal = m.remember("My shell is fish", scope="global")
    assert personal.action == "inserted"  # personal memory does not need the team store
    kept = m.remember("The API's staging URL moved to api.staging.example.test")
    outbox = team_of(m).outbox
    kept_ops = sorted(outbox.read(p).op for p in outbox.entries())
    assert kept.action == "inserted" and kept_ops == ["recalls", "upsert"]  # kept to send (test_team_outage.py)
    assert [b.id for b in routed(m).personal.all_bullets()] == [personal.bullet.id]


def test_doctor_shows_the_team_store_its_staleness_and_that_it_answers(
    tmp_path: Path, s3: S3Server, embedder: Embedder
) -> None:
    bucket = s3.bucket()
    m = machine(team_settings(tmp_path / "a", s3, bucket, team_staleness_seconds=2.5), embedder)
    m.remember(LESSON)
    check = doctor_team_line(m)
    assert check.status == "OK", check
    assert f"s3://{bucket}/team" in check.detail and "refreshed every 2.5 s" in check.detail
    assert "reachable, 1 active bullet," in check.detail


def test_a_team_store_that_cannot_be_reached_at_start_leaves_personal_memory_working(
    tmp_path: Path, embedder: Embedder
) -> None:
    nobody = S3Server(port=free_port())  # never started: nothing listens there
    m = machine(team_settings(tmp_path / "a", nobody, "memx-team-absent"), embedder)
    assert team_of(m).offline  # opened later, when it answers (test_team_outage.py)
    m.remember("My shell is fish", scope="global")
    found = m.recall("which shell")
    assert len(found.hits) == 1 and any("cannot be used" in n and "unreachable" in n for n in found.notes)
    m.remember(LESSON)  # a team scope: kept in the outbox, never in the personal store
    assert len(team_of(m).outbox) == 1 and len(routed(m).personal.all_bullets()) == 1


def test_team_scopes_hold_their_workspaces_and_must_be_written_in_full() -> None:
    scopes = TeamScopes.parse("project:api, project:web")
    assert scopes.holds("project:api") and scopes.holds("project:api/workspace:main")
    assert not scopes.holds("project:apiary") and not scopes.holds("global")
    with pytest.raises(InvalidInputError, match="team_scopes: 'nonsense'"):
        TeamScopes.parse("project:api, nonsense")


def test_a_team_scope_written_as_a_repository_s_identity_holds_that_repository_only() -> None:
    scopes = TeamScopes.parse("project:api@gitlab.com/acme")
    assert scopes.holds("project:api@gitlab.com/acme") and scopes.holds("project:api@gitlab.com/acme/workspace:x")
    assert not scopes.holds("project:api@gitlab.com/acme/sub")  # a subgroup's repository is another project
    assert not scopes.holds("project:api@github.com/evil") and not scopes.holds("project:api")
    assert not TeamScopes.parse("project:api").holds("project:api@github.com/evil")  # a bare name: only itself


def test_a_team_store_without_team_scopes_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="team_scopes is empty"):
        Settings(home=tmp_path, team_store="s3://bucket/team")


def test_the_guard_masks_every_text_field() -> None:
    guard = team_guard(PrivacySanitizer(()))
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    b = Bullet(
        id="b_1",
        content=f"push with {key}",
        section=Section.COMMANDS,
        knowledge_type=KnowledgeType.METHOD,
        instructivity_score=50.0,
        confidence=1.0,
        source="manual",
        scope="project:shared",
        created_at=T0,
        updated_at=T0,
        origin=key,
    )
    masked = guard(b)
    assert key not in masked.content and key not in masked.origin


def test_keyword_candidates_come_from_the_copy_so_a_keyword_only_recall_works_with_the_server_stopped(
    tmp_path: Path, embedder: Embedder
) -> None:
    server = S3Server().start()
    try:
        m = machine(team_settings(tmp_path / "a", server, server.bucket()), embedder)
        stored = m.remember(LESSON)
        m.remember("The web client's end-to-end tests run with `npm run e2e` against a local preview build")
    finally:
        server.stop()
    assert not team_of(m).sync()
    keywords_only = Memory(
        m.settings,
        m.store,
        ReadyEmbedder(None, "the model is away"),
        cwd=m.settings.home,
        repositories=GitRepositories(),
    )
    found = keywords_only.recall("make test-api redis")
    assert found.mode == "keyword-only"
    assert found.hits and found.hits[0].bullet.id == stored.bullet.id


def test_a_bare_team_scope_keeps_the_team_s_rows_and_the_repository_says_which_scope_to_share(
    tmp_path: Path, s3: S3Server, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: moving old bullets to a repository's identity never moves the team's rows (one member's
    machine cannot say which `api` the team meant), and says what to write in team_scopes."""
    import subprocess

    home = tmp_path / "user"
    monkeypatch.setenv("HOME", str(home))
    repo = tmp_path / "src" / "api"
    repo.mkdir(parents=True)
    for args in (
        ["init", "-q"],
        ["commit", "-q", "--allow-empty", "-m", "x"],
        ["remote", "add", "origin", "git@github.com:acme/api"],
    ):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=repo, check=True)
    folder = home / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(json.dumps({"type": "user", "cwd": str(repo), "message": {}}) + "\n")
    settings = team_settings(tmp_path / "memx", s3, s3.bucket(), scope="", team_scopes="project:api")
    before = machine(settings, embedder)  # in its data folder: outside any repository
    shared = before.remember(LESSON, scope="project:api", origin="session:s1 · claude-code").bullet
    assert routed(before).team is not None and routed(before).team.get([shared.id])  # type: ignore[union-attr]

    store = open_store(settings)
    assert isinstance(store, RoutedStore)
    OPEN.append(store)
    here = Memory(
        settings, store, ReadyEmbedder(embedder), clock=Clock(), cwd=repo, teams=store, repositories=GitRepositories()
    )
    why = here.scope_reason()
    assert str(here.current_scope().project_scope()) == "project:api@github.com/acme"
    assert here.store.get([shared.id])[0].scope == "project:api"  # the team's row stays where the team put it
    assert "team_scopes lists project:api, a bare name" in why and "project:api@github.com/acme" in why
    mine = here.remember("Start redis with make redis-up before the API tests").bullet
    assert mine.scope == "project:api@github.com/acme" and not store.team.get([mine.id])  # type: ignore[union-attr]
