"""Hostile and careless input, through the MCP tools and the CLI: each gets a clear error or a sane clamp,
the process stays up, and nothing stored is lost. Secrets never land anywhere; files are private."""

from __future__ import annotations

import contextlib
import json
import stat
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.domain.scopes import Scope, parse_scope
from memx_mcp.engine.retrieval.budget import estimate_tokens, pack
from memx_mcp.privacy.sanitizer import PrivacySanitizer
from memx_mcp.text.tokenize import query_terms, tokens

from .helpers import env_for, script, warm_helper
from .messages_api import MessagesAPI

KEEP = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"

# (tool, arguments, what the answer must contain): every one must leave the server up and KEEP intact.
MCP_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("remember", {"text": ""}, "at least 1 character"),
    ("remember", {"text": "   \n\t  "}, "empty"),
    ("remember", {"text": "x" * 1_000_000}, "4000"),
    ("remember", {"text": "bin\x00ary"}, "binary"),
    ("remember", {"text": "ok", "scope": "team:x"}, "invalid scope"),
    ("remember", {"text": "ok", "scope": "project:a b"}, "invalid scope name"),
    ("recall", {"query": ""}, "at least 1 character"),
    ("recall", {"query": "   "}, "empty"),
    ("recall", {"query": "q" * 1_000_000}, "2000"),
    ("recall", {"query": "pytest", "scope": "workspace:"}, "needs a current project"),
    ("recall", {"query": "pytest", "max_results": -5}, "clamped to 1"),
    ("recall", {"query": "pytest", "max_results": 0}, "clamped to 1"),
    ("recall", {"query": "pytest", "max_results": 10**12}, "clamped to 50"),
    ("recall", {"query": "pytest", "token_budget": -1}, "clamped to 1"),
    ("recall", {"query": "pytest", "token_budget": 10**12}, "clamped to 50000"),
    ("forget", {"ids": ["b_unknown"]}, "no bullet with id b_unknown"),
    ("forget", {}, "give ids"),
    ("forget", {"ids": ["x" * 1000]}, "at most 100 characters"),
    ("list_conflicts", {"scope": "nope"}, "invalid scope"),
    ("resolve_conflict", {"conflict_id": "c_unknown", "keep": "a"}, "no conflict"),
    ("resolve_conflict", {"conflict_id": "c_x", "keep": "everything"}, "Input should be"),
    ("reflect", {"path": "/etc/passwd"}, "only from the clients' session folders"),
    ("reflect", {"path": "/tmp/x\x00y.jsonl"}, "NUL"),
    ("reflect", {"transcript": "[" * 100_000 + "]" * 100_000}, "nested too deeply"),
    ("reflect", {"transcript": '{"message": ' * 50_000 + "1" + "}" * 50_000}, "nested too deeply"),
    ("reflect", {"transcript": "a", "path": "/tmp/x"}, "either transcript text or a path"),
    ("reflect", {"transcript": '{not json\n{"type": "user"\n\x01\x02'}, "rules mode"),
    ("reflect", {"mode": "magic", "transcript": "hi"}, "Input should be"),
]


def test_every_tool_survives_hostile_input_and_keeps_what_it_stored(tmp_path: Path) -> None:
    sessions = tmp_path / "user" / ".claude" / "projects" / "p"
    sessions.mkdir(parents=True)
    big = sessions / "big.jsonl"
    line = json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "x" * 1000}})
    big.write_text("\n".join([line] * 10_500))  # ~10.7 MB transcript
    binary = sessions / "blob.jsonl"
    binary.write_bytes(b"\x00\xff\xfe" * 1000)
    latin1 = sessions / "latin1.txt"
    latin1.write_bytes("Le café est prêt: pytest -x".encode("latin-1"))
    cases = [
        *MCP_CASES,
        ("reflect", {"path": str(big), "dry_run": True}, "10500 steps"),
        ("reflect", {"path": str(binary)}, "binary"),
        ("reflect", {"path": str(latin1)}, "not UTF-8 text"),
        ("reflect", {"path": str(sessions / "missing.jsonl")}, "no such file"),
    ]
    errors = tmp_path / "stderr.txt"

    async def steps(s: ClientSession) -> list[tuple[Any, Any]]:
        kept = await s.call_tool("remember", {"text": KEEP})
        out = []
        for tool, args, _ in cases:
            out.append((await s.call_tool(tool, args), None))
        after = await s.call_tool("recall", {"query": "pytest parallel"})
        return [(kept, after), *out]

    cmd = script("memx-mcp")

    async def session() -> list[tuple[Any, Any]]:
        env = env_for(tmp_path / "home", HOME=str(tmp_path / "user"))
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(tmp_path))
        with errors.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await steps(s)

    results = anyio.run(session)
    assert "Traceback" not in errors.read_text()
    (kept, after), answers = results[0], results[1:]
    for (tool, args, expected), (answer, _) in zip(cases, answers, strict=True):
        text = answer.content[0].text if answer.content else ""
        assert expected in text, f"{tool}({str(args)[:60]}): {text[:300]}"
        assert "Traceback" not in text
    assert after.structured_content["results"][0]["id"] == kept.structured_content["bullet"]["id"]


CLI_CASES: list[tuple[list[str], int, str]] = [
    (["remember", ""], 1, "empty"),
    (["remember", "x" * 5000], 1, "limit is 4000"),
    (["recall", "pytest", "-n", "-3"], 2, "-3 is out of range: give 1 to 50"),
    (["recall", "pytest", "--token-budget", "0"], 2, "0 is out of range: give 1 to 50000"),
    (["recall", "pytest", "--scope", "bad scope"], 1, "invalid scope"),
    (["forget", "b_nope"], 1, "no bullet"),
    (["restore", "b_nope"], 1, "no bullet"),
    (["reflect", "/nonexistent.jsonl"], 1, "no such file"),
    (["import", "/nonexistent.jsonl"], 1, "no such file"),
    (["conflicts", "resolve", "c_x"], 1, "usage"),
    (["recall", "--bogus"], 2, "required: query"),
    (["list", "--scope", "bad scope"], 1, "invalid scope"),
    (["remember", "bad \udcff\udcfe bytes in a note about pytest"], 0, "Remembered"),
]


@pytest.mark.parametrize(("args", "code", "message"), CLI_CASES)
def test_cli_bad_input_gets_a_clear_message_and_exit_code(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [*script("memx"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == code
    assert message in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


SECRETS = {
    "aws": "AKIA2E0A8F3B244C9986",
    "github": "ghp_" + "Zx9Qw2Er7Ty4Ui1Op3As5Df6Gh8Jk0Lz1Xc3",
    "anthropic": "sk-ant-api03-Q8vN2kLx7Rt5Yw3Zp1Mc9Bd4Fg6Hj0Ks",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Lk",
    "password": "hunter2-Correct-Horse",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "email": "jane.doe@corp-example.org",
    "user": "/home/janedoe/",
}


def secret_transcript() -> str:
    records = []
    for n, (kind, value) in enumerate(SECRETS.items()):
        cmd = f"deploy --{kind} {value}" if kind != "password" else f"psql postgres://admin:{value}@db/app"
        records += [
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": cmd}}],
                },
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"t{n}",
                            "content": f"Error: bad credentials {value}",
                            "is_error": True,
                        }
                    ],
                },
            },
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": f"The key {value} must be exported first."},
            },
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": f"u{n}", "name": "Bash", "input": {"command": cmd + " --retry"}}
                    ],
                },
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"u{n}", "content": "ok", "is_error": False}],
                },
            },
        ]
    return "\n".join(json.dumps(r) for r in records)


def test_secrets_never_land_in_files_logs_or_llm_requests(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "home-of-janedoe-private"
    folder.mkdir()
    path = folder / "secrets.jsonl"
    path.write_text(secret_transcript())
    with MessagesAPI("keep").running() as api:
        env = env_for(
            home,
            ANTHROPIC_API_KEY="loopback",
            MEMX_LLM_BASE_URL=api.url,
            MEMX_LOG_LEVEL="DEBUG",
            MEMX_LLM_BACKEND="auto",
        )
        reflected = subprocess.run(
            [*script("memx"), "reflect", str(path), "--mode", "hybrid", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=180,
        )
        whole = subprocess.run(  # session mode sends the whole condensed session: masked too
            [*script("memx"), "reflect", str(path), "--mode", "session", "--dry-run", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=180,
        )
        assert whole.returncode == 0 and json.loads(whole.stdout)[0]["llm_calls"] >= 1, whole.stderr
        # the remembers go through a warm helper of the same settings, whose log is in the data folder too
        with warm_helper(home, **{k: v for k, v in env.items() if k.startswith(("MEMX_", "ANTHROPIC_"))}):
            for value in SECRETS.values():
                subprocess.run(
                    [*script("memx"), "remember", f"Deploy uses the credential {value} for prod"],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tmp_path,
                    timeout=120,
                )
    assert reflected.returncode == 0, reflected.stderr
    out = json.loads(reflected.stdout)[0]
    assert out["llm_calls"] >= 1 and out["added"] >= 1
    sent = json.dumps(api.requests)
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert b"home-of-janedoe-private" not in stored  # the transcript's path is not kept either
    for kind, value in SECRETS.items():
        needle = value.strip("/").split("/")[-1] if kind == "user" else value
        assert needle not in sent, f"{kind} sent to the LLM"
        assert needle.encode() not in stored, f"{kind} stored in the data folder"
        assert needle not in reflected.stderr, f"{kind} in the logs"


def fake_token(door: str) -> str:
    """A GitHub-token shape naming its door, so that a leak says where it came in."""
    return "ghp_" + (door.replace("-", "").upper() + "Zx9Qw2Er7Ty4Ui1Op3As5Df6Gh8Jk0Lz1Xc3")[:36]


def test_a_token_through_every_door_is_masked_in_the_data_folder_and_every_output(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = env_for(home, MEMX_LOG_LEVEL="DEBUG")
    outputs: list[str] = []

    def memx(*args: str) -> Any:
        done = subprocess.run(
            [*script("memx"), *args, "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180
        )
        outputs.extend((done.stdout, done.stderr))
        return json.loads(done.stdout) if done.stdout.strip() else None

    tokens = {d: fake_token(d) for d in ("remember", "rtag", "edit-tag", "web-tag", "web-content", "reflect")}
    made = memx(
        "remember", f"The release bot authenticates with {tokens['remember']} on deploy", "--tag", tokens["rtag"]
    )
    bullet = made["bullet"]["id"]
    memx("edit", bullet, "--tag", tokens["edit-tag"])

    ui = subprocess.Popen(
        [*script("memx"), "ui", "--no-open", "--json"], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    try:
        assert ui.stdout is not None
        url = json.loads(ui.stdout.readline())["url"]
        base, token = url.split("/?token=")
        body = json.dumps({"tags": [tokens["web-tag"]], "content": f"Web edit: the bot uses {tokens['web-content']}"})
        request = urllib.request.Request(
            f"{base}/api/bullets/{bullet}",
            data=body.encode(),
            headers={"Content-Type": "application/json", "X-Memx-Token": token},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            outputs.append(answer.read().decode())
    finally:
        ui.terminate()
        ui.wait(30)

    fields = ("tags", "tools", "entities", "source", "id", "origin")
    records = []
    for field in fields:
        tokens[f"import-{field}"] = value = fake_token(f"import{field}")
        record: dict[str, Any] = {"content": f"Imported note about the {field} field and the release bot"}
        record[field] = [value] if field in ("tags", "tools", "entities") else value
        records.append(json.dumps(record))
    tokens["import-content"] = fake_token("importcontent")
    records.append(json.dumps({"content": f"Use {tokens['import-content']} for the bot", "id": "b_00000000000000aa"}))
    (tmp_path / "in.jsonl").write_text("\n".join(records) + "\n")
    imported = memx("import", str(tmp_path / "in.jsonl"))
    assert imported["errors"] and "line 5" in imported["errors"][0]  # the id holding a token is refused
    assert imported["inserted"] + imported["merged"] + imported["restored"] == len(records) - 1

    transcript = tmp_path / "session.jsonl"
    transcript.write_text(secret_transcript().replace(SECRETS["github"], tokens["reflect"]))
    reflected = memx("reflect", str(transcript), "--mode", "rules")
    assert reflected[0]["added"] >= 1

    memx("recall", "release bot token deploy")
    memx("list")
    memx("show", bullet)
    done = subprocess.run([*script("memx"), "export"], capture_output=True, text=True, env=env, cwd=tmp_path)
    outputs.append(done.stdout)
    assert "[REDACTED" in done.stdout
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    seen = "\n".join(outputs)
    for door, value in tokens.items():
        assert value.encode() not in stored, f"{door}: stored unmasked"
        assert value not in seen, f"{door}: shown unmasked"


def test_info_logs_never_print_bullet_contents(tmp_path: Path) -> None:
    home = tmp_path / "home"
    text = "The zebra-striped canary deploy needs FLAG_ZEBRA=1"
    done = subprocess.run(
        [*script("memx"), "remember", text],
        capture_output=True,
        text=True,
        env=env_for(home, MEMX_LOG_LEVEL="INFO"),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and "zebra" not in done.stderr


def test_data_folder_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    subprocess.run(
        [*script("memx"), "remember", KEEP],
        capture_output=True,
        env=env_for(home),
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    for p in [home, *home.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        if p.is_symlink():
            continue
        assert mode & 0o077 == 0, f"{p} is {oct(mode)}"


def test_scope_isolation_through_the_mcp_tools(tmp_path: Path) -> None:
    async def session() -> dict[str, Any]:
        cmd = script("memx-mcp")
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(tmp_path / "home"), cwd=str(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            await s.call_tool("remember", {"text": "Project A deploys with make ship-a", "scope": "project:a"})
            await s.call_tool(
                "remember", {"text": "Feature flag BETA_LOGIN stays off here", "scope": "project:a/workspace:beta"}
            )
            await s.call_tool("remember", {"text": "Always run the linter before pushing", "scope": "global"})
            ask = lambda q, scope: s.call_tool("recall", {"query": q, "scope": scope})  # noqa: E731
            return {
                "b_sees_a": await ask("make ship-a deploy", "project:b"),
                "a_sees_ws": await ask("BETA_LOGIN flag", "project:a"),
                "ws_sees_ws": await ask("BETA_LOGIN flag", "project:a/workspace:beta"),
                "b_sees_global": await ask("linter before pushing", "project:b"),
            }

    r = anyio.run(session)
    contents = {k: [h["content"] for h in v.structured_content["results"]] for k, v in r.items()}
    assert not any("ship-a" in c for c in contents["b_sees_a"])
    assert not any("BETA_LOGIN" in c for c in contents["a_sees_ws"])
    assert any("BETA_LOGIN" in c for c in contents["ws_sees_ws"])
    assert any("linter" in c for c in contents["b_sees_global"])


# -- properties --------------------------------------------------------------------------------------

S = PrivacySanitizer()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_sanitizing_never_fails_and_is_idempotent(text: str) -> None:
    once = S.mask(text)
    assert S.mask(once) == once


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[A-Za-z0-9]{40}", fullmatch=True))
def test_a_generated_aws_key_in_an_assignment_is_always_masked(body: str) -> None:
    secret = "AKIA" + body[:16].upper()
    assert secret not in S.mask(f"aws_access_key_id = {secret}")


@given(st.text(max_size=300))
def test_tokens_are_lowercase_nonempty_and_queries_never_fail(text: str) -> None:
    assert all(t and t == t.lower() for t in tokens(text))
    query_terms(text)


@given(st.lists(st.integers(min_value=0, max_value=500), max_size=30), st.integers(1, 60), st.integers(1, 3000))
def test_the_packer_never_exceeds_either_limit(costs: list[int], max_results: int, budget: int) -> None:
    packed, skipped = pack(list(range(len(costs))), costs, max_results, budget)
    assert len(packed) <= max_results and sum(costs[i] for i in packed) <= budget
    assert packed == sorted(packed) and skipped <= len(costs) - len(packed)


@given(st.text(max_size=200))
def test_token_estimates_are_never_negative(text: str) -> None:
    assert estimate_tokens(text) >= (1 if text else 0)


# names made only of dots, or holding "..", are refused (they read as paths)
NAME = st.from_regex(r"[A-Za-z0-9._@+-]{1,30}", fullmatch=True).filter(lambda n: ".." not in n and n.strip("."))


@given(NAME, st.none() | NAME)
def test_scopes_round_trip_through_text(project: str, workspace: str | None) -> None:
    scope = Scope(project, workspace)
    assert parse_scope(str(scope)) == scope


@given(st.text(max_size=100))
def test_the_scope_parser_accepts_or_refuses_cleanly(text: str) -> None:
    from memx_mcp.domain.errors import InvalidScopeError

    with contextlib.suppress(InvalidScopeError):
        parse_scope(text, Scope("p", "w"))
