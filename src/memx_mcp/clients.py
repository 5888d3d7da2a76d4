"""Client configuration: ``memx install CLIENT`` writes memx's MCP server entry (and, for Claude Code, its
hooks) into the client's own files at their real location on macOS, Linux and Windows. Every other entry
is kept, a backup is written, the diff is shown, and running it twice changes nothing. ``memx uninstall``
removes exactly what install added (a file that install created goes away again).

The entry names a command that starts on this machine as it is (``launcher``): the installed script by its
absolute path, ``uvx --from SOURCE`` for a checkout run through uv, ``uvx memx-mcp`` only for a copy that
came from the package index; never a path inside uv's throw-away cache. Files a team shares (the project
scope) get no machine path at all, or a refusal that says why."""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from .errors import InvalidInputError
from .files import atomic_write

CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "zed", "codex", "gemini")
TITLES = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "windsurf": "Windsurf",
    "zed": "Zed",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
}
SERVER_NAME = "memx"
MARKER = "hook claude-code"
FAIL_OPEN = " || exit 0"  # a hook whose command cannot start still exits 0 (sh and cmd alike)
REFLECT_EVENTS = ("SessionEnd", "PreCompact")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
HOOK_EVENTS = REFLECT_EVENTS + CONTEXT_EVENTS

# What memx writes into each kind of file: the key its servers live under, or TOML, or Claude Code hooks.
Kind = Literal["mcpServers", "servers", "context_servers", "toml", "hooks", "approval"]


@dataclass(frozen=True)
class Places:
    """Where things live for one machine: tests pass a temporary home and another platform."""

    home: Path
    project: Path
    platform: str = sys.platform
    env: Mapping[str, str] | None = None

    def var(self, name: str) -> str | None:
        return (os.environ if self.env is None else self.env).get(name)

    def config_base(self) -> Path:
        """Where per-user application settings live: Application Support, %APPDATA% or XDG."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        if self.platform.startswith("win"):
            appdata = self.var("APPDATA")
            return Path(appdata) if appdata else self.home / "AppData" / "Roaming"
        xdg = self.var("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"


# -- how the client starts memx -----------------------------------------------------------------------


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
    return Entry(launch.server[0], launch.server[1:], env, hook)


def hook_command(places: Places | None = None) -> str:
    """The hook command of this copy of memx (without a data folder of its own)."""
    p = places or Places(Path.home(), Path.cwd())
    return entry_for(launcher(p), p).hook


# -- where each client keeps its configuration ---------------------------------------------------------


def desktop_config(places: Places) -> Path:
    return places.config_base() / "Claude" / "claude_desktop_config.json"


def claude_settings_path(scope: str, home: Path | None = None, project: Path | None = None) -> Path:
    """Claude Code's settings file, where hooks live."""
    if scope == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    if scope == "project":
        return (project or Path.cwd()) / ".claude" / "settings.json"
    raise InvalidInputError("--scope must be user or project")


def _zed_settings(places: Places) -> Path:
    if places.platform.startswith("win"):
        return places.config_base() / "Zed" / "settings.json"
    xdg = places.var("XDG_CONFIG_HOME")  # Zed keeps ~/.config/zed on macOS too
    return (Path(xdg) if xdg else places.home / ".config") / "zed" / "settings.json"


def _codex_home(places: Places) -> Path:
    custom = places.var("CODEX_HOME")
    return Path(custom).expanduser() if custom else places.home / ".codex"


USER_ONLY = ("claude-desktop", "windsurf")


def config_files(client: str, scope: str, places: Places) -> list[tuple[Path, Kind]]:
    """The files ``client`` reads for ``scope``, each with what memx puts there."""
    if scope not in ("user", "project"):
        raise InvalidInputError("--scope must be user or project")
    if client not in CLIENTS:
        raise InvalidInputError(f"unknown client {client!r}; one of: {', '.join(CLIENTS)}")
    if client in USER_ONLY and scope == "project":
        raise InvalidInputError(f"{TITLES[client]} has no project configuration; use --scope user")
    user, proj = scope == "user", places.project
    if client == "claude-desktop":
        return [(desktop_config(places), "mcpServers")]
    if client == "claude-code":
        if user:
            return [(places.home / ".claude.json", "mcpServers"), (claude_settings_path(scope, places.home), "hooks")]
        # a project's .mcp.json servers wait for approval; the user's own, unshared settings.local.json gives it
        local = proj / ".claude" / "settings.local.json"
        return [
            (proj / ".mcp.json", "mcpServers"),
            (claude_settings_path(scope, project=proj), "hooks"),
            (local, "approval"),
        ]
    if client == "cursor":
        return [((places.home if user else proj) / ".cursor" / "mcp.json", "mcpServers")]
    if client == "vscode":
        return [
            (places.config_base() / "Code" / "User" / "mcp.json" if user else proj / ".vscode" / "mcp.json", "servers")
        ]
    if client == "windsurf":
        return [(places.home / ".codeium" / "windsurf" / "mcp_config.json", "mcpServers")]
    if client == "zed":
        return [(_zed_settings(places) if user else proj / ".zed" / "settings.json", "context_servers")]
    if client == "codex":
        return [((_codex_home(places) if user else proj / ".codex") / "config.toml", "toml")]
    return [((places.home if user else proj) / ".gemini" / "settings.json", "mcpServers")]


# -- reading and changing the files ---------------------------------------------------------------------


@dataclass(frozen=True)
class InstallResult:
    path: Path
    changed: bool
    diff: str
    backup: Path | None
    removed: bool = False  # uninstall deleted a file that install had created


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _without_comments(text: str) -> str:
    """JSON with comments (Zed's and VS Code's settings) as plain JSON, strings left whole."""
    plain = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return re.sub(r",(\s*[}\]])", r"\1", plain)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text or "{}")
    except ValueError as exc:
        try:
            json.loads(_without_comments(text) or "{}")
        except ValueError:
            raise InvalidInputError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
        raise InvalidInputError(
            f"{path} has comments, which rewriting it would lose; nothing was changed. Add memx by hand: "
            "`memx install CLIENT --dry-run --json` prints the entry"
        ) from exc
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _object(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInputError(f'{path}: the "{key}" entry is not an object; nothing was changed')
    return value


def with_server(
    data: dict[str, Any], entry: dict[str, Any], install: bool, path: Path, key: str = "mcpServers"
) -> dict[str, Any]:
    updated: dict[str, Any] = json.loads(json.dumps(data))
    servers = _object(updated, key, path)
    if install:
        servers[SERVER_NAME] = entry
    else:
        servers.pop(SERVER_NAME, None)
        if not servers:
            updated.pop(key)
    return updated


def with_approval(data: dict[str, Any], install: bool) -> dict[str, Any]:
    """Claude Code's ``enabledMcpjsonServers`` with memx in it (or out of it); other names kept."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    names = updated.get("enabledMcpjsonServers", [])
    names = [n for n in names if n != SERVER_NAME] if isinstance(names, list) else []
    if install:
        names.append(SERVER_NAME)
    if names:
        updated["enabledMcpjsonServers"] = names
    else:
        updated.pop("enabledMcpjsonServers", None)
    return updated


def _is_memx_hook(command: str) -> bool:
    return MARKER in command


def with_hooks(data: dict[str, Any], command: str, events: tuple[str, ...], path: Path) -> dict[str, Any]:
    """memx's own hook entries replaced by one for each of ``events`` (none: removed); others kept."""
    updated: dict[str, Any] = json.loads(json.dumps(data))
    hooks = _object(updated, "hooks", path)
    for event in HOOK_EVENTS:
        kept = []
        for group in (g for g in hooks.get(event, []) if isinstance(g, dict)):
            inner = [h for h in group.get("hooks", []) if not _is_memx_hook(str(h.get("command", "")))]
            if inner or not group.get("hooks"):
                kept.append({**group, "hooks": inner})
        if event in events:
            timeout = 60 if event in REFLECT_EVENTS else 10
            kept.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        updated.pop("hooks")
    return updated


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# Codex keeps TOML; memx edits only its own table, as text, so every other line stays as the user wrote it.
_TABLE = re.compile(r"^\s*\[\s*mcp_servers\.(?:memx|\"memx\")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
_HEADER = re.compile(r"^\s*\[")


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def with_toml_server(text: str, entry: Entry | None, path: Path) -> str:
    """``text`` with memx's ``[mcp_servers.memx]`` table replaced by ``entry`` (None: removed)."""
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{path} is not valid TOML ({exc}); fix it first, nothing was changed") from exc
    lines, kept, inside = text.splitlines(), [], False
    for line in lines:
        if _HEADER.match(line):
            inside = bool(_TABLE.match(line))
        if not inside:
            kept.append(line)
    body = "\n".join(kept).rstrip()
    remaining = tomllib.loads(body + "\n") if body else {}
    if SERVER_NAME in (remaining.get("mcp_servers") or {}):
        raise InvalidInputError(f"{path} defines mcp_servers.memx inline; edit it by hand, nothing was changed")
    if entry is not None:
        block = [f"[mcp_servers.{SERVER_NAME}]", f"command = {_toml_string(entry.command)}"]
        block.append("args = [" + ", ".join(_toml_string(a) for a in entry.args) + "]")
        if entry.env:
            block.append("env = { " + ", ".join(f"{k} = {_toml_string(v)}" for k, v in entry.env.items()) + " }")
        body = (body + "\n\n" if body else "") + "\n".join(block)
    result = body + "\n" if body else ""
    if entry is None and SERVER_NAME not in (parsed.get("mcp_servers") or {}):
        return text
    return result


def _write(path: Path, before: str, after: str, dry_run: bool) -> InstallResult:
    if before == after:
        return InstallResult(path, False, "", None)
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), str(path), str(path)))
    if dry_run:
        return InstallResult(path, True, diff, None)
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.memx-backup-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    if not after:  # uninstall took out the last of what install had put in a file of its own
        path.unlink()
        return InstallResult(path, True, diff, backup, removed=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, after, mode=(path.stat().st_mode & 0o777) if path.exists() else 0o644)
    return InstallResult(path, True, diff, backup)


def apply(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], dry_run: bool) -> InstallResult:
    """Rewrite one JSON file with ``change``: atomically, after a backup, only if something differs."""
    data = _load(path)
    after = change(data)
    if after == data:
        return InstallResult(path, False, "", None)
    before_text = _dump(data) if path.exists() else ""
    return _write(path, before_text, _dump(after) if after else "", dry_run)


def _apply_toml(path: Path, entry: Entry | None, dry_run: bool) -> InstallResult:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    after = with_toml_server(before, entry, path)
    if before and after and tomllib.loads(before) == tomllib.loads(after):
        return InstallResult(path, False, "", None)
    return _write(path, before, after, dry_run)


def _hooks_change(command: str, events: tuple[str, ...], path: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: with_hooks(data, command, events, path)


def _server_change(
    server: dict[str, Any], install: bool, path: Path, key: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: with_server(data, server, install, path, key)


def configure(
    client: str,
    scope: str,
    places: Places,
    *,
    install: bool = True,
    dry_run: bool = False,
    reflect: bool = True,
    session_start: bool = True,
    prompt: bool = True,
    home: Path | None = None,
    launch: Launcher | None = None,
) -> list[InstallResult]:
    """Install (or remove) memx in ``client``. For Claude Code, ``reflect`` adds the session-end hooks,
    ``session_start`` and ``prompt`` the context-injection hooks. ``home``: a data folder other than the
    default, which the entry then carries."""
    files = config_files(client, scope, places)
    wanted = {"SessionEnd": reflect, "PreCompact": reflect, "SessionStart": session_start, "UserPromptSubmit": prompt}
    events = tuple(e for e in HOOK_EVENTS if install and wanted[e])
    chosen = launch or launcher(places)
    if install and scope == "project":
        chosen, home = _portable(chosen, places, home), None
    entry = entry_for(chosen, places, home)
    results = []
    for path, kind in files:
        if kind == "toml":
            results.append(_apply_toml(path, entry if install else None, dry_run))
        elif kind == "hooks":
            results.append(apply(path, _hooks_change(entry.hook, events, path), dry_run))
        elif kind == "approval":
            results.append(apply(path, lambda data: with_approval(data, install), dry_run))
        else:
            server = entry.mcp(typed=client in ("claude-code", "vscode"))
            results.append(apply(path, _server_change(server, install, path, kind), dry_run))
    return results


# -- what is configured, for memx doctor -----------------------------------------------------------------


@dataclass(frozen=True)
class Configured:
    """One place where memx found itself: a server entry (command line and environment) or a hook."""

    client: str
    path: Path
    what: Literal["server", "hook"]
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    hook: str = ""
    events: tuple[str, ...] = ()
    problem: str = ""


def _server_of(path: Path, kind: Kind) -> dict[str, Any] | None:
    if kind == "toml":
        try:
            data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return None
        servers: Any = data.get("mcp_servers")
    else:
        servers = _load(path).get(kind)
    found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return found if isinstance(found, dict) else None


def _server_entry(client: str, path: Path, kind: Kind, found: dict[str, Any]) -> Configured:
    command: Any = found.get("command")
    args, env = found.get("args") or [], found.get("env") or {}
    if isinstance(command, dict):  # an older Zed shape: {"command": {"path": …, "args": […]}}
        command, args = command.get("path"), command.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list) or not isinstance(env, dict):
        return Configured(client, path, "server", problem="the entry has no command line memx can read")
    return Configured(client, path, "server", (command, *map(str, args)), {str(k): str(v) for k, v in env.items()})


def configured_entries(places: Places) -> list[Configured]:
    """Every place memx finds of itself in the clients' files."""
    found: list[Configured] = []
    for client in CLIENTS:
        for scope in ("user", "project"):
            try:
                files = config_files(client, scope, places)
            except InvalidInputError:
                continue
            for path, kind in files:
                if not path.exists() or kind == "approval":
                    continue
                try:
                    if kind == "hooks":
                        hooks = _load(path).get("hooks") or {}
                        commands = {
                            str(h.get("command", ""))
                            for e in HOOK_EVENTS
                            for g in hooks.get(e, [])
                            if isinstance(g, dict)
                            for h in g.get("hooks", [])
                            if isinstance(h, dict) and _is_memx_hook(str(h.get("command", "")))
                        }
                        events = tuple(e for e in HOOK_EVENTS if MARKER in json.dumps(hooks.get(e, [])))
                        found += [Configured(client, path, "hook", hook=c, events=events) for c in sorted(commands)]
                        continue
                    server = _server_of(path, kind)
                except InvalidInputError as exc:
                    found.append(Configured(client, path, "server", problem=str(exc)))
                    continue
                if server is not None:
                    found.append(_server_entry(client, path, kind, server))
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
