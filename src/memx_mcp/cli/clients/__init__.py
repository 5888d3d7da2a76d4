"""Client configuration: ``memx install CLIENT`` writes memx's MCP server entry (and, for Claude Code, its
hooks) into the client's own files at their real location on macOS, Linux and Windows. Every other entry
is kept, a backup is written, the diff is shown, and running it twice changes nothing. ``memx uninstall``
removes exactly what install added (a file that install created goes away again).

The entry names a command that starts on this machine as it is (``launcher``): the installed script by its
absolute path, ``uvx --from SOURCE`` for a checkout run through uv, ``uvx memx-mcp`` only for a copy that
came from the package index; never a path inside uv's throw-away cache. Files a team shares (the project
scope) get no machine path at all, or a refusal that says why."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...domain.errors import InvalidInputError
from .common import (
    CLIENTS,
    CONTEXT_EVENTS,
    END_HOOKS,
    FAIL_OPEN,
    HOOK_EVENTS,
    MARKER,
    REFLECT_EVENTS,
    SERVER_NAME,
    TITLES,
    Kind,
    Places,
)
from .files import (
    InstallResult,
    _apply_toml,
    _is_memx_notify,
    _load,
    apply,
    is_memx_hook,
    with_approval,
    with_cursor_hooks,
    with_hooks,
    with_server,
    with_toml_server,
)
from .launch import Entry, Launcher, _portable, entry_for, ephemeral, hook_command, launcher

__all__ = [
    "CLIENTS",
    "CONTEXT_EVENTS",
    "END_HOOKS",
    "FAIL_OPEN",
    "HOOK_EVENTS",
    "MARKER",
    "REFLECT_EVENTS",
    "SERVER_NAME",
    "TITLES",
    "Configured",
    "Entry",
    "InstallResult",
    "Kind",
    "Launcher",
    "Places",
    "apply",
    "claude_settings_path",
    "config_files",
    "configure",
    "configured",
    "configured_entries",
    "desktop_config",
    "entry_for",
    "ephemeral",
    "hook_command",
    "launcher",
    "with_approval",
    "with_hooks",
    "with_server",
    "with_toml_server",
]

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
        folder = (places.home if user else proj) / ".cursor"
        return [(folder / "mcp.json", "mcpServers"), (folder / "hooks.json", "cursor_hooks")]
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


def _hooks_change(command: str, events: tuple[str, ...], path: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: with_hooks(data, command, events, path)


def _cursor_change(command: str, events: tuple[str, ...], path: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: with_cursor_hooks(data, command, events, path)


def _server_change(
    server: dict[str, Any], install: bool, path: Path, key: str, gemini_hook: str | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The server entry; for Gemini CLI also its hooks, which live in the same settings.json (one write, one
    backup). ``gemini_hook``: the command, "" to take memx's hooks out, None to leave them."""
    if gemini_hook is None:
        return lambda data: with_server(data, server, install, path, key)
    events = END_HOOKS["gemini"] if gemini_hook else ()
    return lambda data: with_hooks(
        with_server(data, server, install, path, key), gemini_hook, events, path, END_HOOKS["gemini"], "gemini"
    )


def _refuse_over_users_notify(user_config: Path) -> None:
    """A project's notify replaces the user's own in that project (Codex merges its config layers, the
    project's last): refused as the user file's own would be."""
    try:
        notify: Any = tomllib.loads(user_config.read_text(encoding="utf-8")).get("notify")
    except (OSError, tomllib.TOMLDecodeError):
        return
    if notify is not None and not _is_memx_notify(notify):
        raise InvalidInputError(
            f"{user_config} sets notify = {json.dumps(notify)}, which a project's notify would replace in this "
            "project; memx will not, nothing was changed. Run `memx install codex --scope project --no-reflect`"
        )


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
    """Install (or remove) memx in ``client``. ``reflect`` adds the hooks that reflect a session at its
    end (Claude Code, Cursor, Gemini CLI; Codex CLI's notify program); for Claude Code ``session_start``
    and ``prompt`` add the context-injection hooks. ``home``: a data folder other than the default, which
    the entry then carries."""
    files = config_files(client, scope, places)
    wanted = {"SessionEnd": reflect, "PreCompact": reflect, "SessionStart": session_start, "UserPromptSubmit": prompt}
    events = tuple(e for e in HOOK_EVENTS if install and wanted[e])
    chosen = launch or launcher(places)
    if install and scope == "project":
        chosen, home = _portable(chosen, places, home), None
    entry = entry_for(chosen, places, home)
    if client == "codex" and scope == "project" and install and reflect:
        _refuse_over_users_notify(_codex_home(places) / "config.toml")
    results = []
    for path, kind in files:
        ends = install and reflect
        if kind == "toml":
            notify = entry.notify_for("codex") if ends else None
            results.append(_apply_toml(path, entry if install else None, dry_run, notify))
        elif kind == "cursor_hooks":
            chosen_events = END_HOOKS["cursor"] if ends else ()
            results.append(apply(path, _cursor_change(entry.hook_for("cursor"), chosen_events, path), dry_run))
        elif kind == "hooks":
            results.append(apply(path, _hooks_change(entry.hook, events, path), dry_run))
        elif kind == "approval":
            results.append(apply(path, lambda data: with_approval(data, install), dry_run))
        else:
            server = entry.mcp(typed=client in ("claude-code", "vscode"))
            gemini_hook = (entry.hook_for("gemini") if ends else "") if client == "gemini" else None
            results.append(apply(path, _server_change(server, install, path, kind, gemini_hook), dry_run))
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


def _end_hooks(client: str, path: Path, kind: Kind) -> list[Configured]:
    """memx's end-of-session hook in a Cursor, Gemini CLI or Codex CLI file, if it is there."""
    if client == "codex" and kind == "toml":
        try:
            notify: Any = tomllib.loads(path.read_text(encoding="utf-8")).get("notify")
        except (OSError, tomllib.TOMLDecodeError):
            return []
        if not _is_memx_notify(notify):
            return []
        words = tuple(str(w) for w in notify)
        return [Configured(client, path, "hook", command=words, hook=" ".join(words), events=END_HOOKS["codex"])]
    if kind == "cursor_hooks":
        hooks: Any = _load(path).get("hooks") or {}
        pairs = [
            (e, str(h.get("command", "")))
            for e in END_HOOKS["cursor"]
            for h in (hooks.get(e) or [] if isinstance(hooks, dict) else [])
            if isinstance(h, dict) and is_memx_hook(str(h.get("command", "")), "cursor")
        ]
    elif client == "gemini":
        hooks = _load(path).get("hooks") or {}
        pairs = [
            (e, str(h.get("command", "")))
            for e in END_HOOKS["gemini"]
            for g in (hooks.get(e) or [] if isinstance(hooks, dict) else [])
            if isinstance(g, dict)
            for h in g.get("hooks") or []
            if isinstance(h, dict) and is_memx_hook(str(h.get("command", "")), "gemini")
        ]
    else:
        return []
    return [
        Configured(client, path, "hook", hook=c, events=tuple(e for e, d in pairs if d == c))
        for c in sorted({c for _, c in pairs})
    ]


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
                    found += _end_hooks(client, path, kind)
                    if kind == "cursor_hooks":
                        continue
                    if kind == "hooks":
                        hooks = _load(path).get("hooks") or {}
                        commands = {
                            str(h.get("command", ""))
                            for e in HOOK_EVENTS
                            for g in hooks.get(e, [])
                            if isinstance(g, dict)
                            for h in g.get("hooks", [])
                            if isinstance(h, dict) and is_memx_hook(str(h.get("command", "")))
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
