"""CLIRefiner: the Reflector's model through the coding CLI the user already has and is logged in to,
in its headless mode: Claude Code (``claude -p``), Codex (``codex exec``), Gemini CLI (``gemini -p``).

The child is a model call, not a session of the user's: it gets no tools, loads no hooks, MCP servers or
project settings, is not saved where the client lists sessions, and runs in an empty folder. Every memx hook
returns at once when it sees ``CHILD_MARKER`` in its environment, which the child inherits: a hook the child
fires anyway cannot start another reflection. A plan's usage or rate limit raises ``RateLimited``.

The session's text reaches the child on its standard input, read from a file only memx can read, never on
its command line (``child_process.py``): ``claude -p`` reads the prompt from stdin, ``codex exec -``
too, and ``gemini -p`` appends its (fixed) argument to what stdin holds. The child's output is capped, its
call has one deadline, and its whole process group is ended with it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..config import CHILD_MARKER
from ..domain.errors import RateLimited
from ..engine.reflector.readings.prompting import PromptRefiner
from .child_process import MAX_OUTPUT, OutputTooLarge, private_folder, run_bounded, write_private

# gemini -p appends its argument to stdin: the request is all on stdin, this line only says so
GEMINI_ARGUMENT = "Answer the request above, as it asks."

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
    def __init__(
        self, backend: str, program: str, model: str = "", timeout: float = 240.0, max_output: int = MAX_OUTPUT
    ) -> None:
        super().__init__()
        self.backend = backend
        self.program = program
        self.model = model
        self.timeout = timeout
        self.max_output = max_output

    def command(self, system: str, prompt: str, answer_file: Path) -> tuple[list[str], str]:
        """The command line and its standard input for one call: the session's text is only ever on stdin."""
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
        return [*argv, "-p", GEMINI_ARGUMENT], f"{system}\n\n{prompt}"

    def environment(self) -> dict[str, str]:
        env = child_environment()
        if self.backend == "claude-cli":  # no session title or other calls beside the one asked for, and
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"  # one retry at most: memx falls back or
            env["CLAUDE_CODE_MAX_RETRIES"] = "1"  # queues the session itself (a 500 cost 3 minutes of retries)
        return env

    def complete(self, system: str, prompt: str, max_tokens: int) -> str:
        with private_folder() as folder:
            answer_file = folder / "answer.txt"
            argv, stdin = self.command(system, prompt, answer_file)
            try:
                done = run_bounded(
                    argv,
                    stdin=write_private(folder / "prompt.txt", stdin),
                    cwd=folder / "work",
                    env=self.environment(),
                    timeout=self.timeout,
                    limit=self.max_output,
                )
            except TimeoutError as exc:
                raise TimeoutError(f"{self.backend} took longer than {self.timeout:.0f} s: ended") from exc
            except OutputTooLarge as exc:
                raise OutputTooLarge(f"{self.backend} {exc}: ended") from exc
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
            text = _read_capped(answer_file, self.max_output) if answer_file.is_file() else ""
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


def _read_capped(path: Path, limit: int) -> str:
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OutputTooLarge(f"the answer file is over {limit // (1024 * 1024)} MiB")
    return data.decode("utf-8", "replace")
