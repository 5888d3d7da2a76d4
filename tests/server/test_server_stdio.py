"""End to end: the real memx-mcp process driven by the SDK's stdio client."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder

from ..conftest import MODEL
from ..helpers import env_for, script


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
        # a forget by query with purge erases, as it says (it archived, silently, before the ninth round)
        out["purge"] = await s.call_tool("forget", {"query": "ruff format", "confirm": True, "purge": True})
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

    purge = out["purge"].structured_content
    assert len(purge["purged"]) == 1 and purge["archived"] == [], purge

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
    assert out["conflicts"].structured_content == {"conflicts": [], "hidden_overlaps": 0}


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


@pytest.fixture(scope="module")
def one_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, ClientSession]]:
    """One memx-mcp process for the module's bad inputs, driven from a thread of its own: each test sends
    its input to the server the tests before it sent theirs to, which must still answer."""
    home = tmp_path_factory.mktemp("one-server") / "home"
    cmd = script("memx-mcp")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(home), cwd=str(home.parent))
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
        portal.wrap_async_context_manager(ClientSession(read, write)) as session,
    ):
        portal.call(session.initialize)
        yield portal, session


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
    one_server: tuple[BlockingPortal, ClientSession], tool: str, args: dict[str, Any], message: str
) -> None:
    portal, session = one_server
    bad = portal.call(session.call_tool, tool, args)
    ok = portal.call(session.call_tool, "list_conflicts", {})
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
    assert after.structured_content == {"conflicts": [], "hidden_overlaps": 0}


def test_resources_and_the_recap_prompt_over_stdio(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        r = await s.call_tool(
            "remember", {"text": "Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10"}
        )
        bullet_id = r.structured_content["bullet"]["id"]
        out["resources"] = {str(x.uri) for x in (await s.list_resources()).resources}
        out["templates"] = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
        for uri in ("memx://stats", f"memx://bullets/{bullet_id}", "memx://conflicts", "memx://scope/current"):
            (content,) = (await s.read_resource(uri)).contents
            out[uri.split("/")[2] if "bullets" not in uri else "bullet"] = json.loads(content.text)
        try:
            await s.read_resource("memx://bullets/b_nope")
        except MCPError as exc:
            out["missing"] = str(exc)
        out["prompts"] = {p.name for p in (await s.list_prompts()).prompts}
        out["recap"] = await s.get_prompt("recap", {})
        out["topic"] = await s.get_prompt("recap", {"topic": "redis"})
        out["id"] = bullet_id
        return out

    out = run(tmp_path / "home", tmp_path, steps)
    assert out["resources"] >= {"memx://stats", "memx://conflicts", "memx://scope/current"}
    assert out["templates"] == {"memx://bullets/{bullet_id}"}
    assert out["stats"]["active"] == 1 and out["stats"]["decay_histogram"]["protected (new)"] == 1
    assert out["bullet"]["id"] == out["id"] and out["bullet"]["decay_weight"] == 1.0
    assert out["conflicts"] == {"conflicts": [], "hidden_overlaps": 0}
    assert out["scope"]["bullets"][0]["id"] == out["id"]
    assert "no bullet 'b_nope'" in out["missing"]
    assert out["prompts"] == {"recap"}
    text = out["recap"].messages[0].content.text
    assert "MAX_POOL_SIZE=50" in text and "Summarise" in text
    assert "MAX_POOL_SIZE=50" in out["topic"].messages[0].content.text


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


@pytest.mark.skipif(shutil.which("npx") is None, reason="the MCP Inspector needs npx")
def test_the_mcp_inspector_cli_lists_tools_and_resources_and_calls_recall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = script("memx-mcp")

    def inspect(*args: str) -> Any:
        done = subprocess.run(
            ["npx", "-y", INSPECTOR, "--cli", *server, "--home", str(home), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env_for(home),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    listed = inspect("--method", "tools/list")["tools"]
    tools = {t["name"] for t in listed}
    assert {"remember", "recall", "list_conflicts", "forget", "resolve_conflict", "reflect"} <= tools
    resources = inspect("--method", "resources/list")["resources"]
    assert "memx://stats" in {r["uri"] for r in resources}
    # what every client shows and the model reads: one paragraph, not the source's line breaks and indentation
    for described in (*listed, *resources):
        text = described["description"]
        assert text and "\n" not in text and "  " not in text and text == text.strip(), described["name"]
    stored = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"
    inspect("--method", "tools/call", "--tool-name", "remember", "--tool-arg", f"text={stored}")
    found = inspect("--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=make the tests faster")
    assert found["structuredContent"]["results"][0]["content"] == stored


def _remember(home: Path, text: str, embedder: Embedder) -> None:
    """A store holding ``text`` before the server starts (made here: real store, real model)."""
    store = LanceStore(home / "store", MODEL, 384)
    Memory(Settings(home=home), store, ReadyEmbedder(embedder), cwd=home.parent).remember(text, scope="global")


def test_a_server_started_while_another_process_writes_answers_and_writes_once_the_lock_is_free(
    tmp_path: Path, embedder: Embedder
) -> None:
    from contextlib import ExitStack

    from ..adapters.lance.test_integrity import hold_write_lock

    home = tmp_path / "home"
    _remember(home, "Use pytest -n auto to run the suite in parallel", embedder)
    lock = ExitStack()
    lock.enter_context(hold_write_lock(home / "store"))  # as an 8,000-record import does for ~100 s

    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out = {"recall": await s.call_tool("recall", {"query": "run the tests in parallel", "scope": "global"})}
        out["busy"] = await s.call_tool("remember", {"text": "Prefer ruff over black", "scope": "global"})
        lock.close()  # the import is done
        out["after"] = await s.call_tool("remember", {"text": "Prefer ruff over black", "scope": "global"})
        return out

    try:
        out = run(home, tmp_path, steps, MEMX_LOCK_WAIT_SECONDS="2")
    finally:
        lock.close()
    assert not out["recall"].is_error, out["recall"].content
    assert out["recall"].structured_content["results"][0]["content"].startswith("Use pytest -n auto")
    assert out["busy"].is_error and "the store is busy" in out["busy"].content[0].text
    assert not out["after"].is_error, out["after"].content
    assert out["after"].structured_content["action"] == "inserted"


def test_a_store_that_failed_to_open_is_opened_again_by_the_next_call_after_a_repair(
    tmp_path: Path, embedder: Embedder
) -> None:
    home = tmp_path / "home"
    _remember(home, "Use pytest -n auto to run the suite in parallel", embedder)
    (home / "store" / "meta.json").unlink()

    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out = {"damaged": await s.call_tool("recall", {"query": "run the tests in parallel", "scope": "global"})}
        repaired = await anyio.run_process([*script("memx"), "--home", str(home), "repair"], env=env_for(home))
        assert repaired.returncode == 0, repaired.stderr
        out["after"] = await s.call_tool("recall", {"query": "run the tests in parallel", "scope": "global"})
        return out

    out = run(home, tmp_path, steps)
    assert out["damaged"].is_error and "is damaged" in out["damaged"].content[0].text
    assert "memx repair" in out["damaged"].content[0].text
    assert not out["after"].is_error, out["after"].content
    assert out["after"].structured_content["results"][0]["content"].startswith("Use pytest -n auto")


TRANSCRIPT = "\n".join(
    json.dumps({"type": t, "message": {"role": t, "content": c}})
    for t, c in (
        ("user", "the tests are slow, make them faster"),
        ("assistant", "Run pytest -n auto (pytest-xdist) to spread the suite over every core."),
    )
)


def test_a_server_started_in_the_root_reflects_only_session_folders(tmp_path: Path) -> None:
    user = tmp_path / "user"
    places = {
        "ssh": user / ".ssh" / "session.jsonl",
        "home": user / "session.jsonl",
        "env": user / ".claude" / "projects" / "app" / ".env",
        "session": user / ".claude" / "projects" / "-srv-app" / "s1.jsonl",
    }
    for path in places.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TRANSCRIPT)

    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out = {}
        for name, path in [*places.items(), ("passwd", Path("/etc/passwd"))]:
            out[name] = await s.call_tool("reflect", {"path": str(path), "mode": "rules", "dry_run": True})
        return out

    out = run(tmp_path / "home", Path("/"), steps, HOME=str(user))
    for name in ("ssh", "home", "env", "passwd"):
        assert out[name].is_error, name
    assert "credential" in out["ssh"].content[0].text and "credential" in out["env"].content[0].text
    assert "session folders" in out["home"].content[0].text and "session folders" in out["passwd"].content[0].text
    assert not out["session"].is_error, out["session"].content[0].text
    assert out["session"].structured_content["steps"] >= 2


def test_tool_argument_errors_are_plain_sentences_and_recap_says_why(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async def steps(s: ClientSession, init: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "long": await s.call_tool("remember", {"text": "x" * 5000}),
            "keep": await s.call_tool("resolve_conflict", {"conflict_id": "c_x", "keep": "everything"}),
            "tags": await s.call_tool("remember", {"text": "ok", "tags": [5]}),
        }
        try:
            await s.get_prompt("recap", {"topic": "t" * 2_000_000})
        except MCPError as exc:
            out["recap"] = str(exc)
        return out

    out = run(tmp_path / "home", tmp_path, steps)
    for name in ("long", "keep", "tags"):
        text = out[name].content[0].text
        assert out[name].is_error and "https://" not in text and "input_value" not in text and "type=" not in text
    assert "text: String should have at most 4000 characters" in out["long"].content[0].text
    assert "keep: Input should be 'a', 'b', 'both' or 'merge'" in out["keep"].content[0].text
    assert "tags.0:" in out["tags"].content[0].text
    assert "2000000 characters" in out["recap"] and "2000" in out["recap"]
