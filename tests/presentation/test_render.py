from __future__ import annotations

import math
import re
from collections.abc import Iterator

import pytest

from memx_mcp.memory import Memory
from memx_mcp.presentation import render
from memx_mcp.presentation.schemas import RecallOut, StatsOut

from ..conftest import Clock


@pytest.fixture
def colour() -> Iterator[None]:
    render.use_color(True)
    yield
    render.use_color(False)


STATS = StatsOut(
    total=3,
    active=2,
    archived=1,
    by_scope={"global": 2},
    by_section={"GENERAL": 2},
    by_type={"METHOD": 2},
    open_conflicts=0,
    model="m",
    model_note="loaded",
    home="/h",
    store_bytes=0,
    decay_histogram={"permanent": 1, "<0.02 (gc)": 1},
)


def test_plain_text_by_default_with_the_histogram_drawn() -> None:
    text = render.stats_text(STATS)
    assert "\033[" not in text
    assert "permanent" in text and "#" * 30 in text
    assert (
        render.check_line("FAIL", "store", "cannot open", "do this")
        == "FAIL  store       cannot open\n      fix: do this"
    )


def test_colours_only_when_switched_on(colour: None) -> None:
    assert "\033[1m" in render.stats_text(STATS)
    assert render.check_line("OK", "python", "3.11", "").startswith("\033[32mOK  \033[0m")


def test_printable_writes_out_every_control_character_but_newline_and_tab(colour: None) -> None:
    osc52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
    stats = STATS.model_copy(update={"by_scope": {f"project:{osc52}": 2}, "model_note": "ok\x9b2J\x00\tand\nmore"})
    text = render.stats_text(render.printable(stats))
    assert "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in text and "ok\\x9b2J\\x00\tand\nmore" in text
    assert "\x07" not in text and "\x9b" not in text and "\x00" not in text
    assert all(part.startswith(("[", "\\x1b]52")) for part in text.split("\x1b")[1:])  # only our own colours


FACTORS = re.compile(
    r"final (?P<final>[\d.]+) = blended (?P<blended>[\d.]+) × decay (?P<decay>[\d.]+) \(weight [\d.]+\)"
    r" × recency (?P<recency>[\d.]+) × scope (?P<scope>[\d.]+)"
)


def test_the_printed_factors_of_a_recall_multiply_to_the_printed_score(memory: Memory, clock: Clock) -> None:
    """Issue 33: a bullet of the workspace's project was printed `scope 1.1` while the fusion used 1.15."""
    workspace = "project:demo/workspace:api"
    memory.remember("Run the api tests with pytest -n auto to use every core", scope="project:demo")
    memory.remember("The api workspace's pytest suite needs the docker compose stack up first", scope=workspace)
    memory.remember("pytest fixtures for the api live in tests/conftest.py", scope="global")
    clock.advance(days=40)  # decay below 1 and no recency boost for these three
    memory.remember("Mark the slow api pytest tests with @pytest.mark.slow", scope=workspace)
    text = render.recall_text(RecallOut.of(memory.recall("api pytest tests", scope=workspace, reinforce=False)))
    printed = [{k: float(v) for k, v in m.groupdict().items()} for m in FACTORS.finditer(text)]
    assert len(printed) == 4, text
    for p in printed:
        assert math.isclose(p["blended"] * p["decay"] * p["recency"] * p["scope"], p["final"], abs_tol=2e-4), text
    assert {p["scope"] for p in printed} == {1.3, 1.15, 1.0}  # the workspace, its project, global
    assert {p["recency"] for p in printed} == {1.05, 1.0} and min(p["decay"] for p in printed) < 1.0
