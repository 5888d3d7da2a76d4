"""Importing LanceDB without loading the whole of its namespace REST client.

``import lancedb`` (0.40) imports ``lance_namespace``, and that imports the generated REST client
``lance_namespace_urllib3_client`` whole: its package file imports 9 API modules and every one of its
pydantic models. That is about half of the import (``python -X importtime -c "import lancedb"``), paid by
every memx process (each CLI command, each hook, the server) though memx never talks to a namespace
server. Lance's own Python package stopped importing that client eagerly for the same reason; lancedb
has not yet.

So before lancedb is imported, the client's package and its ``models`` package are registered as modules
that resolve a name on first use from the one file that defines it (``AlterTableAddColumnsRequest`` from
``models/alter_table_add_columns_request.py``). lancedb then imports just the models it names. A name
that does not resolve that way makes the module run its real package file, so nothing can be missing; and
if the import fails with them in place, lancedb is imported again the ordinary way.

``benchmarks/startup.py`` measures what a command's start costs."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

CLIENT = "lance_namespace_urllib3_client"
_CAPITAL = re.compile(r"(?<!^)(?=[A-Z])")


class _OnFirstUse(ModuleType):
    """A package whose names are imported from their own files when first asked for."""

    def __init__(self, spec: ModuleSpec, folder: Path) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__file__ = spec.origin
        self.__path__ = [str(folder)]
        self.__package__ = spec.name
        self.__dict__["_memx_folder"] = folder
        self.__dict__["_memx_whole"] = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self.__dict__["_memx_whole"]:
            raise AttributeError(name)
        stem = _CAPITAL.sub("_", name).lower()
        folder: Path = self.__dict__["_memx_folder"]
        if (folder / f"{stem}.py").is_file() or (folder / stem / "__init__.py").is_file():
            module = importlib.import_module(f"{self.__name__}.{stem}")
            value = module if name == stem else module.__dict__.get(name, module.__dict__)
            if value is not module.__dict__:  # a submodule itself (`from client import rest`), or its class
                setattr(self, name, value)
                return value
        self.__dict__["_memx_whole"] = True  # anything else: the real package file, once
        assert self.__spec__ is not None and self.__spec__.loader is not None
        self.__spec__.loader.exec_module(self)
        return object.__getattribute__(self, name)


def _package(name: str, folder: Path) -> _OnFirstUse | None:
    file, inside = folder / "__init__.py", [str(folder)]
    spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=inside)
    return _OnFirstUse(spec, folder) if spec is not None and spec.loader is not None else None


def _client_on_first_use() -> bool:
    """Put the client's two packages in place; False when they are loaded already or not laid out as expected."""
    if CLIENT in sys.modules:
        return False
    try:
        found = importlib.util.find_spec(CLIENT)
    except (ImportError, ValueError):
        return False
    if found is None or found.origin is None:
        return False
    root = Path(found.origin).parent
    if not (root / "models" / "__init__.py").is_file():
        return False
    client, models = _package(CLIENT, root), _package(f"{CLIENT}.models", root / "models")
    if client is None or models is None:
        return False
    client.models = models  # type: ignore[attr-defined]
    sys.modules[CLIENT], sys.modules[f"{CLIENT}.models"] = client, models
    return True


def _forget(*prefixes: str) -> None:
    for name in [n for n in sys.modules if n.split(".")[0] in prefixes]:
        del sys.modules[name]


def load() -> ModuleType:
    """The ``lancedb`` module."""
    if "lancedb" in sys.modules:
        return sys.modules["lancedb"]
    if not _client_on_first_use():
        return importlib.import_module("lancedb")
    try:
        return importlib.import_module("lancedb")
    except Exception as exc:  # a lancedb whose imports this does not fit: the ordinary way
        log.debug("lancedb did not import with its namespace client loaded on first use: %s", exc)
        _forget("lancedb", "lance_namespace", CLIENT)
        return importlib.import_module("lancedb")
