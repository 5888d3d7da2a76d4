"""Issue 31, point 5: secrets never leave. A real Claude Code transcript and a real-shaped Codex rollout carry
each secret the issue found leaking (a bare Discord bot token, a Docker Hub PAT bare and in prose, a password
default in code, a password in a thinking line) in a user message, a thinking block, a tool input (nested too),
a tool output and code read from a file. Reflected in session mode against the loopback Messages API, no
secret is in any request body, in the store (a real LanceDB in tmp_path), or in what `memx sanitize` prints;
the llm and hybrid modes' prompts (the end-of-session check included) are masked the same way."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.adapters.anthropic import AnthropicRefiner
from memx_mcp.adapters.lance.lance import LanceStore
from memx_mcp.config import Settings
from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.transcripts.transcript import Transcript, parse_transcript
from memx_mcp.memory import Memory
from memx_mcp.ports import Embedder, ReadyEmbedder
from memx_mcp.privacy.sanitizer import PrivacySanitizer

from .conftest import MODEL
from .helpers import env_for, script
from .messages_api import MessagesAPI

DISCORD = "MTA5MzQ1MzQyMjE5NTY4MzQwOQ.GxK3pQ.Qm7Rk2Lp9Vx4Tn8Wc1Zb6Yd3Hf5Jg0Ns2Ea7Uq"
DOCKER = "dckr_pat_2Yt8vVQx7kqZrN3m1ULfRz0sHbA"
NEO4J = "Gr4phDB-s3cret"
THOUGHT = "Tr0ub4dor-42x"
SECRETS = {"discord": DISCORD, "docker": DOCKER, "neo4j": NEO4J, "thought": THOUGHT}

PROSE = (
    f"here is the bot token, use it: {DISCORD}. my docker token is {DOCKER}, the admin password is {THOUGHT} "
    f'and the settings say neo4j_password: str = "{NEO4J}"'
)
THINKING = f"The admin password is {THOUGHT} and the bot runs with {DISCORD}; Docker wants {DOCKER}."
CODE = (
    "from pydantic_settings import BaseSettings\n\n\nclass Settings(BaseSettings):\n"
    f'    neo4j_password: str = "{NEO4J}"\n'
    f'    discord_token: str = "{DISCORD}"\n'
    f"    DOCKER_PAT = '{DOCKER}'\n"
    f'    admin_password = "{THOUGHT}"\n'
)
OUTPUT = (
    f"connected to bolt://localhost:7687 with password {NEO4J}\nbot {DISCORD} is online\n"
    f"registry login as acme with {DOCKER}\nadmin password is {THOUGHT}\n"
)
NESTED = {  # an MCP tool's input: the secrets two and three levels down
    "uri": "bolt://localhost:7687",
    "auth": {"user": "neo4j", "password": NEO4J},
    "bots": [{"name": "deploy", "token": DISCORD}],
    "registry": {"credentials": [DOCKER]},
    "notes": [f"the admin password is {THOUGHT}"],
}
EDIT = {  # a MultiEdit: its edits are a list of dicts
    "file_path": "/srv/bot/settings.py",
    "edits": [{"old_string": 'neo4j_password: str = ""', "new_string": f'neo4j_password: str = "{NEO4J}"'}],
}
PUSH = "docker push acme/bot:1.4"
LOGIN = "docker login -u acme --password-stdin"
DENIED = "unauthorized: authentication required"

# (role, text) or (tool, input, output, failed), in order
EVENTS: list[tuple[Any, ...]] = [
    ("user", PROSE),
    ("thinking", THINKING),
    ("Bash", {"command": PUSH, "description": "Push the image"}, DENIED, True),
    ("Read", {"file_path": "/srv/bot/settings.py"}, CODE, False),
    ("Bash", {"command": f"echo {DOCKER} | {LOGIN}", "env": {"DOCKER_PAT": DOCKER}}, "Login Succeeded", False),
    ("mcp__neo4j__connect", NESTED, OUTPUT, False),
    ("MultiEdit", EDIT, "Applied 1 edit", False),
    ("Bash", {"command": f"DISCORD_TOKEN={DISCORD} ADMIN_PASSWORD='{THOUGHT}' python bot.py --check"}, OUTPUT, False),
    ("Bash", {"command": PUSH, "description": "Push again"}, "1.4: digest: sha256:4f2a pushed", False),
    ("assistant", "Pushed acme/bot:1.4 once logged in."),
    # what the rules find too (an error and its fix, a preference), so that hybrid mode has drafts to send
    ("Bash", {"command": "node assets/build.js"}, f'✘ [ERROR] Could not resolve "js/app.js" ({DOCKER})', True),
    ("Bash", {"command": "cd assets && node build.js", "env": {"NEO4J_PASSWORD": NEO4J}}, "done", False),
    ("user", f"Please always log in with --password-stdin, never put {DOCKER} or {THOUGHT} on the command line."),
]


def claude_code() -> str:
    records: list[dict[str, Any]] = []
    head = {"sessionId": "5e0c2b1a-0000-4000-8000-00000000031a", "cwd": "/srv/bot"}
    for n, e in enumerate(EVENTS):
        if e[0] == "user":
            records.append({**head, "type": "user", "message": {"role": "user", "content": e[1]}})
        elif e[0] == "assistant":
            records.append({**head, "type": "assistant", "message": {"role": "assistant", "content": e[1]}})
        elif e[0] == "thinking":
            block = {"type": "thinking", "thinking": e[1], "signature": "c2lnbmF0dXJl"}
            records.append({**head, "type": "assistant", "message": {"role": "assistant", "content": [block]}})
        else:
            tool, args, output, failed = e
            use = {"type": "tool_use", "id": f"toolu_{n:02d}", "name": tool, "input": args}
            answer = {"type": "tool_result", "tool_use_id": f"toolu_{n:02d}", "content": output, "is_error": failed}
            records.append({**head, "type": "assistant", "message": {"role": "assistant", "content": [use]}})
            records.append({**head, "type": "user", "message": {"role": "user", "content": [answer]}})
    return "\n".join(json.dumps(r) for r in records) + "\n"


def codex() -> str:
    """A rollout as Codex CLI writes it: wrapped response items, the shell's arguments a JSON string."""
    ts = "2026-01-05T10:00:00.000Z"
    lines: list[dict[str, Any]] = [
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {"id": "019b0031-0000-7000-8000-000000000031", "cwd": "/srv/bot"},
        }
    ]

    def item(payload: dict[str, Any]) -> None:
        lines.append({"timestamp": ts, "type": "response_item", "payload": payload})

    for n, e in enumerate(EVENTS):
        if e[0] in ("user", "assistant"):
            kind = "input_text" if e[0] == "user" else "output_text"
            item({"type": "message", "role": e[0], "content": [{"type": kind, "text": e[1]}]})
        elif e[0] == "thinking":
            item({"type": "reasoning", "summary": [{"type": "summary_text", "text": e[1]}], "encrypted_content": None})
        else:
            tool, args, output, failed = e
            if tool == "Bash":
                name, arguments = "shell", {"command": ["bash", "-lc", args["command"]], "workdir": "/srv/bot"}
            elif tool == "Read":
                name, arguments = "shell", {"command": ["bash", "-lc", f"cat {args['file_path']}"]}
            else:
                name, arguments = tool, args
            item({"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": f"call_{n}"})
            body = {"output": output, "metadata": {"exit_code": 1 if failed else 0, "duration_seconds": 0.1}}
            item({"type": "function_call_output", "call_id": f"call_{n}", "output": json.dumps(body)})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def lessons_for(t: Transcript) -> list[dict[str, Any]]:
    """What a model answers: one lesson quoting the masked session faithfully, one that writes the secrets
    out as a careless (or hostile) model might. Both stand on their evidence, so both reach the store."""
    pushes = [s.index for s in t.steps if s.role == "tool" and s.command == PUSH]
    login = next(s.index for s in t.steps if s.role == "tool" and LOGIN in s.command)
    fix = {
        "kind": "fix",
        "outcome": "success",
        "problem_steps": [pushes[0]],
        "change_step": login,
        "success_step": pushes[-1],
        "cites": [DENIED, PUSH],
        "section": "COMMANDS",
        "knowledge_type": "PITFALL",
        "score": 85,
    }
    return [
        {**fix, "lesson": f"`{PUSH}` fails with {DENIED} until Docker Hub is logged in with `{LOGIN}`."},
        {
            **fix,
            "lesson": f"`{PUSH}` needs a login first: {DENIED} otherwise; the Docker token is {DOCKER}, the bot "
            f"token {DISCORD}, the Neo4j password {NEO4J} and the admin password {THOUGHT}.",
        },
    ]


def leaked(text: str) -> list[str]:
    return [kind for kind, value in SECRETS.items() if value in text]


def loopback_memory(home: Path, embedder: Embedder, api: MessagesAPI) -> Memory:
    settings = Settings(home=home, scope="project:bot", llm_backend="none", llm_base_url=api.url)

    def refiners(model: str, base_url: str, timeout: float, purpose: str = "reflect") -> tuple[Any, str]:
        return AnthropicRefiner("loopback", model, base_url, timeout), ""

    store = LanceStore(home / "store", MODEL, 384)
    return Memory(settings, store, ReadyEmbedder(embedder), cwd=home.parent, refiners=refiners)


@pytest.mark.parametrize("write", [claude_code, codex], ids=["claude-code", "codex"])
def test_no_secret_reaches_a_model_the_store_or_memx_sanitize(
    write: Callable[[], str], tmp_path: Path, embedder: Embedder
) -> None:
    text = write()
    assert all(value in text for value in SECRETS.values())  # each carried, raw (JSON-escaped where quoted)
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    parsed = parse_transcript(text)
    home = tmp_path / "home"
    with MessagesAPI("session", lessons=lessons_for(parsed)).running() as api:
        result = loopback_memory(home, embedder, api).reflect(text, path=path, mode="session")

    report = result.report
    assert report.mode == "session" and report.llm_calls >= 1 and api.requests
    assert len(result.stored) == 2, report.dropped  # both lessons stood on their evidence and were stored
    for body in api.requests:
        assert not leaked(json.dumps(body, ensure_ascii=False)), "a secret reached the model"
    prompt = json.dumps(api.requests[0])
    assert "[REDACTED:" in prompt and PUSH in prompt and DENIED in prompt  # masked, not left out

    bullets = [b.content for b in report.bullets]
    assert not any(leaked(b) for b in bullets)
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert b"Docker Hub is logged in" in stored  # the store holds the bullets' text, readable
    assert not [kind for kind, value in SECRETS.items() if value.encode() in stored], "a secret was stored"

    done = subprocess.run(
        [*script("memx"), "sanitize"],
        input=text,
        capture_output=True,
        text=True,
        env=env_for(tmp_path / "sanitize-home"),
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == text.count("\n") and "[REDACTED:" in done.stdout
    assert not leaked(done.stdout + done.stderr), "memx sanitize printed a secret"


CHECKED = "Log in with `docker login -u acme --password-stdin` before `docker push acme/bot:1.4`."


@pytest.mark.parametrize(
    ("mode", "behaviour"),
    [("llm", "extract"), ("hybrid", "write"), ("hybrid", "keep")],
)
def test_every_reading_mode_sends_only_masked_text(mode: str, behaviour: str) -> None:
    t = parse_transcript(claude_code())
    with MessagesAPI(behaviour, written=[CHECKED]).running() as api:
        refiner = AnthropicRefiner("loopback", "m", api.url, 10.0)
        report = Reflector(PrivacySanitizer(), mode, refiner, writes=behaviour == "write").reflect(t)
    assert report.llm_calls >= 1 and api.requests
    prompts = [json.dumps(body, ensure_ascii=False) for body in api.requests]
    if mode == "llm":  # the end-of-session check was asked too, and masked like the rest
        assert any("Bullets drafted from one coding session" in p for p in prompts)
    for p in prompts:
        assert not leaked(p), "a secret reached the model"
    assert not any(leaked(b.content) for b in report.bullets)


def test_the_steps_a_model_reads_hold_no_secret_in_any_string() -> None:
    """Every string of every step, the nested tool inputs included, comes out masked (the one path into
    every prompt), and what is not a secret stays as it was."""
    from memx_mcp.engine.reflector.readings.keeper import seen_by_a_model

    for write in (claude_code, codex):
        _, seen = seen_by_a_model(PrivacySanitizer(), parse_transcript(write()))
        for s in seen.steps:
            assert not leaked(json.dumps([s.text, s.result, s.tool_input], ensure_ascii=False)), s
        assert any(s.command == PUSH for s in seen.steps)
