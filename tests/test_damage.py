"""A damaged store: memx says what it found and how to repair it, never shows a silently empty store, and
``memx repair`` brings back every bullet that is still readable on disk."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.adapters.lance.damage import data_files
from memx_mcp.cli import doctor
from memx_mcp.cli.clients import Places
from memx_mcp.compose import open_memory
from memx_mcp.config import Settings, load_settings
from memx_mcp.memory import Memory

from .helpers import run_memx as memx

TEXTS = (
    "Use pytest -n auto (pytest-xdist) to run the suite in parallel",
    "Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10",
    "Prefer ruff format over black in this repository",
    "Run alembic upgrade head after pulling new migrations",
    "The staging API listens on port 8443, not 443",
    "Use uv sync --frozen in CI so the lock file is never rewritten",
)


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def build(home: Path, reindexed: bool = False) -> None:
    """A real store holding the six bullets, one data file each (or, ``reindexed``, in the table a
    ``memx reindex`` makes)."""
    memory = open_memory(load_settings(home=home), cwd=home.parent, preload=True)
    for text in TEXTS:
        memory.remember(text, scope="global")
    if reindexed:
        memory.reindex()
    assert memory.store.count() == len(TEXTS)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[bool], Path]:
    """Each kind of filled data folder, built once for the module by `build` (the model loaded for it)."""
    made: dict[bool, Path] = {}

    def get(reindexed: bool) -> Path:
        if reindexed not in made:
            made[reindexed] = tmp_path_factory.mktemp("reindexed" if reindexed else "filled") / "home"
            build(made[reindexed], reindexed)
        return made[reindexed]

    return get


@pytest.fixture
def filled(built: Callable[[bool], Path]) -> Callable[..., Path]:
    """``filled(home, reindexed=False)``: a copy of a built data folder at ``home``, this test's own; the
    store's folder."""

    def copy(home: Path, reindexed: bool = False) -> Path:
        shutil.copytree(built(reindexed), home, symlinks=True)
        return home / "store"

    return copy


def damage(store: Path, case: str) -> None:
    if case.startswith("meta.json missing"):
        (store / "meta.json").unlink()
    elif case == "manifests gone":
        shutil.rmtree(store / "lance" / "bullets.lance" / "_versions")
    elif case == "data file cut short":
        first = data_files(store / "lance" / "bullets.lance")[0]
        with first.open("r+b") as f:
            f.truncate(first.stat().st_size // 2)
    else:
        raise AssertionError(case)


CASES = [
    ("meta.json missing", 6),
    ("meta.json missing after a reindex", 6),
    ("manifests gone", 6),
    ("data file cut short", 5),
]


@pytest.mark.parametrize(("case", "readable"), CASES)
def test_a_damaged_store_is_reported_and_repair_brings_back_the_readable_bullets(
    tmp_path: Path, case: str, readable: int, filled: Callable[..., Path]
) -> None:
    home = tmp_path / "home"
    damage(filled(home, reindexed="reindex" in case), case)

    listed = memx(home, "stats", "--json")
    assert listed.returncode == 1, listed.stdout  # not "0 bullets"
    assert "is damaged" in listed.stderr and "memx repair" in listed.stderr
    assert "LanceError" not in listed.stderr and "unexpected error" not in listed.stderr
    wrote = memx(home, "remember", "A new bullet must not go to a new empty table")
    assert wrote.returncode == 1 and "is damaged" in wrote.stderr

    checked = memx(home, "doctor", "--json")
    assert checked.returncode == 1
    store_check = next(c for c in json.loads(checked.stdout)["checks"] if c["name"] == "store")
    assert store_check["status"] == "FAIL" and "damaged" in store_check["detail"]
    assert "memx repair" in store_check["fix"]

    repaired = as_json(memx(home, "repair", "--json"))
    assert repaired["bullets_recovered"] == readable
    assert repaired["bullets_lost"] == len(TEXTS) - readable
    assert repaired["problems"], "repair says what it found"
    assert Path(repaired["backup"]).is_dir()

    assert as_json(memx(home, "stats", "--json"))["total"] == readable
    # which file was cut is up to LanceDB's naming, so ask for a bullet that survived
    survivor = as_json(memx(home, "list", "--scope", "global", "--json"))["bullets"]
    assert len(survivor) == readable
    found = as_json(memx(home, "recall", survivor[0]["content"], "--scope", "global", "--json"))
    assert found["results"] and found["mode"] == "hybrid"
    assert found["results"][0]["id"] == survivor[0]["id"]
    assert as_json(memx(home, "doctor", "--json"))["ok"] is True


def test_repair_says_what_was_lost_when_the_table_folder_is_gone(tmp_path: Path, filled: Callable[..., Path]) -> None:
    home = tmp_path / "home"
    store = filled(home)
    shutil.rmtree(store / "lance" / "bullets.lance")
    listed = memx(home, "stats", "--json")
    assert listed.returncode == 1 and "is gone" in listed.stderr and "memx repair" in listed.stderr
    repaired = memx(home, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "Recovered 0 bullet(s)" in repaired.stdout and "Lost 6 bullet(s)" in repaired.stdout
    assert as_json(memx(home, "remember", "After the repair writes work again", "--json"))["action"] == "inserted"


def test_a_first_use_of_an_empty_folder_still_creates_the_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "store").mkdir(parents=True)
    assert as_json(memx(home, "stats", "--json"))["total"] == 0
    assert as_json(memx(home, "remember", "A first bullet in a new store", "--json"))["action"] == "inserted"


def test_the_doctor_self_test_leaves_nothing_behind_when_it_fails_midway(
    memory: Memory, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("A bullet of the user that the self-test must not touch", scope="global")

    def recall_fails(*_: object, **__: object) -> None:
        raise RuntimeError("recall broke halfway through the self-test")

    monkeypatch.setattr(memory, "recall", recall_fails)  # the failure is injected after a real remember
    check = doctor._self_test(memory)
    assert check.status == "FAIL" and "recall broke" in check.detail
    left = memory.store.all_bullets()
    assert [b.content for b in left] == ["A bullet of the user that the self-test must not touch"]


def test_doctor_reports_a_data_file_cut_short_as_a_failure_with_the_fix(
    tmp_path: Path, filled: Callable[..., Path]
) -> None:
    home = tmp_path / "home"
    damage(filled(home), "data file cut short")
    checks = doctor.run_checks(load_settings(home=home), tmp_path, Places(tmp_path, tmp_path))
    store_check = next(c for c in checks if c.name == "store")
    assert store_check.status == "FAIL" and "cut short" in store_check.detail
    assert "memx repair" in store_check.fix
    assert all(c.name != "self-test" for c in checks)  # no test bullet written into a broken store
