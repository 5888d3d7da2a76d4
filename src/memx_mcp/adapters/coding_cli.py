"""CLIRefiner: the Reflector's model through the coding CLI the user already has and is logged in to,
in its headless mode: Claude Code (``claude -p``), Codex (``codex exec``), Gemini CLI (``gemini -p``).

The child is a model call, not a session of the user's: it gets no tools, loads no hooks, MCP servers or
project settings, is not saved where the client lists sessions, and runs in an empty folder. Every memx hook
returns at once when it sees ``CHILD_MARKER`` in its environment, which the child inherits: a hook the child
fires anyway cannot start another reflection. A plan's usage or rate limit raises ``RateLimited``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..config import CHILD_MARKER
from ..domain.errors import RateLimited
from ..engine.reflector.readings.prompting import PromptRefiner

_LIMITED = re.compile(
    r"rate.?limit|\b429\b|usage limit|session limit|limit reached|quota|too many requests|resets? (?:at|in)\b|"
    r"overloaded",
    re.I,
)


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env[CHILD_MARKER] = "1"
    return env


class CLIRefiner(PromptRefiner):
    def __init__(self, backend: str, program: str, model: str = "", timeout: float = 240.0) -> None:
        super().__init__()
        self.backend = backend
        self.program = program
        self.model = model
        self.timeout = timeout

    def command(self, system: str, prompt: str, answer_file: Path) -> tuple[list[str], str]:
        """The command line and its standard input for one call."""
        if self.backend == "claude-cli":
            argv = [
                self.program, "-p", "--output-format", "json", "--no-session-persistence", "--safe-mode",
                "--tools", "", "--strict-mcp-config", "--setting-sources", "", "--system-prompt", system,
            ]  # fmt: skip
            return [*argv, *(["--model", self.model] if self.model else [])], prompt
        if self.backend == "codex-cli":
            argv = [
                self.program, "exec", "--ephemeral", "--skip-git-repo-check", "-s", "read-only", "-c", "notify=[]",
                "--color", "never", "--output-last-message", str(answer_file),
            ]  # fmt: skip
            return [*argv, *(["-m", self.model] if self.model else []), "-"], f"{system}\n\n{prompt}"
        argv = [self.program, "--output-format", "json", *(["-m", self.model] if self.model else [])]
        return [*argv, "-p", f"{system}\n\n{prompt}"], ""

    def environment(self) -> dict[str, str]:
        env = child_environment()
        if self.backend == "claude-cli":  # no session title or other calls beside the one asked for, and
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"  # one retry at most: memx falls back or
            env["CLAUDE_CODE_MAX_RETRIES"] = "1"  # queues the session itself (a 500 cost 3 minutes of retries)
        return env

    def complete(self, system: str, prompt: str, max_tokens: int) -> str:
        with tempfile.TemporaryDirectory(prefix="memx-model-") as folder:
            answer_file = Path(folder) / "answer.txt"
            argv, stdin = self.command(system, prompt, answer_file)
            try:
                done = subprocess.run(
                    argv,
                    input=stdin,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    timeout=self.timeout,
                    cwd=folder,
                    env=self.environment(),
                    start_new_session=True,  # a hook's deadline killing memx never leaves this child behind
                )
            except subprocess.TimeoutExpired as exc:
                raise TimeoutError(f"{self.backend} took longer than {self.timeout:.0f} s") from exc
            text, failed = self._answer(done.stdout, answer_file)
            said = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            reason = _first_line(text if failed and text.strip() else said)  # the CLI's own error, if it said one
            if (done.returncode != 0 or failed) and _LIMITED.search(said):
                raise RateLimited(f"{self.backend}: {reason}")
            if done.returncode != 0 or failed:
                raise RuntimeError(f"{self.backend} exited {done.returncode}: {reason}")
        self._count(len(system) + len(prompt), len(text), *self._usage)
        return text

    _usage: tuple[int, int] = (0, 0)

    def _answer(self, stdout: str, answer_file: Path) -> tuple[str, bool]:
        """The model's text and whether the CLI reported an error."""
        self._usage = (0, 0)
        if self.backend == "codex-cli":
            text = answer_file.read_text(encoding="utf-8") if answer_file.is_file() else ""
            return text, not text.strip()
        data = _last_json(stdout)
        if self.backend == "claude-cli":
            usage = data.get("usage") or {}
            self._usage = (
                int(usage.get("input_tokens") or 0)
                + int(usage.get("cache_read_input_tokens") or 0)
                + int(usage.get("cache_creation_input_tokens") or 0),
                int(usage.get("output_tokens") or 0),
            )
            return str(data.get("result") or ""), bool(data.get("is_error")) or not data
        return str(data.get("response") or ""), "error" in data or not data


def _last_json(stdout: str) -> dict[str, Any]:
    for line in reversed([x for x in stdout.strip().splitlines() if x.strip()] or [""]):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    try:
        whole = json.loads(stdout)
    except ValueError:
        return {}
    return whole if isinstance(whole, dict) else {}


def _first_line(text: str) -> str:
    return next((x.strip()[:200] for x in text.splitlines() if x.strip()), "no output")
