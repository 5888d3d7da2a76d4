"""Reading modes are registered once (readings/registry.py): adding one is its module plus its registration,
and every list of modes (the settings, the CLI's --mode, the MCP tool, `memx doctor`) takes it from there."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memx_mcp.cli.doctor import _reflector
from memx_mcp.cli.parser import build_parser
from memx_mcp.config import Settings, reflector_modes
from memx_mcp.domain.errors import InvalidInputError
from memx_mcp.engine.reflector.readings import registry
from memx_mcp.engine.reflector.readings.keeper import Keeper
from memx_mcp.engine.reflector.readings.report import Progress, ReflectReport
from memx_mcp.engine.reflector.rules.structural import Candidate
from memx_mcp.engine.reflector.transcripts.transcript import Transcript
from memx_mcp.memory import Memory
from memx_mcp.server.app import build_server
from memx_mcp.usecases.reflect import read_transcript, reflect

SESSION = (
    Path(__file__).parents[3] / "benchmarks" / "data" / "transcripts" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
)


class AskedReading(Keeper):
    """A mode written for this test, in one class: what the person asked for, each request a bullet, kept
    (or dropped, with its reason) by the shared keeper."""

    name = "asked"

    def read(
        self,
        t: Transcript,
        start: int,
        candidates: list[Candidate],
        report: ReflectReport,
        known: Sequence[str],
        progress: Progress | None,
    ) -> None:
        asked = [s for s in t.steps[start:] if s.role == "user" and len(s.text.split()) >= 6][:3]
        report.events = len(asked)
        for s in asked:
            text = "The user asked: " + " ".join(s.text.split())[:300]
            self._add(report, self.sanitizer.mask(text), "AskedRule", s.index, s.turn, 60.0, 0.6, "asked", None, None)


@pytest.fixture
def asked_mode() -> Iterator[registry.ReadingMode]:
    mode = registry.ReadingMode("asked", "keeps what the person asked for", lambda: AskedReading, needs_model=False)
    registry.register(mode)
    yield mode
    registry.unregister(mode.name)


def test_a_mode_added_in_one_class_and_its_registration_reads_a_real_session_into_the_store(
    asked_mode: registry.ReadingMode, memory: Memory
) -> None:
    result = reflect(memory.deps, read_transcript(SESSION), path=SESSION, mode="asked")
    assert result.report.mode == "asked" and result.report.bullets and result.stored
    assert all(b.source == "asked" and b.content.startswith("The user asked: ") for b in result.report.bullets)
    assert not any("rules mode" in n for n in result.report.notes)  # the mode needs no model: no "rules" note


def test_every_list_of_modes_takes_the_registered_one(asked_mode: registry.ReadingMode, tmp_path: Path) -> None:
    assert "asked" in reflector_modes()
    settings = Settings(home=tmp_path, reflector_mode="asked", hook_reflector_mode="asked")  # validation
    assert settings.reflector_mode == "asked"
    args = build_parser().parse_args(["reflect", str(SESSION), "--mode", "asked"])  # the CLI's choices
    assert args.mode == "asked"
    check = _reflector(settings)  # doctor says what it does, and that nothing is sent anywhere
    assert "keeps what the person asked for" in check.detail and "nothing is sent" in check.detail
    tools = asyncio.run(build_server(settings).list_tools())  # the MCP reflect tool's schema
    mode = next(t for t in tools if t.name == "reflect").input_schema["properties"]["mode"]
    assert "asked" in mode["enum"] and "session" in mode["enum"]


def test_an_unregistered_mode_is_refused_everywhere_with_the_list(tmp_path: Path) -> None:
    assert "asked" not in reflector_modes()
    with pytest.raises(InvalidInputError, match="auto, rules, session, hybrid, llm"):
        Settings(home=tmp_path, reflector_mode="asked")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["reflect", str(SESSION), "--mode", "asked"])
    with pytest.raises(InvalidInputError, match="not 'asked'"):
        registry.mode("asked")


def test_auto_reads_with_a_model_when_there_is_one_and_is_no_mode_of_its_own() -> None:
    assert registry.names()[0] == "auto" and registry.mode("auto").name == "session"
    assert registry.mode("auto").whole_session and not registry.mode("rules").needs_model
    with pytest.raises(ValueError):
        registry.register(registry.ReadingMode("auto", "", lambda: AskedReading))
