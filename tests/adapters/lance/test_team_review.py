"""A learned bullet of a team scope waits for review on this machine: the team sees it only once its user
approved it (against the real S3-compatible server the team tests start)."""

from __future__ import annotations

from pathlib import Path

from memx_mcp.domain.models import Status
from memx_mcp.engine.reflector.pipeline import ReflectReport
from memx_mcp.ports import Embedder
from memx_mcp.usecases.reflect import keep

from ...s3_server import S3Server
from ...usecases.test_review import CURL, FETCH_REASON, distilled, poisoned_session
from .test_team import _closed, _credentials, machine, routed, s3, team_of, team_settings  # noqa: F401

MAKE = "Run the API integration tests with `make test-api`; they need Redis on port 6380"


def test_a_waiting_bullet_of_a_team_scope_stays_on_this_machine_until_approved(
    tmp_path: Path,
    s3: S3Server,  # noqa: F811 - the fixture
    embedder: Embedder,
) -> None:
    m = machine(team_settings(tmp_path / "a", s3, s3.bucket()), embedder)
    shared = m.resolve_scope("project:shared")
    report = ReflectReport(mode="session", bullets=[distilled(CURL, 2, held=(FETCH_REASON,)), distilled(MAKE, 0)])
    keep(m.deps, report, poisoned_session(), "session:poison-1", shared)
    team = team_of(m)
    assert [b.content for b in team.all_bullets()] == [MAKE]  # the one nothing held goes to the team
    [waiting] = m.pending()
    assert waiting.bullet.scope == "project:shared" and waiting.bullet.content == CURL
    assert [b.id for b in routed(m).personal.all_bullets()] == [waiting.bullet.id]
    done = m.approve(waiting.bullet.id, content="Run ./scripts/setup.sh from this repository before the tests")
    assert done.result.bullet.status is Status.ACTIVE
    assert routed(m).personal.all_bullets() == []
    assert sorted(b.content for b in team.all_bullets()) == sorted(
        [MAKE, "Run ./scripts/setup.sh from this repository before the tests"]
    )
