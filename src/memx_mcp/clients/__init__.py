"""Every client memx knows, one module each (``claude_code.py``, ``codex.py`` …), registered in
``registry.py``: where its configuration lives and how memx's entries are written and removed, its hook
events read into one ``HookEvent``, what its hooks print to add context, where its sessions are and which
transcript reader reads them, and its headless CLI (``model.py`` says what a client declares)."""

from .model import (
    CONTEXT_MOMENTS,
    TOOL_MOMENTS,
    Client,
    ConfigFile,
    Found,
    Hook,
    HookEvent,
    Moment,
    Scope,
    Sessions,
    Wiring,
    accepts,
)
from .places import Places
from .registry import client, clients, names, register, unregister

__all__ = [
    "CONTEXT_MOMENTS",
    "TOOL_MOMENTS",
    "Client",
    "ConfigFile",
    "Found",
    "Hook",
    "HookEvent",
    "Moment",
    "Places",
    "Scope",
    "Sessions",
    "Wiring",
    "accepts",
    "client",
    "clients",
    "names",
    "register",
    "unregister",
]
