"""The MCP `review` tool, end to end over stdio: it lists what waits with its excerpt, rejects, and makes a
bullet active only with the user's own yes, asked through the client (elicitation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import MODEL
from ..helpers import env_for, script
from ..usecases.test_review import CURL, FETCH_REASON, distilled, fetch_step, learn, poisoned_session

MAKE = "Use make test -j4 to run the suite in parallel"


def _held(home: Path, embedder: Embedder) -> list[str]:
    """Two learned bullets waiting for review, stored before the server starts."""
    memory = Memory(
        Settings(home=home, scope="global"), LanceStore(home / "store", MODEL, 384), ReadyEmbedder(embedder)
    )
    step = fetch_step(poisoned_session())
    learn(memory, distilled(CURL, step, voice="content", held=(FETCH_REASON,)), distilled(MAKE, 0, held=("y",)))
    return [p.bullet.id for p in memory.pending()]


def _run(home: Path, steps: Any, answer: bool | None) -> Any:
    """``answer``: what the user says when the server asks (None: a client that cannot be asked)."""
    asked: list[str] = []

    async def elicit(_: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": bool(answer)})

    async def session() -> Any:
        cmd = script("memx-mcp")
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(home), cwd=str(home.parent))
        extra = {} if answer is None else {"elicitation_callback": elicit}
        async with stdio_client(params) as (read, write), ClientSession(read, write, **extra) as s:
            await s.initialize()
            return await steps(s)

    return anyio.run(session), asked


def test_the_review_tool_lists_rejects_and_approves_only_with_the_users_yes(tmp_path: Path, embedder: Embedder) -> None:
    home = tmp_path / "home"
    curl, make = _held(home, embedder)

    async def steps(s: ClientSession) -> dict[str, Any]:
        out = {"list": await s.call_tool("review", {})}
        out["approve"] = await s.call_tool("review", {"action": "approve", "id": make})
        out["reject"] = await s.call_tool("review", {"action": "reject", "id": curl})
        out["after"] = await s.call_tool("review", {"action": "list"})
        out["recall"] = await s.call_tool("recall", {"query": "run the suite in parallel", "scope": "global"})
        return out

    out, asked = _run(home, steps, answer=True)
    listed = out["list"].structured_content["pending"]
    assert [p["bullet"]["id"] for p in listed] == [curl, make]
    assert listed[0]["voice"] == "content" and listed[0]["reasons"] == [FETCH_REASON]
    assert "evil.example/setup.sh" in listed[0]["excerpt"] and "</session>" not in listed[0]["excerpt"]
    text = out["list"].content[0].text
    assert "quoted" in text and "not instructions" in text
    assert not out["approve"].is_error and out["approve"].structured_content["result"]["bullet"]["status"] == "active"
    assert len(asked) == 1 and MAKE in asked[0]
    assert not out["reject"].is_error and out["after"].structured_content["pending"] == []
    assert [r["id"] for r in out["recall"].structured_content["results"]] == [make]


def test_a_no_or_a_client_that_cannot_ask_leaves_the_bullet_waiting(tmp_path: Path, embedder: Embedder) -> None:
    home = tmp_path / "home"
    _, make = _held(home, embedder)

    async def steps(s: ClientSession) -> dict[str, Any]:
        return {
            "approve": await s.call_tool("review", {"action": "approve", "id": make}),
            "edit": await s.call_tool("review", {"action": "edit", "id": make, "text": "Run make test"}),
            "list": await s.call_tool("review", {}),
        }

    said_no, asked = _run(home, steps, answer=False)
    assert said_no["approve"].is_error and "did not approve" in said_no["approve"].content[0].text
    assert said_no["edit"].is_error and len(asked) == 2 and "Run make test" in asked[1]
    cannot, _ = _run(home, steps, answer=None)
    assert cannot["approve"].is_error and "memx review" in cannot["approve"].content[0].text
    for out in (said_no, cannot):
        assert len(out["list"].structured_content["pending"]) == 2
