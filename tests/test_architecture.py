"""The domain stays pure: engine modules never import the edges' heavy dependencies."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "memx_mcp"
DOMAIN = ["engine", "domain/models.py", "text"]
FORBIDDEN = {"mcp", "lancedb", "anthropic", "fastembed", "click", "pyarrow"}


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("name", DOMAIN)
def test_domain_modules_do_not_import_edge_dependencies(name: str) -> None:
    target = SRC / name
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    for f in files:
        assert not imports(f) & FORBIDDEN, f"{f.relative_to(SRC)} imports {imports(f) & FORBIDDEN}"


def test_the_server_module_imports_no_heavy_dependency_at_start_up() -> None:
    assert not imports(SRC / "server" / "app.py") & {"lancedb", "fastembed", "anthropic", "pyarrow", "numpy"}


def test_no_module_grows_past_the_style_limit() -> None:
    # A tripwire, not the rule: STYLE says a big module is fine when it is one concept (the store adapter,
    # the sanitizer); 400 lines drove splits the tree could not explain. Import contracts (issue 21) are
    # meant to replace this test.
    for f in SRC.rglob("*.py"):
        assert len(f.read_text(encoding="utf-8").splitlines()) <= 600, f
