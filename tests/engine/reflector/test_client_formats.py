"""Today's session formats of each client (issue 32 point 2), read as the clients write them.

Where a real published file was found (license allowing redistribution), the test reads it and the counts
were taken by reading the file by hand; where none was found, the records follow the shapes observed in
published rollouts and the clients' own fixtures (see docs/notes/formats.md for which is which)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memx_mcp.domain.errors import InvalidInputError
from memx_mcp.engine.reflector.transcripts.formats.codemode import cell_calls
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.hooks.sessions import codex_rollouts, gemini_chats, gemini_parent
from memx_mcp.usecases.reflect import read_transcript

CORPUS = Path(__file__).parents[3] / "benchmarks" / "data" / "reflector_corpus"


def _lines(*records: dict) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def _item(payload: dict, ts: str = "2026-08-31T10:00:00Z") -> dict:
    return {"timestamp": ts, "type": "response_item", "payload": payload}


def _event(payload: dict) -> dict:
    return {"timestamp": "2026-08-31T10:00:00Z", "type": "event_msg", "payload": payload}


def _meta(**extra: object) -> dict:
    return {"type": "session_meta", "payload": {"id": "t-1", "cwd": "/repo", "cli_version": "0.144.3", **extra}}


def _user(text: str) -> dict:
    return _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def _cell(call_id: str, source: str) -> dict:
    return _item(
        {"type": "custom_tool_call", "status": "completed", "call_id": call_id, "name": "exec", "input": source}
    )


def _cell_out(call_id: str, header: str, body: str, kind: str = "custom_tool_call_output") -> dict:
    output = [{"type": "input_text", "text": header}, {"type": "input_text", "text": body}]
    return _item({"type": kind, "call_id": call_id, "output": output})


def _ran(command: str, code: int, output: str) -> dict:
    item = {"type": "CommandExecution", "command": ["/bin/zsh", "-lc", command], "exit_code": code}
    return _event({"type": "item_completed", "item": {**item, "aggregated_output": output}})


def test_a_codex_144_code_mode_session_shows_its_commands_patches_and_exit_codes():
    patch = "*** Begin Patch\\n*** Update File: src/app.py\\n@@\\n-old = 1\\n+new = 2\\n*** End Patch"
    text = _lines(
        _meta(thread_source="user"),
        _user("fix the failing test"),
        _cell(
            "c1",
            'const r = await tools.exec_command({"cmd":"pytest -q","workdir":"/repo","yield_time_ms":10000});\ntext(r.output);\n',
        ),
        _ran("pytest -q", 1, "1 failed"),
        _cell_out("c1", "Script completed\nWall time 0.4 seconds\nOutput:\n", "1 failed"),
        _cell(
            "c2",
            f'const patch = "{patch}";\nawait tools.apply_patch(patch);\ntext(await tools.exec_command({{cmd: "pytest -q"}}));',
        ),
        _cell_out("c2", "Script running with cell ID 7\nWall time 10.0 seconds\nOutput:\n", ""),
        _item(
            {
                "type": "function_call",
                "name": "wait",
                "arguments": '{"cell_id":"7","yield_time_ms":30000}',
                "call_id": "w1",
            }
        ),
        _ran("pytest -q", 0, "3 passed"),
        _item(
            {
                "type": "function_call_output",
                "call_id": "w1",
                "output": "Script completed\nWall time 3.0 seconds\nOutput:\n3 passed",
            }
        ),
    )
    t = parse_transcript(text)
    tools = [s for s in t.steps if s.role == "tool"]
    assert [(s.tool, s.command) for s in tools] == [
        ("Bash", "pytest -q"),
        ("Edit", "src/app.py"),
        ("Bash", "pytest -q"),
    ]
    assert [s.is_error for s in tools] == [True, False, False]
    assert tools[1].tool_input["new_string"] == "new = 2" and tools[2].result == "3 passed"
    assert [s.text for s in t.steps if s.role == "user"] == ["fix the failing test"]
    assert not any(s.tool in ("exec", "wait") for s in tools)


def test_a_code_mode_cell_that_failed_marks_its_last_call_failed():
    text = _lines(
        _meta(),
        _user("build it"),
        _cell(
            "c1",
            'const rs = await Promise.all([tools.exec_command({cmd:"cargo fmt --check"}), tools.exec_command({cmd:"cargo build"})]);',
        ),
        _cell_out("c1", "Script failed\nWall time 0.2 seconds\nOutput:\n", "Error: tool call failed"),
    )
    tools = [s for s in parse_transcript(text).steps if s.role == "tool"]
    assert [s.command for s in tools] == ["cargo fmt --check", "cargo build"]
    assert tools[-1].is_error and "tool call failed" in tools[-1].result


@pytest.mark.parametrize(
    "source",
    [
        "{" * 100_000 + "tools.x(" + "[" * 100_000,
        "tools.exec_command(" * 30_000,
        'tools.exec_command({cmd:"' + "\\" * 200_000,
        "`${" * 100_000,
        "/*" + "tools.exec_command({cmd:'rm -rf /'})" * 5000,
    ],
)
def test_a_hostile_cell_neither_crashes_nor_hangs_the_reader(source):
    started = time.monotonic()
    calls = cell_calls(source)
    assert time.monotonic() - started < 60  # generous: the point is that it returns
    assert all(not c.read or isinstance(c.argument, dict | str | list) for c in calls)


_JS = st.lists(
    st.sampled_from(
        [
            "tools.",
            "exec_command",
            "apply_patch",
            "(",
            ")",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            ";",
            '"',
            "'",
            "`",
            "${",
            "\\",
            "//",
            "/*",
            "*/",
            "\n",
            "cmd",
            "const",
            "=",
            "x",
            "1",
            "-",
            " ",
            "tools",
            '["a"]',
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_JS, st.text(max_size=200)))
def test_any_cell_text_is_read_without_an_error(source):
    for call in cell_calls(source):
        assert isinstance(call.name, str) and (call.read or call.argument is None)


def test_code_mode_reads_literals_only_and_nothing_in_comments_or_strings():
    calls = cell_calls(
        "// tools.view_image({path:'/tmp/x.png'})\n"
        'const note = `look at tools.exec_command({"cmd":"echo hi"})`;\n'
        'text(await tools.exec_command({"cmd": `go test ${target}`}));\n'
        "await tools['exec_command']({cmd: 'ls \\'a b\\''});\n"
    )
    assert [(c.name, c.argument, c.read) for c in calls] == [
        ("exec_command", None, False),
        ("exec_command", {"cmd": "ls 'a b'"}, True),
    ]


def test_codex_142_turn_aborted_notices_are_not_the_users_and_rolled_back_turns_go():
    text = _lines(
        _meta(cli_version="0.142.4"),
        _user("run the tests"),
        _item(
            {"type": "function_call", "name": "shell_command", "arguments": '{"command":"make test"}', "call_id": "a"}
        ),
        _item({"type": "function_call_output", "call_id": "a", "output": "Exit code: 0\nOutput:\nok"}),
        _user("now delete the build folder"),
        _item(
            {
                "type": "function_call",
                "name": "shell_command",
                "arguments": '{"command":"rm -rf build"}',
                "call_id": "b",
            }
        ),
        _user("<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"),
        _event({"type": "thread_rolled_back", "num_turns": 1}),
        _user("just list it"),
    )
    t = parse_transcript(text)
    assert [s.text for s in t.steps if s.role == "user"] == ["run the tests", "just list it"]
    assert [s.command for s in t.steps if s.role == "tool"] == ["make test"]


def test_codex_memory_consolidation_threads_are_not_read_and_subagents_read_from_their_own_start():
    housekeeping = parse_transcript(_lines(_meta(thread_source="memory_consolidation"), _user("Consolidate memory")))
    assert housekeeping.steps == () and "memory-consolidation" in housekeeping.notes[0]
    child = parse_transcript(
        _lines(
            {**_meta(thread_source="subagent", subagent_history_start_ordinal=3), "ordinal": 0},
            {**_meta(thread_source="user"), "ordinal": 1},
            {**_user("the parent's request"), "ordinal": 2},
            {**_user("review src/app.py only"), "ordinal": 3},
        )
    )
    assert [s.text for s in child.steps if s.role == "user"] == ["review src/app.py only"]


def test_a_real_codex_142_rollout_reads_its_user_words_commands_and_exit_codes():
    # CryptoSodi/Battle-Cities, Codex 0.142.4 (MIT; benchmarks/data/reflector_corpus/heldout/fmt, its README)
    t = parse_transcript((CORPUS / "heldout" / "fmt" / "codex-battle-cities.jsonl").read_text(encoding="utf-8"))
    users = [s.text for s in t.steps if s.role == "user"]
    assert users == ["help me apply for the agentic engineering grant by Superteam"]
    bash = [s for s in t.steps if s.tool == "Bash"]
    assert len(bash) == 13  # 13 shell_command calls, read by hand
    failed = [s for s in bash if s.is_error]
    # read by hand: two calls the Windows sandbox could not start, one that exited 1, five that exited 0,
    # five the cut file holds no output for
    assert len(failed) == 3 and sum(s.result.startswith("execution error:") for s in failed) == 2
    assert any("SKILL_ROUTER.md" in s.command for s in failed)
    assert sum(1 for s in bash if s.result and not s.is_error) == 5
    assert sum(1 for s in bash if not s.result) == 5


def test_a_compressed_codex_rollout_is_read_and_found(tmp_path):
    text = _lines(_meta(), _user("hello from a compressed rollout"))
    folder = tmp_path / "sessions" / "2026" / "08" / "01"
    folder.mkdir(parents=True)
    path = folder / "rollout-2026-08-01T10-00-00-0199aaaa-bbbb.jsonl.zst"
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(text.encode())
    assert codex_rollouts(tmp_path, "0199aaaa-bbbb") == [path]
    assert "hello from a compressed rollout" in read_transcript(path)
    broken = tmp_path / "broken.jsonl.zst"
    broken.write_bytes(b"\x28\xb5\x2f\xfd not zstd at all")
    with pytest.raises(InvalidInputError, match="does not decompress"):
        read_transcript(broken)


def test_claude_code_2_1_112_client_messages_are_not_the_users_words():
    records = [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "please keep answers short"}},
        {
            "type": "user",
            "isMeta": True,
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "Base directory for this skill: /x\n# Skill body"}],
            },
        },
        {
            "type": "user",
            "origin": {"kind": "task-notification"},
            "message": {
                "role": "user",
                "content": "<task-notification>\n<task-id>bg1</task-id>\n<status>failed</status>\n<summary>npm test exited 1</summary>\n</task-notification>",
            },
        },
        {
            "type": "user",
            "origin": {"kind": "peer", "from": "other"},
            "message": {"role": "user", "content": "always push to main"},
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<ide_opened_file>The user opened the file /repo/a.py in the IDE.</ide_opened_file>",
                    },
                    {"type": "text", "text": "why does a.py fail?"},
                ],
            },
        },
        {
            "type": "user",
            "message": {"role": "user", "content": "<system-reminder>Note: a.py was modified</system-reminder>"},
        },
    ]
    t = parse_transcript("\n".join(json.dumps(r) for r in records))
    assert [s.text for s in t.steps if s.role == "user"] == ["please keep answers short", "why does a.py fail?"]
    notice = next(s for s in t.steps if s.tool == "TaskNotification")
    assert notice.is_error and "npm test exited 1" in notice.result
    assert t.notes and "not read as the user's" in t.notes[0]


def test_cursor_agent_transcripts_without_results_say_so():
    records = [
        {
            "role": "user",
            "message": {"content": [{"type": "text", "text": "<user_query>\nrun the linter\n</user_query>"}]},
        },
        {
            "role": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "[REDACTED]"},
                    {"type": "tool_use", "name": "Shell", "input": {"command": "npm run lint"}},
                ]
            },
        },
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Lint is clean."}]}},
    ]
    t = parse_transcript("\n".join(json.dumps(r) for r in records))
    assert [(s.role, s.command or s.text) for s in t.steps] == [
        ("user", "run the linter"),
        ("tool", "npm run lint"),
        ("assistant", "Lint is clean."),
    ]
    assert t.results_recorded is False and "without their results" in t.notes[0]


def test_cursor_text_transcripts_have_their_tool_calls_parsed_out_of_the_text():
    text = (
        "user:\n<user_query>\nDeploy the thing.\n</user_query>\n\n"
        "A:\nRunning deploy.\n[Tool call] Shell\n  command: npm run deploy --production\n  description: Deploy to prod\n\n"
        "[Tool result] Shell\n\nA:\nDeployed. Now checking.\n[Tool call] Shell\n  command: curl https://example.com/health\n\n"
        "[Tool result] Shell\n\n[Thinking] Looks good.\nA:\nAll done.\n"
    )
    t = parse_transcript(text)
    assert t.format == "cursor-txt"
    assert [s.command for s in t.steps if s.tool == "Bash"] == [
        "npm run deploy --production",
        "curl https://example.com/health",
    ]
    assert [s.text for s in t.steps if s.role == "user"] == ["Deploy the thing."]
    assert t.results_recorded is False


def test_gemini_044_session_context_is_not_the_first_user_turn(tmp_path):
    lines = [
        {"sessionId": "g1", "projectHash": "h", "startTime": "2026-08-01T10:00:00Z", "kind": "main"},
        {
            "$set": {
                "messages": [
                    {
                        "id": "m0",
                        "type": "user",
                        "timestamp": "2026-08-01T10:00:00Z",
                        "content": [
                            {"text": "<session_context>\nThis is the Gemini CLI. OS: linux\n</session_context>"}
                        ],
                    }
                ],
                "lastUpdated": "2026-08-01T10:00:00Z",
            }
        },
        {
            "id": "m1",
            "type": "user",
            "timestamp": "2026-08-01T10:00:01Z",
            "content": [{"text": "add a --verbose flag"}],
        },
    ]
    t = parse_transcript("\n".join(json.dumps(r) for r in lines))
    assert [s.text for s in t.steps if s.role == "user"] == ["add a --verbose flag"]
    chats = tmp_path / "tmp" / "my-project" / "chats"
    (chats / "g1").mkdir(parents=True)
    (chats / "session-2026-08-01T10-00-g1.jsonl").write_text("{}\n")
    (chats / "g1" / "session-2026-08-01T10-05-sub.jsonl").write_text("{}\n")
    found = sorted(gemini_chats(tmp_path), key=lambda p: p.name)
    assert [p.name for p in found] == ["session-2026-08-01T10-00-g1.jsonl", "session-2026-08-01T10-05-sub.jsonl"]
    assert [gemini_parent(p) for p in found] == ["", "g1"]


def test_aider_086_own_prompts_are_not_the_users_words():
    text = (
        "\n# aider chat started at 2025-07-02 15:27:10\n\n> Aider v0.86.1  \n\n"
        "#### make the sidebar fixed  \n\nI will change the CSS.\n\n> Tokens: 1.9k sent, 86 received.  \n"
        "> src/Display.css  \n> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  \n\n"
        "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all  \n"
        "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  \n\n"
        "#### Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\n"
        "#### thanks, now add a test  \n"
    )
    t = parse_transcript(text)
    assert [s.text for s in t.steps if s.role == "user"] == ["make the sidebar fixed", "thanks, now add a test"]


def test_a_real_aider_086_history_keeps_only_what_the_person_typed():
    # AlexShchuka/mozgoslav, Aider v0.86.2 (MIT; benchmarks/data/reflector_corpus/heldout/fmt). Read by hand:
    # 21 "####" messages, 10 of them aider's own "Add file to the chat? (Y)es/(N)o/…" prompts with the answer
    t = parse_transcript((CORPUS / "heldout" / "fmt" / "aider-mozgoslav-ru.md").read_text(encoding="utf-8"))
    users = [s.text for s in t.steps if s.role == "user"]
    assert len(users) == 11 and not any("(Y)es/(N)o" in u for u in users)


def test_reflecting_says_what_the_reader_said_and_learns_nothing_from_codex_housekeeping(keyword_memory, tmp_path):
    from memx_mcp.usecases.reflect import reflect

    housekeeping = _lines(_meta(thread_source="memory_consolidation"), _user("remember: always run make deploy"))
    result = reflect(keyword_memory.deps, housekeeping, mode="rules", dry_run=True)
    assert result.report.bullets == [] and any("memory-consolidation" in n for n in result.report.notes)
    cursor = "\n".join(
        json.dumps(r)
        for r in [
            {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>lint it</user_query>"}]}},
            {
                "role": "assistant",
                "message": {"content": [{"type": "tool_use", "name": "Shell", "input": {"command": "npm run lint"}}]},
            },
        ]
    )
    notes = reflect(keyword_memory.deps, cursor, mode="rules", dry_run=True).report.notes
    assert any("without their results" in n for n in notes)


def test_a_cursor_session_as_cursor_writes_it_teaches_no_fix_it_cannot_show():
    from memx_mcp.engine.reflector.pipeline import Reflector
    from memx_mcp.privacy.sanitizer import PrivacySanitizer

    from ...hooks import sessions

    query = f"<user_query>{sessions.PROMPT}</user_query>"
    records = [{"role": "user", "message": {"content": [{"type": "text", "text": query}]}}]
    for command, _output, _failed in sessions.RUNS:  # the same session, without the results Cursor never writes
        use = {"type": "tool_use", "name": "Shell", "input": {"command": command}}
        records.append({"role": "assistant", "message": {"content": [{"type": "text", "text": "Running it."}, use]}})
    records.append({"role": "assistant", "message": {"content": [{"type": "text", "text": sessions.ANSWER}]}})
    t = parse_transcript("\n".join(json.dumps(r) for r in records))
    assert t.results_recorded is False and [s.command for s in t.steps if s.tool == "Bash"] == [
        r[0] for r in sessions.RUNS
    ]
    assert Reflector(PrivacySanitizer(), "rules").reflect(t).bullets == []
    with_results = Reflector(PrivacySanitizer(), "rules").reflect(parse_transcript(sessions.cursor())).bullets
    assert any(sessions.BULLET in b.content for b in with_results)  # what the synthetic results used to teach


REAL = Path(__file__).parents[2] / "data" / "client_formats" / "real"


def _user_words(t) -> list[str]:
    return [s.text for s in t.steps if s.role == "user"]


def test_a_real_claude_code_2_1_50_session_run_inside_conductor_shows_only_the_users_words():
    """obsessiondb/chkit (MIT), an Entire checkpoint: Claude Code 2.1.50 run by the Conductor app.

    Counted by reading the file (json walk, before memx read it): 35 "user" records; 24 of them tool results;
    of the 11 others, one is Conductor's ``<system_instruction>`` blocks alone (line 4), one a background
    task's ``<task-notification>`` (line 109, status failed, "bun verify" exit code 1), six are two ``/context``
    commands (caveat ``isMeta``, command name, stdout), one is Conductor's attachment note followed by the
    person's only typed words, "Create a PR" (line 129). Tool calls: 9 Bash (none with ``is_error``), 4 Edit,
    8 Read (one ``is_error``: a missing MEMORY.md), 2 Glob, 1 TaskOutput, 2 Conductor MCP calls."""
    t = parse_transcript((REAL / "claude-code-2.1.50-chkit-task-notification.jsonl").read_text(encoding="utf-8"))
    assert _user_words(t) == ["Create a PR"]
    assert not any("Conductor" in s.text or "system_instruction" in s.text for s in t.steps if s.role == "user")
    notices = [s for s in t.steps if s.tool == "TaskNotification"]
    assert len(notices) == 1 and notices[0].is_error and "exit code 1" in notices[0].result
    bash = [s for s in t.steps if s.tool == "Bash"]
    assert len(bash) == 9 and not any(s.is_error for s in bash)
    assert bash[0].command.startswith("rm /Users/dev/conductor/workspaces/chkit/dallas/packages/cli")
    assert "bun verify" in [s.command for s in bash]
    assert len([s for s in t.steps if s.tool == "Edit"]) == 4
    reads = [s for s in t.steps if s.tool == "Read"]
    assert len(reads) == 8 and [s.is_error for s in reads].count(True) == 1


def test_a_real_claude_code_2_1_41_session_with_fifteen_task_notifications_keeps_them_out_of_the_users_words():
    """ujuc/agent-stuff (MIT), an Entire checkpoint: Claude Code 2.1.41, a person writing in Korean who
    launched 16 background agents (``Task``). Counted by reading the file: 54 "user" records; 15 are
    ``<task-notification>`` records (every status "completed", each with the agent's ``<result>``), 9 are
    the ``/clear`` and two ``/model`` commands (caveat ``isMeta``, name, stdout), one is Claude Code's
    "[Request interrupted by user for tool use]"; the person's own words are five messages (lines 7, 28, 35,
    48, 203). Tool calls: 16 Task, 2 Read, 2 Write, 2 TaskUpdate, 1 TaskCreate, 1 ExitPlanMode (its result
    ``is_error``)."""
    t = parse_transcript((REAL / "claude-code-2.1.41-agent-stuff-task-notifications.jsonl").read_text(encoding="utf-8"))
    words = _user_words(t)
    assert len(words) == 5
    assert words[0].startswith("@docs/system-rules.md을") and words[-1].startswith("yaml frontmatter 부분이")
    assert not any("<task-notification>" in w or "interrupted" in w for w in words)
    notices = [s for s in t.steps if s.tool == "TaskNotification"]
    assert len(notices) == 15 and not any(s.is_error for s in notices)
    assert all("스펙 적용" in s.result for s in notices)
    assert len([s for s in t.steps if s.tool == "Write"]) == 2


def test_a_real_gemini_cli_0_23_chat_shows_its_commands_with_exit_codes_and_not_the_clis_notice_as_the_users():
    """entireio/cli (MIT), an Entire checkpoint: a Gemini CLI chat (one JSON object, ``messages``), the CLI at
    0.23.0 (its own ``info`` message says "update available! 0.23.0 → 0.24.0"). Counted by reading the file
    before memx read it: 13 messages — 1 ``user`` ("run an agent that creates a color file inside docs, choose
    your color"), 11 ``gemini``, 1 ``info`` (the update notice, the CLI's); 9 tool calls, all "success": 1
    ``write_file`` (docs/blue.md), 6 ``run_shell_command`` (``ls -l docs/blue.md``, ``git status``,
    ``rm docs/blue.md``, an ``echo -e … >> docs/color.md``, ``git status``, ``git add docs/color.md``), each
    answer framed "Command: … Exit Code: 0", 2 ``read_file`` (docs/color.md)."""
    t = parse_transcript((REAL / "gemini-cli-0.23-entire-chat.json").read_text(encoding="utf-8"))
    assert _user_words(t) == ["run an agent that creates a color file inside docs, choose your color"]
    assert not any("update available" in s.text for s in t.steps if s.role == "user")
    bash = [s for s in t.steps if s.tool == "Bash"]
    assert [s.command.split(" ")[0] for s in bash] == ["ls", "git", "rm", "echo", "git", "git"]
    assert bash[-1].command == "git add docs/color.md" and not any(s.is_error for s in bash)
    assert [s.command for s in t.steps if s.tool == "Write"] == ["docs/blue.md"]
    assert [s.command for s in t.steps if s.tool == "Read"] == ["docs/color.md", "docs/color.md"]


def test_a_slash_command_the_person_typed_is_their_words_and_the_clients_own_commands_are_not():
    # seventh round: `/init` vanished with its expansion (the command line was noise, the expansion isMeta)
    def user(content: str, **extra: object) -> dict[str, object]:
        return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": content}, **extra}

    records = [
        user("<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>"),
        user("Please analyze this codebase and create a CLAUDE.md file", isMeta=True),
        user("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"),
        user("<command-message>gsd:execute-plan</command-message>\n<command-name>/gsd:execute-plan</command-name>\n"
             "<command-args>.planning/07-02-PLAN.md</command-args>"),
        user("<local-command-stdout>Cleared</local-command-stdout>"),
    ]  # fmt: skip
    t = parse_transcript("\n".join(json.dumps(r) for r in records))
    assert [(s.role, s.text) for s in t.steps] == [
        ("user", "/init"),
        ("user", "/gsd:execute-plan .planning/07-02-PLAN.md"),
    ]
