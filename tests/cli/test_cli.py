"""The memx command, run as a user runs it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..helpers import env_for, script, warm_helper


def memx(home: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*script("memx"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        cwd=cwd or home.parent,  # outside any git repository: the global scope
        env=env_for(home, **env),
        timeout=120,
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_readme_acceptance_remember_then_recall(tmp_path: Path) -> None:
    d = tmp_path / "D"
    text = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"
    stored = as_json(memx(d, "remember", text, "--json"))
    assert stored["action"] == "inserted"
    found = as_json(memx(d, "recall", "make the tests run faster", "--json"))
    assert found["mode"] == "hybrid"
    assert found["results"][0]["id"] == stored["bullet"]["id"]
    assert set(found["results"][0]["score"]) == {
        "l1",
        "l2",
        "l3",
        "semantic",
        "keyword",
        "blended",
        "decay",
        "decay_effect",
        "recency",
        "scope",
        "final",
    }
    merged = as_json(
        memx(d, "remember", "Run the suite in parallel with pytest -n auto (needs pytest-xdist)", "--json")
    )
    assert merged["action"] == "merged" and merged["merged_into"] == stored["bullet"]["id"]


def test_readable_tables_without_json_and_stats(tmp_path: Path) -> None:
    d = tmp_path / "D"
    memx(d, "remember", "A Redis pool of 10 connections is enough", "--scope", "project:shop")
    memx(d, "remember", "Redis is only stable with a pool of 50 connections or more", "--scope", "project:shop")
    conflicts = memx(d, "conflicts", "--scope", "project:shop")
    assert conflicts.returncode == 0
    assert "contradiction" in conflicts.stdout and "10 vs 50" in conflicts.stdout
    stats = as_json(memx(d, "stats", "--json"))
    assert stats["active"] == 2 and stats["by_scope"] == {"project:shop": 2} and stats["open_conflicts"] == 1
    assert "bullets: 2" in memx(d, "stats").stdout


def test_forget_and_errors_exit_non_zero_with_a_message(tmp_path: Path) -> None:
    d = tmp_path / "D"
    b = as_json(memx(d, "remember", "The staging database lives in eu-west-1", "--json"))["bullet"]["id"]
    missing = memx(d, "forget", "b_nope")
    assert missing.returncode == 1 and "no bullet with id b_nope" in missing.stderr
    assert as_json(memx(d, "forget", b, "--json"))["archived"] == [b]
    empty = memx(d, "recall", "  ")
    assert empty.returncode == 1 and "query is empty" in empty.stderr
    bad_scope = memx(d, "recall", "x", "--scope", "team:x")
    assert bad_scope.returncode == 1 and "invalid scope" in bad_scope.stderr
    assert "Traceback" not in missing.stderr + empty.stderr + bad_scope.stderr


def test_reindex_re_embeds_a_store_built_without_the_model(tmp_path: Path) -> None:
    d = tmp_path / "D"
    nomodel = tmp_path / "none"
    nomodel.mkdir()
    kw = as_json(memx(d, "recall", "anything", "--json", MEMX_MODEL_PATH=str(nomodel)))
    assert kw["mode"] == "keyword-only"
    memx(d, "remember", "Use pytest -n auto to run the suite in parallel", MEMX_MODEL_PATH=str(nomodel))
    assert as_json(memx(d, "reindex", "--json")) == {"reindexed": 1}
    found = as_json(memx(d, "recall", "make the tests run faster", "--json"))
    assert found["results"][0]["score"]["semantic"] > 0.2


COMMANDS = (
    "remember recall show edit forget conflicts gc restore list export import reflect sanitize hook install "
    "uninstall doctor stats reindex repair ui"
).split()


def test_help_lists_every_command_and_version_answers(tmp_path: Path) -> None:
    helptext = memx(tmp_path, "--help").stdout
    for command in COMMANDS:
        assert command in helptext
    assert memx(tmp_path, "--version").stdout.startswith("memx ")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example_and_a_json_flag(tmp_path: Path, command: str) -> None:
    done = memx(tmp_path, command, "--help")
    assert done.returncode == 0 and "example:" in done.stdout and f"memx {command}" in done.stdout
    # ids are whole (a user who copies `memx edit b_0123` gets "no bullet 'b_0123'": no prefix is looked up)
    for named in re.findall(r"\b[bc]_\w+", done.stdout):
        assert re.fullmatch(r"[bc]_[0-9a-f]{16}", named), named
    assert "--json" in done.stdout or "--json" in memx(tmp_path, "--help").stdout


def test_every_command_answers_in_json(tmp_path: Path) -> None:
    """The commands the warm helper answers go through one (a user with hooks installed has one running);
    the others (export, import, reflect, sanitize, install, uninstall, doctor, reindex) run themselves."""
    d = tmp_path / "D"
    userhome = tmp_path / "user"
    userhome.mkdir()
    env = {"HOME": str(userhome), "USERPROFILE": str(userhome)}
    with warm_helper(d):
        a = as_json(memx(d, "remember", "A Redis pool of 10 connections is enough", "--json"))["bullet"]["id"]
        b = as_json(memx(d, "remember", "Redis is only stable with a pool of 50 connections or more", "--json"))
        assert as_json(memx(d, "recall", "redis pool", "--json"))["results"]
        assert as_json(memx(d, "show", a, "--json"))["decay_weight"] == 1.0
        assert as_json(memx(d, "edit", a, "--tag", "redis", "--json"))["tags"] == ["redis"]
        (conflict,) = as_json(memx(d, "conflicts", "--json"))["conflicts"]
        assert as_json(memx(d, "list", "--json", "--section", "general"))["bullets"]
        assert as_json(memx(d, "gc", "--dry-run", "--json"))["dry_run"] is True
        assert as_json(memx(d, "conflicts", "resolve", conflict["id"], "--keep", "b", "--json"))["kept"] == "b"
        assert as_json(memx(d, "restore", a, "--json"))["bullets"][0]["id"] == a
        assert as_json(memx(d, "forget", "--query", "redis pool", "--json"))["would_forget"]
        exported = memx(d, "export", "--json").stdout.splitlines()
        assert len(exported) == 2 and all(json.loads(line)["id"] for line in exported)
        (tmp_path / "in.jsonl").write_text(json.dumps({"content": "Use uv sync --frozen in CI"}) + "\n")
        assert as_json(memx(d, "import", str(tmp_path / "in.jsonl"), "--json"))["inserted"] == 1
        session = tmp_path / "s.txt"
        session.write_text("User: pytest is slow\nAssistant: run pytest -n auto, it needs pytest-xdist\n")
        assert isinstance(as_json(memx(d, "reflect", str(session), "--dry-run", "--json")), list)
        masked = subprocess.run(
            [*script("memx"), "sanitize", "--json"], input="token=ghp_" + "a1B2" * 9, capture_output=True, text=True
        )
        assert json.loads(masked.stdout)["masked"] == {"api_token": 1}
        assert as_json(memx(d, "install", "cursor", "--dry-run", "--json", **env))["files"][0]["changed"]
        assert as_json(memx(d, "uninstall", "cursor", "--dry-run", "--json", **env))["files"][0]["changed"] is False
        doctor = as_json(memx(d, "doctor", "--json", **env))
        assert doctor["ok"] and {c["name"] for c in doctor["checks"]} >= {"store", "model", "self-test", "clients"}
        stats = as_json(memx(d, "stats", "--json"))
        assert stats["active"] == 3 and sum(stats["decay_histogram"].values()) == 3  # the self-test left nothing
        assert as_json(memx(d, "reindex", "--json")) == {"reindexed": 3}
        assert b["action"] == "inserted_with_conflict"


def test_doctor_fails_with_a_fix_when_the_data_folder_is_unusable(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("x")
    done = memx(blocked / "home", "doctor", cwd=tmp_path)
    assert done.returncode == 1
    assert "FAIL  data folder" in done.stdout and "fix: set MEMX_HOME" in done.stdout
    assert "OK    python" in done.stdout


def test_conflicts_resolve_gc_restore_list_export_and_import(tmp_path: Path) -> None:
    d = tmp_path / "D"
    memx(d, "remember", "A Redis pool of 10 connections is enough")
    memx(d, "remember", "Redis is only stable with a pool of 50 connections or more")
    (conflict,) = as_json(memx(d, "conflicts", "--scan", "--json"))["conflicts"]
    resolved = as_json(memx(d, "conflicts", "resolve", conflict["id"], "--keep", "b", "--json"))
    assert resolved == {"conflict_id": conflict["id"], "kept": "b", "merged": None}
    archived = as_json(memx(d, "list", "--archived", "--json"))["bullets"]
    assert [b["id"] for b in archived] == [conflict["a"]["id"]]
    assert as_json(memx(d, "gc", "--dry-run", "--json"))["archived"] == []
    assert [b["id"] for b in as_json(memx(d, "restore", conflict["a"]["id"], "--json"))["bullets"]] == [
        conflict["a"]["id"]
    ]
    export = tmp_path / "all.jsonl"
    assert memx(d, "export", "-o", str(export)).returncode == 0
    assert len(export.read_text().splitlines()) == 2
    fresh = tmp_path / "E"
    assert as_json(memx(fresh, "import", str(export), "--json"))["restored"] == 2
    assert as_json(memx(fresh, "import", str(export), "--json"))["skipped_existing"] == 2
    bad = memx(d, "conflicts", "resolve", "c_nope", "--keep", "a")
    assert bad.returncode == 1 and "no conflict" in bad.stderr


def test_your_own_patterns_are_masked_by_sanitize_and_before_storing(tmp_path: Path) -> None:
    d = tmp_path / "home"
    mine = {"MEMX_SECRET_PATTERNS": "ticket=ACME-\\d{4}"}
    masked = subprocess.run(
        [*script("memx"), "--home", str(d), "sanitize"],
        input="see ACME-1234\n",
        capture_output=True,
        text=True,
        env=env_for(d, **mine),
    )
    assert masked.stdout == "see [REDACTED:ticket]\n"
    stored = as_json(memx(d, "remember", "Escalate ACME-4821 outages to the on-call SRE first", "--json", **mine))
    assert "ACME-4821" not in json.dumps(stored) and "[REDACTED:ticket]" in stored["bullet"]["content"]
    bad = memx(d, "sanitize", MEMX_SECRET_PATTERNS="ticket=ACME-(\\d{4}")
    assert bad.returncode != 0 and "secret_patterns: ticket" in bad.stderr


TOPICS = [
    "pytest -n auto spreads the suite over every core",
    "Redis drops connections when the pool holds fewer than 50",
    "the Docker build needs BuildKit for cache mounts",
    "ruff format runs before mypy in the pre-commit hook",
    "Postgres migrations run with alembic upgrade head",
    "the staging deploy waits for the smoke tests",
    "npm ci is faster than npm install on the CI runners",
    "the nginx config reloads with nginx -s reload",
    "uv sync --frozen keeps the lock file untouched",
    "Kafka consumers must commit offsets after processing",
    "the Terraform state lives in the team's S3 bucket",
    "git rebase -i squashes the fixup commits",
    "the cron job for backups runs at 03:00 UTC",
    "Celery workers need a visibility timeout above the longest task",
    "ESLint's flat config replaced the .eslintrc file",
]
PLACES = ["in the api service", "for the billing team", "on the laptop setup", "in production"]


def test_two_processes_importing_the_same_records_store_each_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    records = [json.dumps({"content": f"Remember that {t} {p}."}) for t in TOPICS for p in PLACES]
    assert len(records) == 60
    (tmp_path / "same.jsonl").write_text("\n".join(records) + "\n")
    command = [*script("memx"), "--home", str(home), "import", str(tmp_path / "same.jsonl"), "--json"]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(home))
        for _ in range(2)
    ]
    done = [(p.communicate(timeout=600), p.returncode) for p in runs]
    assert all(code == 0 for _, code in done), [err for (_, err), _ in done]
    answers = [json.loads(out) for (out, _), _ in done]
    assert all(a["errors"] == [] and a["inserted"] + a["merged"] == 60 for a in answers)
    # Whichever held the lock first stored its bullets; the other found every one of them already there.
    first, second = sorted(answers, key=lambda a: -a["inserted"])
    assert second["inserted"] == 0 and second["merged"] == 60
    assert len(memx(home, "export").stdout.splitlines()) == first["inserted"]


def test_import_reports_each_bad_record_goes_on_and_exits_non_zero(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = ['{"content": "Use uv sync --frozen in CI"}', '{"content": 5}', "[" * 50_000 + "]" * 50_000, "{oops"]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    done = memx(home, "import", str(tmp_path / "in.jsonl"))
    assert done.returncode == 1 and "unexpected error" not in done.stderr and "Traceback" not in done.stderr
    assert "1 inserted" in done.stdout and "3 bad line(s)" in done.stdout
    assert "line 2: content must be text, not int" in done.stdout and "line 3: nested too deeply" in done.stdout
    assert "line 4: not JSON" in done.stdout
    assert len(memx(home, "export").stdout.splitlines()) == 1


def test_dry_runs_create_no_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "t.txt"
    transcript.write_text("User: the tests are slow\nAssistant: run pytest -n auto to use every core")
    assert memx(home, "reflect", str(transcript), "--dry-run").returncode == 0
    assert as_json(memx(home, "gc", "--dry-run", "--json"))["archived"] == []
    assert not (home / "store").exists()


def test_export_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memx(home, "remember", "Use pytest -n auto (pytest-xdist) to run the suite in parallel")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before memx writes a byte, as `memx export | head -0` would leave it
    done = subprocess.run(
        [*script("memx"), "--home", str(home), "export"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(home),
    )
    os.close(write)
    assert done.returncode == 141 and "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr


OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"


def test_terminal_escapes_in_stored_bullets_are_printed_escaped(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from memx_mcp.adapters.lance.lance import LanceStore
    from memx_mcp.domain.models import Bullet, Conflict, KnowledgeType, Section

    home = tmp_path / "home"
    now = datetime.now(UTC)
    store = LanceStore(home / "store", "sentence-transformers/all-MiniLM-L6-v2", 384)  # an older memx's store
    made = [
        Bullet(
            f"b_00000000000000a{i}",
            f"Redis pool {n} {OSC52} is right\x9b2J",
            Section.GENERAL,
            KnowledgeType.KNOWLEDGE,
            50.0,
            1.0,
            "manual",
            "global",
            now,
            now,
            tags=(f"t{OSC52}",),
        )
        for i, n in enumerate((10, 50))
    ]
    store.add(made)
    store.add_conflicts(
        [Conflict("c_0000000000000001", made[0].id, made[1].id, 0.9, "contradiction", (OSC52,), "global", now)]
    )
    outputs = {
        "list": memx(home, "list"),
        "show": memx(home, "show", made[0].id),
        "recall": memx(home, "recall", "Redis pool"),
        "conflicts": memx(home, "conflicts"),
    }
    for name, done in outputs.items():
        assert done.returncode == 0, (name, done.stderr)
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\x9b" not in done.stdout, name
        assert "\\x1b]52;c;" in done.stdout, name
    assert "\\x9b2J" in outputs["show"].stdout and "t\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in outputs["show"].stdout


def test_remember_strips_an_osc52_sequence_on_the_way_in(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = memx(home, "remember", f"Use make lint {OSC52}before pushing", "--tag", f"ci{OSC52}")
    assert done.returncode == 0 and "\x1b" not in done.stdout
    exported = memx(home, "export").stdout
    assert "\x1b" not in exported and "\\u001b" not in exported and "\x07" not in exported


def test_sanitize_masks_a_secret_learned_anywhere_in_the_input_on_every_line(tmp_path: Path) -> None:
    transcript = (
        json.dumps({"message": {"content": 'run mysql -uroot -p"Tr0ub4dor&3/x" app'}})
        + "\nit worked with Tr0ub4dor&3/x\n"
        + json.dumps({"url": "https://search.test/?q=Tr0ub4dor%263%2Fx"})
        + "\n"
    )
    d = tmp_path / "home"
    done = subprocess.run(
        [*script("memx"), "--home", str(d), "sanitize"],
        input=transcript,
        capture_output=True,
        text=True,
        env=env_for(d),
    )
    assert done.returncode == 0, done.stderr
    assert "Tr0ub4dor" not in done.stdout and done.stdout.count("[REDACTED:password_flag]") == 3
    assert [json.loads(done.stdout.splitlines()[i]) for i in (0, 2)]  # still JSON lines


def test_install_and_uninstall_import_no_store_library(tmp_path: Path) -> None:
    """They write client files only: importing LanceDB and the store (~1.2 s) would only delay them."""
    user = tmp_path / "user"
    user.mkdir()
    code = (
        "import contextlib, io, sys\n"
        "from memx_mcp.cli.app import main\n"
        "for command in ('install', 'uninstall'):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(['--home', sys.argv[1], command, 'cursor', '--dry-run', '--json']) == 0\n"
        "print(sorted(m for m in ('lancedb', 'pyarrow', 'memx_mcp.compose') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        env=env_for(tmp_path / "home", HOME=str(user), USERPROFILE=str(user)),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_scan_reports_what_it_recorded_by_kind_and_never_leaves_an_unexplained_no_open_conflicts(
    tmp_path: Path,
) -> None:
    d, records = tmp_path / "D", tmp_path / "near.jsonl"
    texts = (
        "Run the test suite in parallel with pytest -n auto",
        "Run the test suite in parallel with `pytest -n auto`",
    )
    records.write_text("".join(json.dumps({"id": f"b_{i}", "content": t}) + "\n" for i, t in enumerate(texts)))
    assert memx(d, "import", str(records)).returncode == 0  # restored as they are: not merged on the way in
    scanned = memx(d, "conflicts", "--scan")
    assert scanned.returncode == 0, scanned.stderr
    assert "Scan recorded 1 new conflict(s): 0 contradiction(s)" in scanned.stdout and "1 overlap(s)" in scanned.stdout
    assert "No open contradictions; 1 open overlap(s)" in scanned.stdout and "`--all` lists them" in scanned.stdout
    assert "b_0" in memx(d, "conflicts", "--all").stdout
    assert as_json(memx(d, "conflicts", "--json"))["hidden_overlaps"] == 1


def test_a_query_of_common_words_matches_nothing_and_forget_by_query_archives_only_what_names_the_query(
    tmp_path: Path,
) -> None:
    """Issue 33: `memx recall pytest` brought back a timeout bullet written next to the pytest one (its
    neighbour's words), and `forget --query pytest` would have archived it."""
    d = tmp_path / "D"
    facts = (
        "Use pytest -n auto to run the suite in parallel",
        "The integration tests time out after 120 s on CI; raise the timeout with --timeout=300",
        "Prefer rg (ripgrep) over grep -r to search code",
    )
    ids = [as_json(memx(d, "remember", fact, "--json"))["bullet"]["id"] for fact in facts]
    for common in ("the", "how should I do it"):
        assert as_json(memx(d, "recall", common, "--json"))["results"] == []
        assert "Nothing matched." in memx(d, "forget", "--query", common, "--yes").stdout
    done = as_json(memx(d, "forget", "--query", "pytest", "--yes", "--json"))
    assert done["archived"] == [ids[0]]
    assert sorted(b["id"] for b in as_json(memx(d, "list", "--json"))["bullets"]) == sorted(ids[1:])


def test_ui_on_a_busy_port_names_the_port_and_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    d = tmp_path / "D"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = memx(d, "ui", "--port", str(port), "--no-open")
    assert busy.returncode == 1, busy.stderr
    assert f"memx: error: port {port} is in use; choose another with --port" in busy.stderr
    assert "unexpected" not in busy.stderr and "Traceback" not in busy.stderr
    for wrong in ("99999", "-1", "http"):
        refused = memx(d, "ui", "--port", wrong, "--no-open")
        assert refused.returncode == 2 and "argument --port" in refused.stderr, refused.stderr
        assert "unexpected" not in refused.stderr
    assert "99999 is out of range: give 0 to 65535" in memx(d, "ui", "--port", "99999").stderr


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--token-budget", "0", "0 is out of range: give 1 to 50000"),
        ("--token-budget", "50001", "50001 is out of range: give 1 to 50000"),
        ("-n", "-3", "-3 is out of range: give 1 to 50"),
        ("-n", "0", "0 is out of range: give 1 to 50"),
        ("-n", "three", "'three' is not a whole number"),
    ],
)
def test_recall_refuses_a_limit_out_of_range_instead_of_clamping_it(
    tmp_path: Path, option: str, value: str, said: str
) -> None:
    done = memx(tmp_path / "D", "recall", "deploy", option, value)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert done.stdout == "" and "clamped" not in done.stderr


def test_forget_by_query_shows_each_match_with_its_content_and_says_to_rerun_with_yes(tmp_path: Path) -> None:
    d = tmp_path / "D"
    facts = (
        "The backup job reads its access key from the vault path ops/backup",
        "Rotate the backup job access key every 90 days",
        "Prefer rg (ripgrep) over grep -r to search code",
    )
    ids = [as_json(memx(d, "remember", fact, "--json"))["bullet"]["id"] for fact in facts]
    preview = memx(d, "forget", "--query", "backup job access key")
    assert preview.returncode == 0, preview.stderr
    assert "Would archive 2:" in preview.stdout and "rerun with --yes to archive them" in preview.stdout
    assert "confirm" not in preview.stdout
    for bullet_id, fact in zip(ids[:2], facts[:2], strict=True):
        assert any(bullet_id in line and fact[:40] in line for line in preview.stdout.splitlines()), preview.stdout
    assert ids[2] not in preview.stdout
    assert len(as_json(memx(d, "list", "--json"))["bullets"]) == 3  # a preview changes nothing
    assert "rerun with --yes to erase them" in memx(d, "forget", "--query", "backup job access key", "--purge").stdout
    erased = as_json(memx(d, "forget", "--query", "backup job access key", "--purge", "--yes", "--json"))
    assert sorted(erased["purged"]) == sorted(ids[:2]) and erased["archived"] == []
    assert as_json(memx(d, "list", "--archived", "--json"))["bullets"] == []


def test_forget_and_restore_of_an_unknown_id_act_on_the_others_and_exit_non_zero(tmp_path: Path) -> None:
    d = tmp_path / "D"
    kept = as_json(memx(d, "remember", "The staging database lives in eu-west-1", "--json"))["bullet"]["id"]
    done = memx(d, "forget", kept, "b_doesnotexist")
    assert done.returncode == 1
    assert f"Archived 1: {kept}" in done.stdout and "Not found: b_doesnotexist" in done.stdout
    assert "memx: error: no bullet with id b_doesnotexist (1 other(s) archived)" in done.stderr
    assert [b["id"] for b in as_json(memx(d, "list", "--archived", "--json"))["bullets"]] == [kept]
    back = memx(d, "restore", kept, "b_doesnotexist", "--json")
    assert back.returncode == 1 and json.loads(back.stdout)["bullets"][0]["id"] == kept
    assert "no bullet with id b_doesnotexist (1 other(s) restored)" in back.stderr
    assert [b["id"] for b in as_json(memx(d, "list", "--json"))["bullets"]] == [kept]


def test_a_bad_setting_is_refused_by_the_cli_saying_where_it_was_set(tmp_path: Path) -> None:
    d = tmp_path / "D"
    for days in ("-5", "0"):
        done = memx(d, "stats", MEMX_HALF_LIFE_DAYS=days)
        assert done.returncode == 1 and "unexpected" not in done.stderr
        assert "half_life_days must be positive" in done.stderr
        assert "(set by the environment variable MEMX_HALF_LIFE_DAYS)" in done.stderr
    assert not (d / "store").exists()


def test_doctor_and_gc_speak_in_agreeing_words(tmp_path: Path) -> None:
    d = tmp_path / "D"
    userhome = tmp_path / "user"
    userhome.mkdir()
    memx(d, "remember", "The staging database lives in eu-west-1")
    doctor = memx(d, "doctor", HOME=str(userhome), USERPROFILE=str(userhome))
    (store,) = [line for line in doctor.stdout.splitlines() if line.startswith("OK    store")]
    assert ", 1 bullet, " in store, store
    assert "1 bullets" not in doctor.stdout
    dry = memx(d, "gc", "--dry-run")
    assert dry.returncode == 0 and dry.stdout == "Would archive 0, would erase 0; 1 active would remain.\n"
    assert memx(d, "gc").stdout == "Archived 0, erased 0; 1 active left.\n"
