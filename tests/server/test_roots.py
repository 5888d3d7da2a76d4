"""A server started outside any repository learns the project from the client's roots (Claude Desktop starts
servers in `/`): it stores and recalls in that root's project, and follows the client when roots change."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from memx_mcp.adapters.git import detect_scope
from memx_mcp.server.roots import folder_of

from ..helpers import env_for, script


def _repo(folder: Path, name: str) -> Path:
    repo = folder / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def test_only_local_folders_count_as_roots(tmp_path: Path) -> None:
    assert folder_of(tmp_path.as_uri()) == tmp_path
    assert folder_of("https://example.com/repo") is None
    assert folder_of((tmp_path / "missing").as_uri()) is None


def test_a_server_outside_any_repository_works_in_the_clients_root(tmp_path: Path) -> None:
    shop, blog = _repo(tmp_path, "shop"), _repo(tmp_path, "blog")
    outside = tmp_path / "nowhere"
    outside.mkdir()
    roots = [shop]

    async def list_roots(_: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=r.as_uri(), name=r.name) for r in roots])  # type: ignore[arg-type]

    async def steps() -> dict[str, Any]:
        cmd = script("memx-mcp")
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(tmp_path / "home"), cwd=str(outside))
        out: dict[str, Any] = {}
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, list_roots_callback=list_roots) as s,
        ):
            await s.initialize()
            out["remember"] = (
                await s.call_tool("remember", {"text": "Run make seed before the checkout tests"})
            ).structured_content
            out["recall"] = (await s.call_tool("recall", {"query": "checkout tests seed"})).structured_content
            scope = await s.read_resource("memx://scope/current")
            out["why"] = json.loads(scope.contents[0].text)["why"]  # type: ignore[union-attr]
            roots[0] = blog
            await s.send_roots_list_changed()
            out["after"] = (await s.call_tool("recall", {"query": "checkout tests seed"})).structured_content
        return out

    out = anyio.run(steps)
    shop_scope, blog_scope = (str(detect_scope(r).project_scope()) for r in (shop, blog))
    assert shop_scope.startswith("project:shop@path-")  # a repository without a commit: by its folder
    assert out["remember"]["bullet"]["scope"] == shop_scope
    assert out["recall"]["scope"] == shop_scope and out["recall"]["results"]
    assert "client's workspace root" in out["why"] and str(shop) in out["why"]
    # every answer says which scope and why, not only the resource
    assert out["remember"]["scope_why"].startswith(f"{shop_scope}:") and str(shop) in out["remember"]["scope_why"]
    assert "client's workspace root" in out["recall"]["scope_why"]
    assert "client's workspace root" in out["after"]["scope_why"] and str(blog) in out["after"]["scope_why"]
    assert out["after"]["scope"] == blog_scope and not out["after"]["results"]  # shop's bullet stays in shop
