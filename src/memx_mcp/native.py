"""Process-wide set-up: the native libraries' settings (a small C heap: fewer malloc arenas, freed heap
given back to the system; BLAS on one thread), where logs go and who may read the files memx creates.
Light on purpose: the MCP server calls it before answering ``initialize``, before the store's libraries
load."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
import threading


def trim_heap() -> None:
    """Return the C heap that was freed to the system: glibc keeps it otherwise, and it stays resident
    although the process no longer uses it (about 60 MB after the model loads, about 200 MB after a table
    scan of 100k bullets). A no-op where there is no glibc."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


M_ARENA_MAX = -8  # glibc's mallopt parameter


def small_heap(arenas: int = 2) -> None:
    """For a long-running process, first thing, before LanceDB's and onnxruntime's threads exist and before
    pyarrow is imported: glibc keeps at most ``arenas`` malloc arenas (by default each allocating thread
    may get its own and keeps freed memory in it), and pyarrow allocates from the system heap rather than
    its own mimalloc pool (unless the user chose a pool), so that ``trim_heap`` can give back what either
    frees. Measured by ``benchmarks/server_memory.py``. A no-op for the arenas where there is no glibc."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)


_blas_limited = threading.Event()


def one_blas_thread() -> None:
    """Run BLAS (numpy's matrix products: the vector copy's scan) on the calling thread only. OpenBLAS's
    worker threads spin after each product and take a second core from LanceDB's full-text query and the
    query embedding that run alongside (``python benchmarks/profile_recall.py`` prints the CPU time per
    recall by thread, and recall with BLAS on one thread and on all). Once per process; a no-op where
    threadpoolctl finds no BLAS."""
    if _blas_limited.is_set():
        return
    _blas_limited.set()
    import numpy  # noqa: F401  (its BLAS must be loaded for the limit to reach it)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def log_to_stderr(level: str) -> None:
    """Logs go to stderr (stdout belongs to the protocol); bullet contents are never logged at INFO."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.WARNING),
        format="%(asctime)s memx %(levelname)s %(name)s: %(message)s",
    )


def private_files() -> None:
    """Files memx creates are readable by their owner only."""
    os.umask(0o077)
