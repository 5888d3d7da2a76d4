from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memx_mcp.native import small_heap, trim_heap


def test_small_heap_asks_pyarrow_for_the_system_heap_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    small_heap()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    small_heap()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    trim_heap()  # harmless at any time


def test_a_server_process_allocates_arrow_memory_from_the_system_heap() -> None:
    code = (
        "from memx_mcp.native import small_heap; small_heap(); import pyarrow as pa; "
        "print(pa.default_memory_pool().backend_name)"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "system"


def test_the_vector_copy_runs_blas_on_one_thread(tmp_path: Path) -> None:
    """In a fresh process (numpy's BLAS starts with a thread per core): opening the copy limits it."""
    code = (
        "import sys; from pathlib import Path; from threadpoolctl import threadpool_info; "
        "from memx_mcp.adapters.lance.vectors import VectorIndex; VectorIndex(Path(sys.argv[1]) / 'generation'); "
        "print(max((p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'), default=1))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
