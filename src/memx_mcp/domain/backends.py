"""The model backends memx can read sessions with, listed once, in the order ``auto`` tries them. The settings
(``llm_backend``), the adapters that find and build each one (``adapters/backends.py``) and their tests take
the list from here."""

from __future__ import annotations

from dataclasses import dataclass

AUTO = "auto"  # the first backend this machine has, in ``BACKENDS`` order
NONE = "none"  # no model: the rules alone


@dataclass(frozen=True)
class Backend:
    name: str
    program: str = ""  # a coding CLI in headless mode: the program it runs ("" for an HTTP API)

    @property
    def http(self) -> bool:
        """An HTTP API: quick enough for a merge under the store's write lock (a CLI's start-up is not)."""
        return not self.program


BACKENDS = (
    Backend("anthropic"),  # ANTHROPIC_API_KEY is set
    Backend("openai"),  # openai_base_url is configured (Ollama, llama.cpp, LM Studio, a hosted server)
    Backend("claude-cli", "claude"),  # the user's Claude Code, logged in
    Backend("codex-cli", "codex"),  # the user's Codex CLI, logged in
    Backend("gemini-cli", "gemini"),  # the user's Gemini CLI, logged in
)


def backend_names() -> tuple[str, ...]:
    return tuple(b.name for b in BACKENDS)


def setting_values() -> tuple[str, ...]:
    """Every value ``llm_backend`` may take."""
    return (AUTO, *backend_names(), NONE)
