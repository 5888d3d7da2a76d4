"""Which model reads the user's sessions: the one they already have, found in a fixed order (``auto``) or
named in ``llm_backend``. Nothing is sent anywhere the user did not configure or already use: an API key
they set, an endpoint they configured, or a coding CLI they are logged in to.

    anthropic   ANTHROPIC_API_KEY is set
    openai      openai_base_url is configured (a local Ollama / llama.cpp / LM Studio server, or hosted)
    claude-cli  `claude` is installed and logged in (credentials file, OAuth token or API key)
    codex-cli   `codex` is installed and logged in (~/.codex/auth.json, or an API key)
    gemini-cli  `gemini` is installed and logged in (~/.gemini/oauth_creds.json, or an API key)

With none of them memx runs the rules, the quiet floor, and says how to enable learning."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config import CHILD_MARKER, Settings
from ..domain.backends import AUTO, BACKENDS, NONE
from ..engine.reflector.readings.model import Refiner

ORDER = tuple(b.name for b in BACKENDS)
HTTP_BACKENDS = tuple(b.name for b in BACKENDS if b.http)
_PROGRAMS = {b.name: b.program for b in BACKENDS if b.program}


@dataclass(frozen=True)
class Choice:
    backend: str  # "" when there is none
    reason: str
    program: str = ""  # the CLI backends: the program's path


Which = Callable[[str], str | None]


def _logged_in(backend: str, env: Mapping[str, str], home: Path) -> str:
    """How the CLI is logged in ('' when it is not, as far as can be seen without running it)."""
    if backend == "claude-cli":
        for var in ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"):
            if env.get(var, "").strip():
                return var
        if (home / ".claude" / ".credentials.json").is_file():
            return "~/.claude/.credentials.json"
        try:  # macOS keeps the token in the keychain; the account is recorded here
            account = json.loads((home / ".claude.json").read_text(encoding="utf-8")).get("oauthAccount")
        except (OSError, ValueError, AttributeError):
            account = None
        return "a Claude account (~/.claude.json)" if account else ""
    if backend == "codex-cli":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        if (codex_home / "auth.json").is_file():
            return f"{'$CODEX_HOME' if env.get('CODEX_HOME') else '~/.codex'}/auth.json"
        return next((v for v in ("CODEX_API_KEY", "OPENAI_API_KEY") if env.get(v, "").strip()), "")
    if (home / ".gemini" / "oauth_creds.json").is_file():
        return "~/.gemini/oauth_creds.json"
    return next((v for v in ("GEMINI_API_KEY", "GOOGLE_API_KEY") if env.get(v, "").strip()), "")


def _cli_paths(settings: Settings) -> dict[str, str]:
    pairs = (p.split("=", 1) for p in settings.cli_paths.replace(",", ";").split(";") if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs}


def _available(backend: str, settings: Settings, env: Mapping[str, str], which: Which, home: Path) -> Choice:
    if backend == "anthropic":
        if env.get("ANTHROPIC_API_KEY", "").strip():
            return Choice(backend, "ANTHROPIC_API_KEY is set")
        return Choice("", "no ANTHROPIC_API_KEY")
    if backend == "openai":
        if settings.openai_base_url:
            return Choice(backend, f"openai_base_url is {settings.openai_base_url} (model {settings.openai_model})")
        return Choice("", "no openai_base_url configured")
    name = _PROGRAMS[backend]
    program = _cli_paths(settings).get(name) or which(name) or ""
    if not program or not Path(program).is_file():
        return Choice("", f"no `{name}` installed")
    login = _logged_in(backend, env, home)
    if not login:
        return Choice("", f"`{name}` at {program} is not logged in")
    return Choice(backend, f"`{name}` at {program}, logged in ({login})", program)


def choose_backend(
    settings: Settings,
    env: Mapping[str, str] | None = None,
    which: Which = shutil.which,
    home: Path | None = None,
    http_only: bool = False,
) -> Choice:
    """The backend memx would use, and why; ``Choice("", why)`` when there is none. Inside a model call memx
    started itself (``CHILD_MARKER``) there is never one: no reflection starts another."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    if env.get(CHILD_MARKER):
        return Choice("", "memx runs inside a model call it started: no model is asked from here")
    wanted = settings.llm_backend
    if wanted == NONE:
        return Choice("", "llm_backend is none")
    order: tuple[str, ...] = ORDER if wanted == AUTO else (wanted,)
    if http_only:
        order = tuple(b for b in order if b in HTTP_BACKENDS)
    reasons = []
    for backend in order:
        found = _available(backend, settings, env, which, home)
        if found.backend:
            return (
                found
                if wanted == AUTO
                else Choice(found.backend, f"llm_backend is {wanted}: {found.reason}", found.program)
            )
        reasons.append(found.reason)
    return Choice("", "; ".join(reasons) or "no model backend")


ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"  # the anthropic SDK's own default


def asked(choice: Choice, settings: Settings, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Which model a chosen backend asks and where, as memx will call it: `memx doctor` names both. The
    Anthropic SDK and Claude Code follow ``ANTHROPIC_BASE_URL`` when ``llm_base_url`` is empty."""
    env = os.environ if env is None else env
    anthropic_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    if choice.backend == "anthropic":
        if settings.llm_base_url:
            return settings.llm_model, f"{settings.llm_base_url} (llm_base_url)"
        if anthropic_url:
            return settings.llm_model, f"{anthropic_url} (ANTHROPIC_BASE_URL)"
        return settings.llm_model, ANTHROPIC_DEFAULT_URL
    if choice.backend == "openai":
        return settings.openai_model, settings.openai_base_url
    model = settings.cli_model or (settings.llm_model if choice.backend == "claude-cli" else "")
    if choice.backend == "claude-cli":
        where = f"{anthropic_url} (ANTHROPIC_BASE_URL)" if anthropic_url else "Claude Code's own account"
    else:
        where = f"{Path(choice.program).name}'s own account"
    return model or f"{Path(choice.program).name}'s default model", where


def make_refiner(
    settings: Settings, model: str, base_url: str, timeout: float, purpose: str = "reflect"
) -> tuple[Refiner | None, str]:
    """The refiner of the chosen backend (its library loaded only now), or None and why. A merge under the
    store's write lock (``purpose="merge"``) asks only an HTTP backend: a CLI's start-up is too slow there."""
    choice = choose_backend(settings, http_only=purpose == "merge")
    if not choice.backend:
        return None, f"no model to read sessions ({choice.reason}): the Reflector ran in rules mode"
    try:
        return refiner_for(choice, settings, model, base_url, timeout), ""
    except Exception as exc:  # a library missing or misconfigured: rules still work
        return None, f"{choice.backend} unavailable ({type(exc).__name__}): the Reflector ran in rules mode"


def refiner_for(choice: Choice, settings: Settings, model: str, base_url: str, timeout: float) -> Refiner:
    """The refiner of a chosen backend, its library loaded only now."""
    if choice.backend == "anthropic":
        from .anthropic import AnthropicRefiner

        key = os.environ["ANTHROPIC_API_KEY"].strip()
        return AnthropicRefiner(key, model, base_url, timeout)
    if choice.backend == "openai":
        from .openai_compat import OpenAIRefiner

        key = os.environ.get("MEMX_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or ""
        return OpenAIRefiner(settings.openai_base_url, settings.openai_model, key, timeout)
    from .coding_cli import CLIRefiner

    cli_model = settings.cli_model or (settings.llm_model if choice.backend == "claude-cli" else "")
    return CLIRefiner(choice.backend, choice.program, cli_model, timeout)
