"""The reading modes, registered once. Each mode is one module of ``readings/`` (a ``Keeper`` with its
``read``); its registration here says its name and what it needs. The settings' validation, the CLI's
``--mode`` choices, the MCP tool's schema, ``memx doctor``, the hooks and the benchmarks take the list from
here, never spell it again.

A registration does not import its module: the settings read this list at every start, the rules load with
the first reflect."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from ....domain.errors import InvalidInputError

if TYPE_CHECKING:
    from .keeper import Keeper

AUTO = "auto"  # not a mode: a model reads the whole session when there is one (``WITH_A_MODEL``), else rules
WITHOUT_A_MODEL = "rules"
WITH_A_MODEL = "session"


@dataclass(frozen=True)
class ReadingMode:
    name: str
    summary: str  # one line for `memx doctor` and the help texts
    load: Callable[[], type[Keeper]]  # the mode's class, imported only when a session is read
    needs_model: bool = True  # without a model the rules read the session instead
    whole_session: bool = False  # the model reads the whole session: the long timeout, and it weighs the store


def _builtin(module: str, cls: str) -> Callable[[], type[Keeper]]:
    def load() -> type[Keeper]:
        found: type[Keeper] = getattr(import_module(f"{__package__}.{module}"), cls)
        return found

    return load


_MODES: dict[str, ReadingMode] = {}


def register(mode: ReadingMode) -> None:
    """Add a reading mode (or replace the one of that name)."""
    if not mode.name or mode.name == AUTO:
        raise ValueError(f"a reading mode cannot be named {mode.name!r}")
    _MODES[mode.name] = mode


def unregister(name: str) -> None:
    _MODES.pop(name, None)


def modes() -> tuple[ReadingMode, ...]:
    return tuple(_MODES.values())


def names() -> tuple[str, ...]:
    """Every value a mode setting may take: ``auto``, then each registered mode."""
    return (AUTO, *_MODES)


def mode(name: str) -> ReadingMode:
    """The registered mode ``name`` (``auto`` is the mode a model reads with); a clear error for any other."""
    found = _MODES.get(WITH_A_MODEL if name == AUTO else name)
    if found is None:
        raise InvalidInputError(f"mode must be one of {', '.join(names())}, not {name!r}")
    return found


register(ReadingMode("rules", "rules only, the quiet floor", _builtin("rules", "RulesReading"), needs_model=False))
register(
    ReadingMode(
        "session",
        "reads each finished session whole",
        _builtin("session", "SessionReading"),
        whole_session=True,
    )
)
register(ReadingMode("hybrid", "the rules find events, a model keeps or writes", _builtin("hybrid", "HybridReading")))
register(ReadingMode("llm", "a model reads each event", _builtin("llm", "LlmReading")))
