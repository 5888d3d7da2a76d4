"""End to end: the real memx-mcp process driven by the SDK's stdio client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .helpers import env_for, script


async def _session(home: Path, cwd: Path, steps: Any, **env: str) -> Any:
    cmd = script("memx-mcp")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(home, **env), cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        return await steps(session, init)


def run(home: Path, cwd: Path, steps: Any, **env: str) -> Any:
    return anyio.run(lambda: _session(home, cwd, steps, **env))


def test_the_four_tools_remember_recall_merge_and_forget_over_stdio(tmp_path: Path) -> None:
    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"instructions": init.instructions}
        tools = {t.name: t for t in (await s.list_tools()).tools}
        out["tools"] = tools
        for text in (
            "Use pytest -n auto (pytest-xdist) to run the suite in parallel",
            "Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10",
            "Prefer ruff format over black in this repository",
        ):
            r = await s.call_tool("remember", {"text": text})
            assert not r.is_error, r.content
        out["recall"] = await s.call_tool("recall", {"query": "make the tests run faster"})
        out["dup"] = await s.call_tool(
            "remember", {"text": "Run the suite in parallel with pytest -n auto; it needs pytest-xdist"}
        )
        victim = out["recall"].structured_content["results"][0]["id"]
        out["forget"] = await s.call_tool("forget", {"ids": [victim]})
        out["after"] = await s.call_tool("recall", {"query": "make the tests run faster"})
        out["empty"] = await s.call_tool("recall", {"query": "   "})
        out["conflicts"] = await s.call_tool("list_conflicts", {})
        return out

    out = run(tmp_path / "home", tmp_path, steps)
    assert "recall" in out["instructions"] and "remember" in out["instructions"]
    tools = out["tools"]
    assert {"remember", "recall", "list_conflicts", "forget"} <= set(tools)
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["list_conflicts"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["remember"].input_schema["properties"]["text"]["maxLength"] == 4000
    assert all(tools[n].output_schema for n in ("remember", "recall", "list_conflicts", "forget"))

    recall = out["recall"].structured_content
    assert recall["mode"] == "hybrid"
    top = recall["results"][0]
    assert top["content"].startswith("Use pytest -n auto")
    assert set(top["score"]) >= {"l1", "l2", "l3", "semantic", "decay", "recency", "scope", "final"}
    assert "pytest -n auto" in out["recall"].content[0].text

    assert out["dup"].structured_content["action"] == "merged"
    assert out["dup"].structured_content["merged_into"] == top["id"]
    assert out["forget"].structured_content["archived"] == [top["id"]]
    assert all(r["id"] != top["id"] for r in out["after"].structured_content["results"])
    assert out["empty"].is_error and "empty" in out["empty"].content[0].text
    assert out["conflicts"].structured_content == {"conflicts": []}


def test_without_the_model_recall_answers_keyword_only_over_stdio(tmp_path: Path) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()

    async def steps(s: ClientSession, init: Any) -> Any:
        await s.call_tool("remember", {"text": "Use pytest -n auto to run the suite in parallel"})
        return await s.call_tool("recall", {"query": "pytest parallel"})

    r = run(tmp_path / "home", tmp_path, steps, MEMX_MODEL_PATH=str(empty))
    assert not r.is_error
    assert r.structured_content["mode"] == "keyword-only"
    assert r.structured_content["results"][0]["content"].startswith("Use pytest")
    assert any("keyword-only" in n for n in r.structured_content["notes"])


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("recall", {"query": "x", "scope": "team:a"}, "invalid scope"),
        ("forget", {"ids": ["b_nope"]}, "no bullet"),
        ("forget", {}, "give ids"),
        ("remember", {"text": "x" * 4001}, "4000"),
    ],
)
def test_bad_input_is_a_tool_error_and_the_server_stays_up(
    tmp_path: Path, tool: str, args: dict[str, Any], message: str
) -> None:
    async def steps(s: ClientSession, init: Any) -> tuple[Any, Any]:
        bad = await s.call_tool(tool, args)
        ok = await s.call_tool("list_conflicts", {})
        return bad, ok

    bad, ok = run(tmp_path / "home", tmp_path, steps)
    assert bad.is_error and message in bad.content[0].text
    assert "Traceback" not in bad.content[0].text
    assert not ok.is_error


def test_nothing_but_protocol_reaches_stdout(tmp_path: Path) -> None:
    import json
    import subprocess

    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"text": "Use uv pip compile to pin requirements"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "pin requirements"}},
        },
    ]
    cmd = script("memx-mcp")
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env_for(tmp_path / "home", MEMX_LOG_LEVEL="DEBUG"),
        cwd=tmp_path,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    for request in requests:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        if "id" in request:
            answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    rest = proc.stdout.read()
    proc.wait(60)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines() if line.strip())
    assert answers[2]["result"]["structuredContent"]["results"][0]["content"].startswith("Use uv pip compile")


def test_resolve_conflict_over_stdio(tmp_path: Path) -> None:
    async def steps(s: ClientSession, init: Any) -> tuple[Any, Any, Any]:
        await s.call_tool("remember", {"text": "A Redis pool of 10 connections is enough"})
        await s.call_tool("remember", {"text": "Redis is only stable with a pool of 50 connections or more"})
        listed = await s.call_tool("list_conflicts", {})
        cid = listed.structured_content["conflicts"][0]["id"]
        done = await s.call_tool("resolve_conflict", {"conflict_id": cid, "keep": "merge"})
        after = await s.call_tool("list_conflicts", {})
        return listed, done, after

    listed, done, after = run(tmp_path / "home", tmp_path, steps)
    assert listed.structured_content["conflicts"][0]["kind"] == "contradiction"
    assert not done.is_error and "10" in done.structured_content["merged"]["content"]
    assert after.structured_content == {"conflicts": []}
