"""How another program starts this copy of memx: the launcher (installed script, ``uvx --from`` a
checkout, or ``uvx`` from the index), never a path in uv's throw-away cache, and the entry a client gets."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from ...domain.errors import InvalidInputError
from .common import FAIL_OPEN, Places


@dataclass(frozen=True)
class Launcher:
    """How this copy of memx can be started by another program. ``kind``: ``installed`` (a script that
    stays where it is), ``source`` (a checkout run through ``uvx --from``), ``index`` (``uvx memx-mcp``)."""

    kind: Literal["installed", "source", "index"]
    server: tuple[str, ...]  # command and arguments of the MCP server
    cli: tuple[str, ...]  # command and arguments of the memx CLI
    on_path: bool = False  # the installed scripts are the ones PATH finds
    source: Path | None = None


def _uv_caches(places: Places) -> list[Path]:
    found = [places.var("UV_CACHE_DIR"), places.var("XDG_CACHE_HOME") and f"{places.var('XDG_CACHE_HOME')}/uv"]
    local = places.var("LOCALAPPDATA")
    found += [str(places.home / ".cache" / "uv"), str(places.home / "Library" / "Caches" / "uv")]
    found += [local and f"{local}/uv/cache"]
    return [Path(p).expanduser() for p in found if p]


def ephemeral(path: Path, places: Places) -> bool:
    """Whether ``path`` lies in a throw-away environment (uv's cache, where ``uvx`` builds its tools)."""
    resolved = path.resolve() if path.exists() else path
    if any(part in ("archive-v0", "builds-v0", "environments-v2") for part in resolved.parts):
        return True
    return any(resolved.is_relative_to(cache) for cache in _uv_caches(places))


def _source_checkout() -> Path | None:
    """The folder this copy was installed from, when it came from a local folder (PEP 610)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        raw = distribution("memx-mcp").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    try:
        url = json.loads(raw or "{}").get("url", "")
    except ValueError:
        return None
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path.lstrip("/") if re.match(r"/[A-Za-z]:", parsed.path) else parsed.path))
    return path if path.is_dir() else None


def launcher(places: Places, executable: str = sys.executable) -> Launcher:
    """How a client should start this copy of memx (see the module's docstring)."""
    beside = Path(executable).parent
    scripts = {
        name: beside / (name + (".exe" if places.platform.startswith("win") else "")) for name in ("memx-mcp", "memx")
    }
    if not all(p.exists() for p in scripts.values()):  # e.g. `python -m` with the scripts in ~/.local/bin
        which = {name: shutil.which(name, path=places.var("PATH")) for name in scripts}
        if all(which.values()):
            scripts = {name: Path(str(path)) for name, path in which.items()}
    if all(p.exists() for p in scripts.values()) and not any(ephemeral(p.parent, places) for p in scripts.values()):
        on_path = all(
            (found := shutil.which(name, path=places.var("PATH"))) is not None and Path(found).resolve() == p.resolve()
            for name, p in scripts.items()
        )
        return Launcher("installed", (str(scripts["memx-mcp"]),), (str(scripts["memx"]),), on_path)
    source = _source_checkout()
    if source is not None:
        base = ("uvx", "--from", str(source))
        return Launcher("source", (*base, "memx-mcp"), (*base, "memx"), source=source)
    return Launcher("index", ("uvx", "memx-mcp"), ("uvx", "--from", "memx-mcp", "memx"))


def _portable(launch: Launcher, places: Places, home: Path | None) -> Launcher:
    """The launcher written into a file a team shares: no path of this machine in it, or a refusal."""
    if home is not None:
        raise InvalidInputError(
            f"MEMX_HOME ({home}) is a path of this machine and a project file is shared with your team; "
            "use --scope user, or leave MEMX_HOME unset"
        )
    if launch.kind == "installed":
        if not launch.on_path:
            raise InvalidInputError(
                f"memx is installed at {Path(launch.server[0]).parent}, which is not on PATH, and a project file "
                "is shared with your team, so memx writes no path of this machine into it. Put memx on PATH "
                "(`pipx install .` or `uv tool install .`, or activate the virtual environment) or use --scope user"
            )
        return Launcher("installed", ("memx-mcp",), ("memx",), True)
    if launch.kind == "source" and launch.source is not None:
        try:
            rel = launch.source.resolve().relative_to(places.project.resolve())
        except ValueError:
            raise InvalidInputError(
                f"memx runs from {launch.source}, outside this project; a project file is shared with your team, "
                "so memx writes no path of this machine into it. Install memx (`pip install .`) or use --scope user"
            ) from None
        source = "." if str(rel) == "." else f"./{rel.as_posix()}"
        return Launcher("source", ("uvx", "--from", source, "memx-mcp"), ("uvx", "--from", source, "memx"))
    return launch


def _quote(parts: tuple[str, ...], platform: str) -> str:
    if platform.startswith("win"):
        return " ".join(f'"{p}"' if " " in p else p for p in parts)
    return shlex.join(parts)


@dataclass(frozen=True)
class Entry:
    """What memx writes: the server's command line, its environment, and the hook command."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    hook: str = ""
    cli: tuple[str, ...] = ()  # the memx CLI's command line (with --home when the entry carries one)
    platform: str = sys.platform

    def hook_for(self, client: str) -> str:
        """The shell command of ``client``'s hook, made to exit 0 even when memx cannot start."""
        return _quote((*self.cli, "hook", client), self.platform) + FAIL_OPEN

    def notify_for(self, client: str) -> list[str]:
        """A program and its arguments, for a client that runs an argument list rather than a shell."""
        return [*self.cli, "hook", client]

    def mcp(self, typed: bool = False) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "stdio"} if typed else {}
        entry |= {"command": self.command, "args": list(self.args)}
        if self.env:
            entry["env"] = dict(self.env)
        return entry


def entry_for(launch: Launcher, places: Places, home: Path | None = None) -> Entry:
    """The entry for ``launch``; ``home``: a data folder other than the default, carried to the client."""
    cli = launch.cli + (("--home", str(home)) if home else ())
    hook = _quote((*cli, "hook", "claude-code"), places.platform) + FAIL_OPEN
    env = {"MEMX_HOME": str(home)} if home else {}
    return Entry(launch.server[0], launch.server[1:], env, hook, cli, places.platform)


def hook_command(places: Places | None = None) -> str:
    """The hook command of this copy of memx (without a data folder of its own)."""
    p = places or Places(Path.home(), Path.cwd())
    return entry_for(launcher(p), p).hook
