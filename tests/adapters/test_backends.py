"""Which model reads sessions (issue 27): the one the user already has, in a fixed order, each found for a
reason memx can say; a real OpenAI-compatible server on loopback as one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memx_mcp.adapters.backends import Choice, choose_backend, make_refiner, refiner_for
from memx_mcp.adapters.coding_cli import CLIRefiner
from memx_mcp.adapters.openai_compat import OpenAIRefiner
from memx_mcp.config import CHILD_MARKER, Settings
from memx_mcp.domain.backends import BACKENDS, Backend, backend_names
from memx_mcp.domain.errors import InvalidInputError, RateLimited
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.readings.model import Refiner
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer

from ..engine.reflector.test_pipeline import EPISODE
from ..engine.reflector.test_session_mode import FIX
from ..openai_api import ChatCompletionsAPI


def programs(tmp_path: Path, *names: str) -> dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    found = {}
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
        found[name] = str(folder / name)
    return found


def choose(tmp_path: Path, env: dict[str, str], installed: dict[str, str], **settings: str) -> tuple[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    s = Settings(home=tmp_path / "data", **settings)  # type: ignore[arg-type]
    c = choose_backend(s, env=env, which=installed.get, home=home)
    return c.backend, c.reason


def test_auto_takes_the_first_backend_the_user_has_in_order(tmp_path: Path) -> None:
    installed = programs(tmp_path, "claude", "codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text("{}")
    assert choose(tmp_path, {"ANTHROPIC_API_KEY": "k"}, installed) == ("anthropic", "ANTHROPIC_API_KEY is set")
    backend, why = choose(tmp_path, {}, installed, openai_base_url="http://127.0.0.1:11434/v1", openai_model="m")
    assert backend == "openai" and "127.0.0.1:11434" in why
    backend, why = choose(tmp_path, {}, installed)  # claude is installed but not logged in: codex is
    assert backend == "codex-cli" and "logged in (~/.codex/auth.json)" in why
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    assert choose(tmp_path, {}, installed)[0] == "claude-cli"


def test_with_nothing_there_is_no_backend_and_the_reason_names_each_one(tmp_path: Path) -> None:
    backend, why = choose(tmp_path, {}, {})
    assert backend == "" and "no ANTHROPIC_API_KEY" in why and "no `claude` installed" in why and "gemini" in why


def test_inside_a_model_call_memx_started_there_is_never_a_backend(tmp_path: Path) -> None:
    backend, why = choose(tmp_path, {CHILD_MARKER: "1", "ANTHROPIC_API_KEY": "k"}, {})
    assert backend == "" and "inside a model call" in why


def test_a_named_backend_is_the_only_one_tried(tmp_path: Path) -> None:
    backend, why = choose(tmp_path, {"ANTHROPIC_API_KEY": "k"}, {}, llm_backend="gemini-cli")
    assert backend == "" and why == "no `gemini` installed"
    assert choose(tmp_path, {"ANTHROPIC_API_KEY": "k"}, {}, llm_backend="none") == ("", "llm_backend is none")


def test_a_merge_under_the_write_lock_never_starts_a_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed = programs(tmp_path, "claude")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "t")
    s = Settings(home=tmp_path / "data", cli_paths=f"claude={installed['claude']}")
    refiner, _ = make_refiner(s, "m", "", 5.0)
    assert isinstance(refiner, CLIRefiner) and refiner.program == installed["claude"]
    refiner, note = make_refiner(s, "m", "", 5.0, purpose="merge")
    assert refiner is None and "rules" in note


def test_the_claude_child_gets_no_tools_no_hooks_no_saved_session(tmp_path: Path) -> None:
    argv, stdin = CLIRefiner("claude-cli", "/bin/claude", "claude-haiku-4-5").command("SYS", "PROMPT", tmp_path / "a")
    assert stdin == "PROMPT" and argv[argv.index("--tools") + 1] == "" and "--no-session-persistence" in argv
    assert "--safe-mode" in argv and argv[argv.index("--setting-sources") + 1] == "" and "--strict-mcp-config" in argv
    argv, _ = CLIRefiner("codex-cli", "/bin/codex").command("SYS", "PROMPT", tmp_path / "a")
    assert argv[1:3] == ["exec", "--ephemeral"] and "read-only" in argv and "notify=[]" in argv


def test_an_openai_compatible_server_reads_the_session(tmp_path: Path) -> None:
    with ChatCompletionsAPI(lessons=[FIX]).running() as api:
        refiner = OpenAIRefiner(api.url, "qwen2.5-coder", "", 5.0)
        report = Reflector(PrivacySanitizer(), "session", refiner).reflect(parse_transcript(EPISODE))
    assert [b.content for b in report.bullets] == [FIX["lesson"]] and report.llm_calls == 1
    (sent,) = api.requests
    assert sent["path"] == "/v1/chat/completions" and sent["model"] == "qwen2.5-coder"
    assert report.llm_input_tokens > 0


def test_an_openai_compatible_rate_limit_is_said_with_its_wait() -> None:
    with ChatCompletionsAPI(behaviour="limited").running() as api:
        refiner = OpenAIRefiner(api.url, "m", "", 5.0)
        with pytest.raises(RateLimited) as raised:
            refiner.complete("s", "p", 10)
    assert raised.value.retry_after == 90


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_every_backend_declares_every_capability_of_the_model_port(
    backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    settings = Settings(home=tmp_path, openai_base_url="http://127.0.0.1:9/v1", openai_model="m")
    choice = Choice(backend.name, "a test", "/bin/sh" if backend.program else "")
    refiner = refiner_for(choice, settings, "m", "http://127.0.0.1:9", 1.0)
    declared = [n for n in vars(Refiner) if not n.startswith("_")] + list(Refiner.__annotations__)
    assert {"lessons", "consolidate", "write", "check", "failures", "backend"} <= set(declared)
    assert isinstance(refiner, Refiner) and refiner.backend == backend.name
    missing = [n for n in declared if not hasattr(refiner, n)]
    assert not missing, f"{backend.name} lacks {missing}"


def test_the_settings_take_the_backends_from_the_one_list(tmp_path: Path) -> None:
    for name in (*backend_names(), "auto", "none"):
        assert Settings(home=tmp_path, llm_backend=name).llm_backend == name
    with pytest.raises(InvalidInputError, match=", ".join(backend_names())):
        Settings(home=tmp_path, llm_backend="gpt")
