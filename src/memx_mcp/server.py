"""The MCP server: thin tools over Memory, served on stdio.

Start-up stays light (only ``mcp`` and pydantic are imported here): the store opens and the model loads
on a background thread, so ``initialize`` is answered at once and the first tool call waits if needed."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from . import __version__, render
from .config import Settings, load_settings
from .errors import MemxError
from .schemas import ConflictsOut, ForgetOut, RecallOut, ReflectOut, RememberOut, ResolveOut

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger("memx_mcp.server")
M = TypeVar("M", bound=BaseModel)

INSTRUCTIONS = """memx is your long-term memory across sessions and projects.
- Call `recall` at the start of a task, before debugging an error, and before choosing a command, tool or
  configuration value: the project may already know the answer, a pitfall, or the user's preference.
- Call `remember` after you solved something non-obvious (an error and its fix, a command or flag that
  worked, a config value that had to change, a convention or preference the user stated). Write one
  concise, self-contained bullet: "When X, do Y, because Z", with commands and identifiers verbatim.
  Never include secrets; memx masks them anyway.
- If `remember` reports a conflict, tell the user; `list_conflicts` shows contradictions to resolve.
- `forget` archives bullets that turned out to be wrong.
Resources: memx://stats, memx://conflicts, memx://scope/current, memx://bullets/{id}. Prompt: recap."""


class MemoryHandle:
    """Opens Memory on a background thread so that start-up never waits for LanceDB or the model."""

    def __init__(self, settings: Settings, cwd: Path) -> None:
        self._settings = settings
        self._cwd = cwd
        self._ready = threading.Event()
        self._memory: Memory | None = None
        self._error: BaseException | None = None
        self._started = False

    def start(self) -> None:
        if not self._started:
            self._started = True
            threading.Thread(target=self._open, name="memx-open", daemon=True).start()

    def _open(self) -> None:
        try:
            from .compose import open_memory

            self._memory = open_memory(self._settings, cwd=self._cwd, defer_reinforcement=True, warm=True)
        except BaseException as exc:
            self._error = exc
            if not sys.is_finalizing():  # stdin closed during start-up: nothing to report
                log.error("cannot open the memory store: %s", exc)
        finally:
            self._ready.set()

    def get(self) -> Memory:
        self.start()
        self._ready.wait()
        if self._memory is None:
            raise MemxError(f"the memory store could not be opened: {self._error}")
        return self._memory


def _result(model: M, text: Callable[[M], str]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text(model))], structured_content=model.model_dump(mode="json")
    )


async def _run(handle: MemoryHandle, action: Callable[[Memory], CallToolResult]) -> CallToolResult:
    """Run a Memory call off the event loop; MemxError becomes a tool error a person can act on."""

    def call() -> CallToolResult:
        return action(handle.get())

    try:
        return await anyio.to_thread.run_sync(call)
    except MemxError as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        log.exception("tool failed")
        raise ToolError(f"internal error ({type(exc).__name__}); see the server log on stderr") from exc


Scope = Annotated[
    str | None,
    Field(
        default=None,
        max_length=300,
        description="global, project:NAME, project:NAME/workspace:NAME or workspace:NAME; default: detected",
    ),
]


def build_server(settings: Settings, cwd: Path | None = None) -> MCPServer[Any]:
    handle = MemoryHandle(settings, cwd or Path.cwd())

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[MemoryHandle]:
        handle.start()
        yield handle

    server: MCPServer[Any] = MCPServer(
        name="memx",
        title="memx long-term memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
    )

    from .resources import register

    register(server, handle)

    @server.tool(
        name="remember",
        title="Remember a piece of knowledge",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    async def remember(
        text: Annotated[str, Field(min_length=1, max_length=4000, description="one concise, self-contained bullet")],
        scope: Scope = None,
        tags: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=20)] | None = None,
    ) -> Annotated[CallToolResult, RememberOut]:
        """Store one piece of knowledge worth keeping across sessions (an error and its fix, a command that
        worked, a config value, a convention or preference). Near-duplicates are merged; possible
        contradictions are reported. Goes to the current project unless a scope is given."""
        return await _run(
            handle,
            lambda m: _result(RememberOut.of(m.remember(text, scope=scope, tags=tags or ())), render.remember_text),
        )

    @server.tool(
        name="recall",
        title="Recall relevant knowledge",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    async def recall(
        query: Annotated[
            str, Field(min_length=1, max_length=2000, description="what you are about to do or the error")
        ],
        scope: Scope = None,
        max_results: Annotated[int | None, Field(description="default 5, at most 50")] = None,
        token_budget: Annotated[int | None, Field(description="default 2000 tokens")] = None,
    ) -> Annotated[CallToolResult, RecallOut]:
        """Find what memx knows that is relevant to a task, an error or a question, in the current scope
        and the scopes above it (workspace → project → global). Each result has its score breakdown."""
        return await _run(
            handle,
            lambda m: _result(
                RecallOut.of(m.recall(query, scope=scope, max_results=max_results, token_budget=token_budget)),
                render.recall_text,
            ),
        )

    @server.tool(
        name="list_conflicts",
        title="List contradicting memories",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    async def list_conflicts(
        scope: Scope = None,
        include_overlaps: Annotated[bool, Field(description="also similar pairs with no contradiction")] = False,
    ) -> Annotated[CallToolResult, ConflictsOut]:
        """Open conflicts between bullets in the visible scopes, contradictions first, each with its
        evidence and a recommendation of which side to keep."""
        from .schemas import ConflictOut

        return await _run(
            handle,
            lambda m: _result(
                ConflictsOut(conflicts=[ConflictOut.of(v) for v in m.list_conflicts(scope, include_overlaps)]),
                render.conflicts_text,
            ),
        )

    @server.tool(
        name="forget",
        title="Forget bullets",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    )
    async def forget(
        ids: Annotated[list[Annotated[str, Field(max_length=100)]], Field(max_length=200)] | None = None,
        query: Annotated[str | None, Field(max_length=2000, description="forget what recall returns")] = None,
        confirm: Annotated[bool, Field(description="required to apply a query-based forget")] = False,
        purge: Annotated[bool, Field(description="erase instead of archive")] = False,
        scope: Scope = None,
    ) -> Annotated[CallToolResult, ForgetOut]:
        """Archive bullets that are wrong or obsolete, by id, or by query (confirm=true to apply; without
        it the matching ids are only listed). Archived bullets leave recall; purge erases them."""
        if not ids and not query:
            raise ToolError("give ids, or a query")

        def act(m: Memory) -> CallToolResult:
            done = m.forget(ids, purge=purge) if ids else m.forget_matching(query or "", scope=scope, confirm=confirm)
            return _result(ForgetOut.of(done), render.forget_text)

        return await _run(handle, act)

    @server.tool(
        name="resolve_conflict",
        title="Resolve a conflict",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )
    async def resolve_conflict(
        conflict_id: Annotated[str, Field(min_length=1, max_length=100)],
        keep: Annotated[Literal["a", "b", "both", "merge"], Field(description="a, b, both, or merge into a")],
    ) -> Annotated[CallToolResult, ResolveOut]:
        """Settle a conflict from list_conflicts: keep side a or b (the other is archived), keep both, or
        merge both into one bullet. Ask the user when the recommendation is not clear."""

        def act(m: Memory) -> CallToolResult:
            from .maintenance import resolve_conflict as resolve
            from .schemas import BulletOut

            conflict, merged = resolve(m, conflict_id, keep)
            out = ResolveOut(conflict_id=conflict.id, kept=keep, merged=BulletOut.of(merged) if merged else None)
            return _result(out, lambda o: f"Resolved {o.conflict_id}: kept {o.kept}.")

        return await _run(handle, act)

    @server.tool(
        name="reflect",
        title="Learn from a session transcript",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    )
    async def reflect(
        ctx: Context[Any, Any],
        transcript: Annotated[str | None, Field(max_length=5_000_000, description="the transcript text")] = None,
        path: Annotated[
            str | None, Field(max_length=4096, description="a transcript file under your home or temp folder")
        ] = None,
        mode: Annotated[Literal["rules", "hybrid", "llm"] | None, Field(description="default hybrid")] = None,
        dry_run: Annotated[bool, Field(description="only show what would be kept")] = False,
        scope: Scope = None,
    ) -> Annotated[CallToolResult, ReflectOut]:
        """Distill the knowledge worth keeping from a coding-session transcript (Claude Code or Codex CLI
        JSONL, Aider / SpecStory / session-export markdown, a JSON message list, or text): errors and their
        fixes, config changes, new tools, repeated commands. Secrets are masked first. Reflecting the same
        session again only adds what is new."""
        if bool(transcript) == bool(path):
            raise ToolError("give either transcript text or a path")
        loop_token = anyio.lowlevel.current_token()

        def report(done: int, total: int) -> None:
            anyio.from_thread.run(ctx.report_progress, done, total, None, token=loop_token)

        def act(m: Memory) -> CallToolResult:
            from .reflect import allowed_path, read_transcript
            from .reflect import reflect as run_reflect

            file = allowed_path(path, m.cwd) if path else None
            text = read_transcript(file) if file else transcript or ""
            done = run_reflect(m, text, path=file, mode=mode, dry_run=dry_run, scope=scope, progress=report)
            return _result(ReflectOut.of(done), render.reflect_text)

        return await _run(handle, act)

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="memx-mcp", description="memx MCP server (stdio).")
    parser.add_argument("--home", help="data folder (default: MEMX_HOME or the per-user data folder)")
    parser.add_argument("--version", action="version", version=f"memx-mcp {__version__}")
    args = parser.parse_args(argv)
    from .compose import configure_logging, private_files
    from .native import small_heap

    small_heap()  # before LanceDB's and onnxruntime's threads start

    try:
        settings = load_settings(home=args.home)
    except MemxError as exc:
        parser.exit(2, f"memx-mcp: {exc}\n")
    configure_logging(settings)
    private_files()
    build_server(settings).run("stdio")


if __name__ == "__main__":
    main()
