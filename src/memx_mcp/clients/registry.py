"""The clients memx knows, registered once. Install, uninstall, doctor and ``memx hook CLIENT`` look a
client up here; a new client is one module declaring a ``Client`` and one ``register`` call (a test does so)."""

from __future__ import annotations

from ..domain.errors import InvalidInputError
from . import claude_code, claude_desktop, codex, copilot_cli, cursor, gemini, vscode, windsurf, zed
from .model import Client

_CLIENTS: dict[str, Client] = {}


def register(client: Client) -> Client:
    """Add ``client`` (or replace the one of its name)."""
    _CLIENTS[client.name] = client
    return client


def unregister(name: str) -> None:
    _CLIENTS.pop(name, None)


def names() -> tuple[str, ...]:
    return tuple(_CLIENTS)


def clients() -> tuple[Client, ...]:
    return tuple(_CLIENTS.values())


def client(name: str) -> Client:
    found = _CLIENTS.get(name)
    if found is None:
        raise InvalidInputError(f"unknown client {name!r}; one of: {', '.join(_CLIENTS)}")
    return found


for _module in (claude_desktop, claude_code, cursor, vscode, windsurf, zed, codex, gemini, copilot_cli):
    register(_module.CLIENT)
