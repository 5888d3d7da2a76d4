"""Memory back by itself in the clients' own programs, end to end: `memx install CLIENT` on a fresh HOME, the
client's real CLI run headless against a loopback model server that speaks its API, and the bullet memx
holds is in the request the model received, put there by the hooks memx installed. Needs the CLIs from npm
(`npm i @openai/codex @google/gemini-cli @github/copilot`, over 700 MB and more than a minute, so `.ci/run`
does not install them; `MEMX_TEST_CODEX`, `MEMX_TEST_GEMINI`, `MEMX_TEST_COPILOT` name the binaries);
skipped without them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .chat_stream_api import StreamingChatAPI
from .gemini_api import GeminiAPI
from .helpers import env_for
from .responses_api import ResponsesAPI

CODEX = os.environ.get("MEMX_TEST_CODEX") or shutil.which("codex")
COPILOT = os.environ.get("MEMX_TEST_COPILOT") or shutil.which("copilot")
GEMINI = os.environ.get("MEMX_TEST_GEMINI") or shutil.which("gemini")
FACT = "Run this project's test suite with make check, never with pytest directly"
PROMPT = "How should I run the test suite of this project?"


def _user(tmp_path: Path, cli: str) -> tuple[Path, dict[str, str]]:
    """A fresh user: HOME, a git project, memx's data folder holding FACT, the CLI and memx on PATH."""
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    env = {k: v for k, v in env_for(tmp_path / "data").items() if k not in ("VIRTUAL_ENV", "CODEX_HOME")}
    path = os.pathsep.join([str(Path(sys.executable).parent), str(Path(cli).parent), "/usr/bin", "/bin"])
    # PWD as a shell in the project sets it: Copilot CLI takes its working directory from it
    env = {**env, "HOME": str(home), "PATH": path, "PWD": str(proj), "MEMX_HOOK_DAEMON_IDLE_MINUTES": "1"}
    memx = str(Path(sys.executable).parent / "memx")
    done = subprocess.run([memx, "remember", FACT], cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return proj, env


def _memx(proj: Path, env: dict[str, str], *args: str) -> str:
    memx = str(Path(sys.executable).parent / "memx")
    done = subprocess.run([memx, *args], cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.skipif(not CODEX, reason="Codex CLI is not installed (npm i @openai/codex; MEMX_TEST_CODEX)")
def test_codex_exec_sends_the_model_what_memx_knows_through_the_hooks_memx_install_wrote(tmp_path: Path) -> None:
    proj, env = _user(tmp_path, str(CODEX))
    codex_home = Path(env["HOME"]) / ".codex"
    codex_home.mkdir()
    with ResponsesAPI().running() as api:
        provider = f'[model_providers.loopback]\nname = "loopback"\nbase_url = "{api.url}"\nwire_api = "responses"\n'
        (codex_home / "config.toml").write_text(f'model = "gpt-5.4"\nmodel_provider = "loopback"\n\n{provider}')
        said = _memx(proj, env, "install", "codex")
        assert "trust memx's hooks once in Codex (/hooks)" in said
        # Codex runs a hook the user has not trusted in its /hooks screen only with this flag, for one run
        argv = [str(CODEX), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", PROMPT]
        done = subprocess.run(
            argv, cwd=proj, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "hook: SessionStart Completed" in done.stderr + done.stdout
    (request,) = [r for r in api.requests if r["path"].endswith("/responses")]
    sent = [json.dumps(item) for item in request["input"]]
    added = [s for s in sent if FACT in s]
    assert added and "memx-notes" in added[0], sent  # framed as memx's notes, not as the user's words
    _memx(proj, env, "uninstall", "codex")
    assert "memx" not in (codex_home / "config.toml").read_text() and not (codex_home / "hooks.json").exists()


@pytest.mark.skipif(not COPILOT, reason="Copilot CLI is not installed (npm i @github/copilot; MEMX_TEST_COPILOT)")
def test_copilot_cli_sends_the_model_what_memx_knows_from_its_session_start_hook(tmp_path: Path) -> None:
    proj, env = _user(tmp_path, str(COPILOT))
    _memx(proj, env, "install", "copilot-cli")
    # the warm helper started as `memx doctor` starts it: its first start (the model loading on a machine
    # shared with other tests) is not what this test measures
    warm = subprocess.run(
        [str(Path(sys.executable).parent / "memx"), "hook", "copilot-cli"],
        input=json.dumps({"sessionId": "warm-up", "cwd": str(proj), "source": "new"}),
        cwd=proj, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert warm.returncode == 0 and FACT in warm.stdout, warm
    with StreamingChatAPI().running() as api:
        # Copilot CLI's own "bring your own key" mode: a local provider, no GitHub sign-in, no other network
        byok = {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": api.url, "COPILOT_MODEL": "gpt-4.1"}
        argv = [str(COPILOT), "-p", PROMPT, "--allow-all-tools", "-s"]
        # with stdin open (pytest's), Copilot CLI's -p run dropped the hook's context every time: none here
        done = subprocess.run(
            argv, cwd=proj, env={**env, **byok}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
    # Copilot's own record of the session: memx's hooks ran on its sessionStart and userPromptSubmitted with
    # its payloads, and handed it the bullet as additionalContext
    (events,) = (Path(env["HOME"]) / ".copilot" / "session-state").glob("*/events.jsonl")
    hooks = [json.loads(line)["data"] for line in events.read_text().splitlines() if '"hook.' in line]
    ran = {h["hookType"] for h in hooks if "input" in h}
    assert ran == {"sessionStart", "userPromptSubmitted"}, hooks
    given = [h["output"]["additionalContext"] for h in hooks if h.get("success") and h.get("output")]
    assert any(FACT in text and "memx-notes" in text for text in given), hooks
    (request,) = [r for r in api.requests if r["path"].endswith("/chat/completions")]
    sent = [str(m.get("content")) for m in request["messages"]]
    assert any("what this project has learned" in s and FACT in s for s in sent), sent  # the session start
    # the prompt hook answered nothing: the bullet was handed back once in this session already
    _memx(proj, env, "uninstall", "copilot-cli")
    assert not (Path(env["HOME"]) / ".copilot" / "mcp-config.json").exists()


@pytest.mark.skipif(not GEMINI, reason="Gemini CLI is not installed (npm i @google/gemini-cli; MEMX_TEST_GEMINI)")
def test_gemini_cli_sends_the_model_what_memx_knows_through_the_hooks_memx_install_wrote(tmp_path: Path) -> None:
    proj, env = _user(tmp_path, str(GEMINI))
    _memx(proj, env, "install", "gemini")
    folder = Path(env["HOME"]) / ".gemini"
    settings = json.loads((folder / "settings.json").read_text())
    settings["security"] = {"auth": {"selectedType": "gemini-api-key"}}  # as Gemini's own sign-in dialog sets it
    (folder / "settings.json").write_text(json.dumps(settings))
    (folder / "trustedFolders.json").write_text(json.dumps({str(proj): "TRUST_FOLDER"}))  # its trust dialog
    with GeminiAPI().running() as api:
        key = {"GEMINI_API_KEY": "loopback", "GOOGLE_GEMINI_BASE_URL": api.url}
        argv = [str(GEMINI), "-m", "gemini-2.5-flash", "-p", PROMPT]
        done = subprocess.run(
            argv, cwd=proj, env={**env, **key}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
    turns = [r for r in api.requests if "GenerateContent" in r["path"] and PROMPT in json.dumps(r["contents"])]
    assert turns, [r["path"] for r in api.requests]
    sent = json.dumps(turns[-1]["contents"])
    assert FACT in sent and "<hook_context>" in sent, sent  # SessionStart's context, as Gemini adds a hook's
    _memx(proj, env, "uninstall", "gemini")
    assert "memx" not in (folder / "settings.json").read_text()
