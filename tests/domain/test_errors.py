"""The one exception tree (domain/errors.py): every error memx raises on purpose is a MemxError, whichever
layer raises it."""

from __future__ import annotations

import ast
from pathlib import Path

from memx_mcp.domain.errors import MemxError, RateLimited

SRC = Path(__file__).parents[2] / "src" / "memx_mcp"


def test_a_rate_limit_is_part_of_the_one_error_tree_and_keeps_its_wait() -> None:
    exc = RateLimited("the API is rate limited", "30")
    assert isinstance(exc, MemxError) and exc.retry_after == 30.0
    assert RateLimited("a plan's limit", "Wed, 21 Oct 2015 07:28:00 GMT").retry_after == 0.0  # a date: not parsed


def test_no_engine_adapter_or_use_case_defines_an_exception_outside_the_tree() -> None:
    found = []
    for f in sorted(p for layer in ("engine", "privacy", "usecases", "adapters") for p in (SRC / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in ("Exception", "BaseException") for b in node.bases
            ):
                found.append(f"{f.relative_to(SRC)}:{node.lineno} {node.name}")
    assert not found, f"exceptions outside domain/errors.py: {found}"
