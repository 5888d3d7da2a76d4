"""Trying a client's memx entry the way the client will: start the configured server command with its
environment and ask it over MCP for ``initialize`` and ``tools/list``; run a configured hook command through
the shell once for each event it is hooked to, with a payload of the client's documented shape for that
event (the client's module in the registry has one; others get a payload memx ignores), and check that what
it prints is what the client reads (JSON of the right shape where the client wants JSON). What ``memx
doctor`` reports as FAIL when a configuration cannot work, instead of OK because the entry merely exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..clients import accepts, client
from .clients import FAIL_OPEN, Configured

TOOLS = ("remember", "recall")  # what a working memx server lists, at the least
PROBE_EVENT = '{"hook_event_name": "MemxDoctorProbe", "session_id": "memx-doctor"}'
PROBE_NOTIFICATION = '{"type": "memx-doctor-probe", "thread-id": "memx-doctor"}'  # Codex's notify: an argument


@dataclass(frozen=True)
class Probe:
    ok: bool
    detail: str


def _server_env(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **extra}


async def _list_tools(command: tuple[str, ...], env: dict[str, str], cwd: Path) -> list[str]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env, cwd=str(cwd))
    with open(os.devnull, "w") as quiet:  # the server's log lines are not the doctor's output
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]


def probe_server(entry: Configured, cwd: Path, timeout: float = 60.0) -> Probe:
    """Start the entry's server and list its tools, within ``timeout`` seconds."""
    import anyio

    async def probe() -> list[str]:
        with anyio.fail_after(timeout):
            return await _list_tools(entry.command, _server_env(entry.env), cwd)

    try:
        names = anyio.run(probe)
    except TimeoutError:
        return Probe(False, f"`{' '.join(entry.command)}` did not answer initialize and tools/list in {timeout:.0f} s")
    except Exception as exc:  # cannot start, exits, or speaks no MCP: all the same to the user
        reason = str(exc) or type(exc).__name__
        return Probe(False, f"`{' '.join(entry.command)}` does not start an MCP server ({reason})")
    missing = [t for t in TOOLS if t not in names]
    if missing:
        return Probe(False, f"`{' '.join(entry.command)}` answered without memx's tools ({', '.join(missing)})")
    return Probe(True, f"`{' '.join(entry.command)}` answered with {len(names)} tools")


def _payload(entry: Configured, event: str, cwd: Path) -> str:
    """The payload the client would send for ``event``: its module's sample with this folder as the
    working directory, or one memx ignores."""
    hook = client(entry.client).hook(event)
    if hook is None or not hook.sample:
        return PROBE_NOTIFICATION if entry.command else PROBE_EVENT
    sample = dict(hook.sample)
    for key in ("cwd", "workspace_roots"):
        if key in sample:
            sample[key] = [str(cwd)] if key == "workspace_roots" else str(cwd)
    return json.dumps(sample)


def _run_once(entry: Configured, event: str, cwd: Path, timeout: float) -> Probe:
    command = entry.hook.removesuffix(FAIL_OPEN)
    payload = _payload(entry, event, cwd)
    if entry.command:
        argv, stdin = [*entry.command, payload], ""
    else:
        argv = ["cmd", "/c", command] if sys.platform.startswith("win") else ["/bin/sh", "-c", command]
        stdin = payload
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False)
    except subprocess.TimeoutExpired:
        return Probe(False, f"`{command}` did not finish in {timeout:.0f} s")
    except OSError as exc:
        return Probe(False, f"`{command}` cannot run ({exc})")
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return Probe(False, f"`{command}` exited {done.returncode}" + (f": {said[-1]}" if said else ""))
    hook = client(entry.client).hook(event)
    problem = accepts(hook.output, event, done.stdout) if hook is not None else ""
    return Probe(not problem, f"`{command}`: {problem}" if problem else f"`{command}` runs")


def probe_hook(entry: Configured, cwd: Path, timeout: float = 60.0) -> Probe:
    """Run the hook command as the client does (a shell; Codex's notify: the program itself, with the
    notification as its last argument), without the part that makes it fail open, once per event."""
    ran: list[str] = []
    for event in entry.events or ("",):
        probe = _run_once(entry, event, cwd, timeout)
        if not probe.ok:
            return probe
        ran.append(event)
    command = entry.hook.removesuffix(FAIL_OPEN)
    said = f" for {', '.join(e for e in ran if e)}" if any(ran) else ""
    return Probe(True, f"`{command}` runs{said}, its output as the client reads it")
