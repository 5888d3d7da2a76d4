"""Client configuration: ``memx install CLIENT`` writes memx's MCP server entry and hooks into the client's
own files at their real location on macOS, Linux and Windows, as the client's module in the registry
(``memx_mcp/clients/``) declares them. Every other entry is kept, a backup is written, the diff is shown,
and running it twice changes nothing. ``memx uninstall`` removes exactly what install added (a file that
install created goes away again).

The entry names a command that starts on this machine as it is (``launcher``): the installed script by its
absolute path, ``uvx --from SOURCE`` for a checkout run through uv, ``uvx memx-mcp`` only for a copy that
came from the package index; never a path inside uv's throw-away cache. Files a team shares (the project
scope) get no machine path at all, or a refusal that says why."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...clients import TOOL_MOMENTS, ConfigFile, Found, Moment, Wiring, client, names
from ...clients.claude_code import settings_path as claude_settings_path
from ...clients.claude_desktop import desktop_config
from ...domain.errors import InvalidInputError
from .common import FAIL_OPEN, MARKER, SERVER_NAME, Kind, Places
from .files import InstallResult, _load, apply, apply_toml, with_hooks, with_server
from .launch import Entry, Launcher, _portable, entry_for, ephemeral, hook_command, launcher

__all__ = [
    "FAIL_OPEN",
    "MARKER",
    "SERVER_NAME",
    "Configured",
    "Entry",
    "InstallResult",
    "Kind",
    "Launcher",
    "Places",
    "apply",
    "claude_settings_path",
    "clients",
    "configure",
    "configured",
    "configured_entries",
    "desktop_config",
    "entry_for",
    "ephemeral",
    "hook_command",
    "launcher",
    "title",
    "with_hooks",
    "with_server",
]


def clients() -> tuple[str, ...]:
    """The clients ``memx install`` knows: the registry's."""
    return names()


def title(name: str) -> str:
    return client(name).title


def _moments(reflect: bool, session_start: bool, prompt: bool, tool_hooks: bool) -> tuple[Moment, ...]:
    chosen: list[Moment] = ["session_end"] if reflect else []
    chosen += ["session_start"] if session_start else []
    chosen += ["prompt"] if prompt else []
    return (*chosen, *(TOOL_MOMENTS if tool_hooks else ()))


def _apply(file: ConfigFile, wiring: Wiring, dry_run: bool) -> InstallResult:
    if file.syntax == "toml":
        return apply_toml(file.path, lambda text: str(file.change(text, wiring, file.path)), dry_run)
    return apply(file.path, lambda data: dict(file.change(data, wiring, file.path)), dry_run)


def configure(
    name: str,
    scope: str,
    places: Places,
    *,
    install: bool = True,
    dry_run: bool = False,
    reflect: bool = True,
    session_start: bool = True,
    prompt: bool = True,
    tool_hooks: bool = True,
    home: Path | None = None,
    launch: Launcher | None = None,
) -> list[InstallResult]:
    """Install (or remove) memx in client ``name``: its server entry and the hooks of the moments chosen
    (``reflect``: the end of a session; ``session_start``, ``prompt``: context; ``tool_hooks``: before and
    after each tool call), as far as the client has them. ``home``: a data folder other than the default,
    which the entry then carries."""
    if scope not in ("user", "project"):
        raise InvalidInputError("--scope must be user or project")
    known = client(name)
    files = known.files(places, "user" if scope == "user" else "project")
    events = known.events(_moments(reflect, session_start, prompt, tool_hooks)) if install else ()
    chosen = launch or launcher(places)
    if install and scope == "project":
        chosen, home = _portable(chosen, places, home), None
    entry = entry_for(chosen, places, home)
    wiring = Wiring(install, entry.mcp(), entry.hook_for(name), tuple(entry.notify_for(name)), events)
    return [_apply(f, wiring, dry_run) for f in files]


# -- what is configured, for memx doctor -----------------------------------------------------------------


@dataclass(frozen=True)
class Configured:
    """One place where memx found itself: a server entry (command line and environment) or a hook (its
    command and events; ``command``: the argument list of a hook the client runs without a shell)."""

    client: str
    path: Path
    what: Literal["server", "hook"]
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    hook: str = ""
    events: tuple[str, ...] = ()
    problem: str = ""


def _server_entry(name: str, path: Path, found: Any) -> Configured:
    command: Any = found.get("command")
    args, env = found.get("args") or [], found.get("env") or {}
    if isinstance(command, dict):  # an older Zed shape: {"command": {"path": …, "args": […]}}
        command, args = command.get("path"), command.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list) or not isinstance(env, dict):
        return Configured(name, path, "server", problem="the entry has no command line memx can read")
    return Configured(name, path, "server", (command, *map(str, args)), {str(k): str(v) for k, v in env.items()})


def _found(file: ConfigFile) -> Found:
    if file.syntax == "toml":
        try:
            text = file.path.read_text(encoding="utf-8")
            tomllib.loads(text)
        except (OSError, tomllib.TOMLDecodeError):
            return Found()
        return file.find(text)
    return file.find(_load(file.path))


def configured_entries(places: Places) -> list[Configured]:
    """Every place memx finds of itself in the clients' files."""
    found: list[Configured] = []
    for name in names():
        for scope in ("user", "project"):
            try:
                files = client(name).files(places, "user" if scope == "user" else "project")
            except InvalidInputError:
                continue
            for file in files:
                if not file.path.exists():
                    continue
                try:
                    seen = _found(file)
                except InvalidInputError as exc:
                    found.append(Configured(name, file.path, "server", problem=str(exc)))
                    continue
                for command, events in seen.hooks.items():
                    argv = seen.argv if seen.argv and " ".join(seen.argv) == command else ()
                    found.append(Configured(name, file.path, "hook", argv, hook=command, events=events))
                if seen.server is not None:
                    found.append(_server_entry(name, file.path, seen.server))
    return found


def configured(places: Places) -> dict[str, list[str]]:
    """What memx finds of itself in each client's files, in words."""
    out: dict[str, list[str]] = {}
    for c in configured_entries(places):
        if c.problem:
            text = f"{c.path}: {c.problem}"
        elif c.what == "server":
            text = f"server in {c.path}"
        else:
            text = f"hooks {', '.join(c.events)} in {c.path}"
        out.setdefault(c.client, []).append(text)
    return out
