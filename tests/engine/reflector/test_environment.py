"""What the agent's environment cannot do, told from the tool output (real shapes from public sessions)."""

from __future__ import annotations

import json

from memx_mcp.engine.reflector.rules.detect import detect
from memx_mcp.engine.reflector.rules.distiller import distill
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript

from .test_rules import bash, session


def bullets(*events: object) -> list[str]:
    return [distill(c) for c in detect(parse_transcript(session(*events)))]  # type: ignore[arg-type]


def test_sudo_that_needs_a_password_is_a_fact_about_the_agents_shell() -> None:
    out = "sudo: a terminal is required to read the password; either use the -S option to read from standard input"
    (b,) = bullets(bash("sudo apt-get install -y cuda-toolkit-12-8", out, True))
    assert "cannot run sudo here" in b and "a terminal is required to read the password" in b


def test_a_missing_program_replaced_by_another_tool_is_told_once_with_the_replacement() -> None:
    (b,) = bullets(
        bash("head -5 /p/session.jsonl | jq '.'", "/bin/bash: line 1: jq: command not found", True),
        bash("python3 -c 'import json,sys; [print(json.loads(l)) for l in open(\"/p/session.jsonl\")]'", "{...}"),
    )
    assert "jq: command not found" in b and "python3 -c" in b


def test_a_missing_program_nothing_replaced_is_a_fact_of_its_own() -> None:
    (b,) = bullets(bash("head -5 /p/s.jsonl | jq '.'", "/bin/bash: line 1: jq: command not found", True), bash("ls /p"))
    assert "`jq` is not installed in this environment" in b


def test_powershells_not_recognized_names_the_missing_program() -> None:
    out = (
        "bash : The term 'bash' is not recognized as the name of a cmdlet, function, script file, or operable program."
    )
    (b,) = bullets(bash("bash --version", out, True))
    assert "`bash` is not installed" in b and "not recognized" in b


def test_a_program_installed_later_in_the_session_is_not_called_missing() -> None:
    found = bullets(
        bash("jq . data.json", "bash: jq: command not found", True),
        bash("brew install jq", "==> Pouring jq"),
        bash("jq . data.json", '{"a": 1}'),
    )
    assert not any("is not installed" in b for b in found), found


def test_a_sandbox_that_breaks_every_command_is_told_with_the_permission_that_got_past_it() -> None:
    error = 'execution error: Io(Custom { kind: Other, error: "windows sandbox: runner error: CreateProcessAsUserW failed: 1312" })'
    escalated = {"command": "Get-ChildItem -Force", "sandbox_permissions": "require_escalated"}
    (b,) = bullets(
        bash("Get-ChildItem -Force", error),
        ("tool", ("Bash", escalated, "Name  Mode  Length", False)),
    )
    assert "CreateProcessAsUserW failed: 1312" in b and "sandbox_permissions require_escalated" in b


def test_a_codex_call_let_out_of_the_sandbox_keeps_its_permission() -> None:
    from .test_formats import _line

    call = {"command": ["pwsh", "-Command", "Get-ChildItem"], "sandbox_permissions": "require_escalated"}
    text = "\n".join(
        [
            _line("session_meta", {"id": "019aad50-0000-0000-0000-000000000001", "cwd": "C:/p", "originator": "codex"}),
            _line(
                "response_item",
                {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": json.dumps(call)},
            ),
            _line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0\nOutput:\nok\n"},
            ),
        ]
    )
    (step,) = [s for s in parse_transcript(text).steps if s.role == "tool"]
    assert step.tool_input["sandbox_permissions"] == "require_escalated"


def test_a_virtualenv_without_pip_is_a_fact_about_that_interpreter() -> None:
    out = "Python 3.12.12\n/data/dev/alpamayo/ar1_venv/bin/python: No module named pip\n"
    (b,) = bullets(bash("/data/dev/alpamayo/ar1_venv/bin/python -m pip --version", out))
    assert "ar1_venv/bin/python" in b and "No module named pip" in b
