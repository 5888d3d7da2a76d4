"""MCP beyond tools: resources a client can show or attach, and a prompt that recaps a project.

- ``memx://stats``: what the store holds (counts, decay histogram, model, size);
- ``memx://bullets/{bullet_id}``: one bullet in full, with its decay weight;
- ``memx://conflicts``: open contradictions of the current scope, with evidence;
- ``memx://scope/current``: the active bullets of the current scope and the scopes above it.
Every resource is JSON (the same shapes as the tools' structured output)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from ..domain.errors import MemxError, NotFoundError
from .described import described

if TYPE_CHECKING:
    from ..memory import Memory
    from .handle import MemoryHandle

T = TypeVar("T")
JSON = "application/json"
SCOPE_LIMIT = 200


def register(server: MCPServer[Any], handle: MemoryHandle) -> None:
    async def run(action: Callable[[Memory], T]) -> T:
        try:
            return await anyio.to_thread.run_sync(lambda: action(handle.get()))
        except NotFoundError as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except MemxError as exc:
            raise ResourceError(str(exc)) from exc

    @described(server.resource, "memx://stats", name="stats", title="memx statistics", mime_type=JSON)
    async def stats() -> str:
        """Counts by scope, section, type and status, the decay histogram, the model and the store size."""
        from ..presentation.schemas import StatsOut

        def read(m: Memory) -> str:
            full = m.store_stats()
            return StatsOut.of(full).model_dump_json(indent=2)

        return await run(read)

    @described(server.resource, "memx://bullets/{bullet_id}", name="bullet", title="One memx bullet", mime_type=JSON)
    async def bullet(bullet_id: str) -> str:
        """A bullet in full: content, classification, scope, dates, recall count and decay weight."""
        from ..presentation.schemas import BulletOut

        def read(m: Memory) -> str:
            b = m.show(bullet_id)
            return BulletOut.of(b, m.weight(b)).model_dump_json(indent=2)

        return await run(read)

    @described(server.resource, "memx://conflicts", name="conflicts", title="Open memx conflicts", mime_type=JSON)
    async def conflicts() -> str:
        """Open contradictions in the current scope, each with evidence and a recommendation."""
        from ..presentation.schemas import ConflictsOut

        return await run(
            lambda m: ConflictsOut.listing(m.list_conflicts(include_overlaps=True), False).model_dump_json(indent=2)
        )

    @described(
        server.resource,
        "memx://scope/current",
        name="current-scope",
        title="Bullets of the current scope",
        mime_type=JSON,
    )
    async def current_scope() -> str:
        """The active bullets visible in the current scope (workspace → project → global), newest first."""
        from ..presentation.schemas import BulletOut

        def read(m: Memory) -> str:
            scope = str(m.current_scope())
            bullets = m.list_bullets(scope=scope, limit=SCOPE_LIMIT)
            rows = [BulletOut.of(b, m.weight(b)).model_dump(mode="json") for b in bullets]
            out = {"scope": scope, "why": m.scope_reason(), "bullets": rows}
            return json.dumps(out, indent=2, ensure_ascii=False)

        return await run(read)

    @described(server.prompt, name="recap", title="Recap what memx knows about this project")
    async def recap(
        topic: Annotated[str | None, Field(description="narrow the recap to a topic (optional)")] = None,
    ) -> str:
        """A briefing on what memx has learned about the current project (or a topic in it): the most
        useful bullets, recent pitfalls and open contradictions, to read before starting work."""

        def build(m: Memory) -> str:
            if topic and topic.strip():
                hits = m.recall(topic, max_results=10, reinforce=False).hits
                known = "\n".join(f"- {h.bullet.content}" for h in hits)
            else:
                known, _ = m.session_context(1500)
            scope = m.current_scope()
            if not known:
                return f"memx knows nothing yet about {scope}" + (f" on {topic!r}" if topic else "") + "."
            return (
                f"Here is what memx (long-term memory) knows about {scope}"
                + (f" on {topic!r}" if topic else "")
                + ":\n\n"
                + known
                + "\n\nSummarise what matters for the work ahead in a few lines, point out anything that looks "
                "outdated or contradictory, and keep it in mind. Use `recall` for details."
            )

        try:
            return await run(build)
        except ResourceError as exc:  # a prompt's failure reaches the client only as an MCPError
            raise MCPError(INVALID_PARAMS, f"recap: {exc}") from exc
