"""Session formats other than Claude Code JSONL: each parsed from a real file (tests/data/formats, see
SOURCE.md there) into the same steps the Claude Code parser yields, and reflected by the rules."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.transcripts.transcript import Transcript, parse_transcript
from memx_mcp.memory import Memory
from memx_mcp.privacy.sanitizer import PrivacySanitizer
from memx_mcp.usecases.reflect import reflect

FORMATS = Path(__file__).parents[2] / "data" / "formats"


def parsed(name: str) -> Transcript:
    return parse_transcript((FORMATS / name).read_text(encoding="utf-8"))


def roles(t: Transcript) -> Counter[str]:
    return Counter(s.role for s in t.steps)


def bullets(t: Transcript) -> list[str]:
    return [b.content for b in Reflector(PrivacySanitizer(), "rules").reflect(t).bullets]


# -- Claude Code session export (markdown) ---------------------------------------------------------------


def test_a_claude_code_session_export_becomes_turns_tool_calls_and_results() -> None:
    t = parsed("claude-export.md")
    assert t.format == "claude-export"
    assert t.session_id == "f33cdb42-0a41-40d4-91eb-c89c109af38a" and t.cwd == "/mnt/c/python/cctrace"
    assert len(t.steps) >= 30 and roles(t)["user"] >= 3 and roles(t)["assistant"] >= 3
    calls = [s for s in t.steps if s.role == "tool"]
    assert Counter(s.tool for s in calls)["Bash"] >= 15
    fetch = next(s for s in calls if s.tool == "WebFetch")
    assert fetch.command.startswith("https://docs.anthropic.com/") and "session" in fetch.result
    failed = [s for s in calls if s.is_error]
    assert [s.result.splitlines()[-1] for s in failed] == ["/bin/bash: line 1: jq: command not found"]
    assert not any("Tool Result" in s.text or "Internal Reasoning" in s.text for s in t.steps)


def test_a_session_export_hands_its_failures_to_the_rules() -> None:
    t = parsed("claude-export.md")
    assert any(s.is_error and "jq: command not found" in s.result for s in t.steps)
    # jq missing on that machine is a fact the next session would otherwise rediscover (the corpus label
    # of this session says so); it is told as a fact, never as a fix the session did not show
    told = [b for b in bullets(t) if "jq" in b]
    assert len(told) == 1 and "`jq` is not installed in this environment" in told[0] and "worked" not in told[0]


def test_a_heading_inside_a_pasted_tool_result_is_not_a_turn() -> None:
    text = (
        "## User\n\nWhere are sessions kept?\n\n## Assistant\n\n🔧 **Tool Use: WebSearch** (ID: t1)\n```json\n"
        '{"query": "sessions"}\n```\n\n## User\n\n📊 **Tool Result:**\n```\n## Claude Code Chat History\n'
        "```\n~/.claude/projects/\n```\n```\n\n## Assistant\n\nThey are in ~/.claude/projects."
    )
    t = parse_transcript(text)
    assert [s.role for s in t.steps] == ["user", "tool", "assistant"]
    assert "~/.claude/projects/" in t.steps[1].result


# -- SpecStory / Cursor markdown -----------------------------------------------------------------------------


def test_a_specstory_export_becomes_turns_shell_calls_and_their_failures() -> None:
    t = parsed("specstory-getspecstory.md")
    assert t.format == "specstory"
    assert len(t.steps) >= 30 and roles(t)["user"] == 2 and roles(t)["assistant"] >= 5
    assert t.steps[0].text.startswith("Update our ./docs to all use the all caps")
    shell = [s for s in t.steps if s.tool == "Bash"]
    assert len(shell) >= 10 and shell[0].command == "ls -la ./docs/"
    assert [s.command for s in shell if s.is_error] == ["ls -la ./docs/", "ls -la docs/", "go test ./..."]
    assert "No such file or directory" in shell[2].result
    assert {"Edit", "Read", "Grep"} <= {s.tool for s in t.steps}
    assert not any("Thought Process" in s.text or "<tool-use" in s.text for s in t.steps)


def test_a_specstory_export_hands_its_failures_to_the_rules_and_nothing_false_comes_back() -> None:
    t = parsed("specstory-getspecstory.md")
    assert any(s.is_error and "No such file or directory" in s.result for s in t.steps)
    # `ls -la docs/` failed again and again; a bullet saying it "worked" (the old rules wrote one) is false
    assert not any("ls -la docs" in b and "worked" in b for b in bullets(t))


def test_an_older_specstory_export_with_terminal_blocks() -> None:
    t = parsed("specstory.md")
    assert t.format == "specstory"
    assert len(t.steps) >= 40 and roles(t)["user"] >= 3 and roles(t)["tool"] >= 15
    assert t.steps[0].text.startswith("❯ minsky session start --task 008")
    assert Counter(s.tool for s in t.steps)["Bash"] >= 10
    failed = [s for s in t.steps if s.is_error]
    assert failed and all(s.command == "minsky session start --task 008" for s in failed)
    assert all("Error starting session" in s.result for s in failed)


def test_the_rules_learn_from_an_older_specstory_export() -> None:
    texts = bullets(parsed("specstory.md"))
    assert any("minsky session start --task 008" in b and "Error starting session" in b for b in texts), texts


def test_a_specstory_v2_export_in_chinese_keeps_the_prompt_and_each_command_with_its_output() -> None:
    t = parsed("specstory-v2.md")
    assert t.format == "specstory" and t.steps[0].role == "user"
    assert t.steps[0].text.startswith("继续 cocli OSS local 的 GUI 层")
    shell = [s for s in t.steps if s.tool == "Bash"]
    assert len(shell) == 9 and all(s.command and s.result and not s.is_error for s in shell)
    assert shell[1].command == "ls /Users/devuser.zh/code/cocli/" and "crates" in shell[1].result


def test_older_specstory_turns_with_a_command_and_its_output_fence() -> None:
    text = (
        "## SpecStory\n\n_**User**_\n\nrun the tests\n\n---\n\n_**Assistant**_\n\nRead file: app/main.py\n\n"
        "```bash\npytest -q\n```\n\n```\nE   ModuleNotFoundError: No module named 'app'\nexit code 1\n```\n\n"
        "The package is not installed.\n\n---\n"
    )
    t = parse_transcript(text)
    assert t.format == "specstory"
    assert [(s.role, s.tool) for s in t.steps] == [("user", ""), ("tool", "Read"), ("tool", "Bash"), ("assistant", "")]
    assert t.steps[2].command == "pytest -q" and t.steps[2].is_error


def test_an_older_specstory_edit_block_is_the_assistants_edit_not_content() -> None:
    # seventh round: "Tool use: **write**" then <details><summary>Edit file: …</summary> with the diff was read as
    # a "Search" whose result (the assistant's own text) was content, so a push the assistant's doc described
    # made its later successful `git push` "content's advice"
    text = (
        "_**User**_\n\nwrite the checklist\n\n---\n\n_**Assistant**_\n\nTool use: **write**\n\n\n"
        "<details><summary>Edit file: PR_CHECKLIST.md</summary>\n\n**Chunk 1**\nLines added: 3, lines removed: 1\n\n"
        "```diff\n@@ -1,1 +1,3 @@\n- \n+ # Checklist\n+ git push origin feature/x\n+ \n```\n\n</details>\n\n"
        "Done.\n\n---\n"
    )
    t = parse_transcript(text)
    edit = next(s for s in t.steps if s.role == "tool")
    assert (edit.tool, edit.tool_input["file_path"], edit.result) == ("Edit", "PR_CHECKLIST.md", "")
    assert edit.tool_input["new_string"] == "# Checklist\ngit push origin feature/x\n"
    other = parse_transcript(text.replace("Edit file: PR_CHECKLIST.md", "Searched codebase for push"))
    assert next(s for s in other.steps if s.role == "tool").tool == "Search"


def test_a_specstory_shell_call_whose_command_is_in_its_summary_keeps_command_and_output_apart() -> None:
    # seventh round: SpecStory's exports of Codex CLI sessions (heldout7) write the command in the summary and
    # only the output in the fence; the output was read as the command, so no command of those sessions was
    # ever seen run (their advice unbacked, their quotes of commands not found)
    text = (
        "_**User**_\n\ncheck the plist\n\n---\n\n_**Agent (gpt-5.3-codex 2026-03-04 20:36:59Z)**_\n\n"
        '<tool-use data-tool-type="shell" data-tool-name="exec_command"><details>\n'
        "<summary>Tool use: **exec_command** `plutil -lint docs/x.plist`</summary>\n```\nChunk ID: 74a2ce\n"
        "Process exited with code 0\nOutput:\ndocs/x.plist: OK\n```\n</details></tool-use>\n\n"
        '<tool-use data-tool-type="shell" data-tool-name="exec_command"><details>\n'
        "<summary>Tool use: **exec_command** `npm test`</summary>\n```\nProcess exited with code 1\n"
        "Output:\nnot ok 1 - rewrite\n```\n</details></tool-use>\n"
    )
    t = parse_transcript(text)
    runs = [s for s in t.steps if s.tool == "Bash"]
    assert [(s.command, s.is_error) for s in runs] == [("plutil -lint docs/x.plist", False), ("npm test", True)]
    assert "docs/x.plist: OK" in runs[0].result and "not ok 1" in runs[1].result


# -- Aider chat history ------------------------------------------------------------------------------------


def test_an_aider_history_becomes_turns_runs_and_edits() -> None:
    t = parsed("aider.md")
    assert t.format == "aider"
    assert len(t.steps) >= 60 and roles(t)["user"] >= 20 and roles(t)["assistant"] >= 20
    runs = [s for s in t.steps if s.tool == "Bash" and not s.command.startswith("aider")]
    assert runs[0].command == "chmod +x ~/AFI_Modular_Repos/*.sh"
    assert "git push origin main" in [s.command for s in runs]
    edits = [s for s in t.steps if s.tool == "Edit"]
    assert len(edits) >= 10 and edits[0].tool_input["file_path"] == "sync-afi.sh"
    assert "#!/bin/bash" in edits[0].tool_input["new_string"] and not edits[0].is_error
    refused = [s for s in edits if s.is_error]
    assert [s.result for s in refused] == ["The LLM did not conform to the edit format."] * 2
    answers = [s.text for s in t.steps if s.role == "assistant"]
    assert not any("<<<<<<< SEARCH" in a or a.startswith("> ") for a in answers)  # edits and aider's output


def test_the_rules_learn_only_the_refused_slash_commands_from_this_aider_history() -> None:
    # Aider's history never keeps a command's output ("Added 12 lines of output to the chat"), so no run
    # is seen to fail; the two refused edits were retried in another form. What aider itself refused
    # ("Invalid command: /grep") is the one fact; no other bullet is invented.
    (found,) = bullets(parsed("aider.md"))
    assert found.startswith("aider has no `/grep`") and "Invalid command" in found


def test_aider_runs_lint_output_and_search_replace_edits() -> None:
    text = (
        "\n# aider chat started at 2025-01-02 10:00:00\n\n> Aider v0.86.1  \n\n#### fix the import  \n\n"
        "app.py\n```python\n<<<<<<< SEARCH\nimport sys\n=======\nimport os\n>>>>>>> REPLACE\n```\n\n"
        "> Applied edit to app.py  \n> Commit 1a2b3c4 fix: import  \n"
        "> Fix any errors below, if possible.  \n>  \n> ## Running: flake8 --select=F821 app.py  \n>  \n"
        "> app.py:3:1: F821 undefined name 'sys'  \n\n#### /run pytest -q  \n"
        "> Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y  \n"
    )
    t = parse_transcript(text)
    assert [(s.role, s.tool) for s in t.steps] == [("user", ""), ("tool", "Edit"), ("tool", "Bash"), ("tool", "Bash")]
    edit, lint, run = t.steps[1:]
    assert edit.tool_input == {"file_path": "app.py", "old_string": "import sys\n", "new_string": "import os\n"}
    assert not edit.is_error
    assert lint.command == "flake8 --select=F821 app.py" and lint.is_error and "F821" in lint.result
    assert run.command == "pytest -q" and run.result == ""


# -- Codex CLI session JSONL -------------------------------------------------------------------------------


def _line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2025-11-22T20:48:46.593Z", "type": kind, "payload": payload})


CODEX = "\n".join(
    [
        _line("session_meta", {"id": "019aad50-a7e6-7422-b7a8-0b384290624f", "cwd": "/p/app", "originator": "codex"}),
        _line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/p/app</cwd>\n</environment_context>"}
                ],
            },
        ),
        _line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "make the tests pass"}]},
        ),
        _line("event_msg", {"type": "user_message", "message": "make the tests pass"}),
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": json.dumps({"command": ["bash", "-lc", "npm test"]}),
            },
        ),
        _line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps(
                    {
                        "output": "Error: Cannot find module 'jest'",
                        "metadata": {"exit_code": 1, "duration_seconds": 0.4},
                    }
                ),
            },
        ),
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell_command",
                "call_id": "c2",
                "arguments": json.dumps({"command": "npm install --save-dev jest", "workdir": "."}),
            },
        ),
        _line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": "Exit code: 0\nWall time: 3.1 seconds\nOutput:\nadded 300 packages\n",
            },
        ),
        _line(
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "c3",
                "input": '*** Begin Patch\n*** Update File: package.json\n-  "test": "mocha"\n+  "test": "jest"\n*** End Patch',
            },
        ),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "c3", "output": "Success."}),
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c4",
                "arguments": json.dumps({"cmd": "npm test"}),
            },
        ),
        _line("event_msg", {"type": "exec_command_end", "call_id": "c4", "exit_code": 0}),
        _line("response_item", {"type": "function_call_output", "call_id": "c4", "output": "Tests: 3 passed"}),
        _line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The tests pass now: jest was missing."}],
            },
        ),
        _line("event_msg", {"type": "agent_message", "message": "The tests pass now: jest was missing."}),
    ]
)


def test_a_codex_session_becomes_steps_with_exit_codes_as_errors() -> None:
    t = parse_transcript(CODEX)
    assert (t.format, t.session_id, t.cwd) == ("codex", "019aad50-a7e6-7422-b7a8-0b384290624f", "/p/app")
    assert [(s.role, s.tool) for s in t.steps] == [
        ("user", ""),
        ("tool", "Bash"),
        ("tool", "Bash"),
        ("tool", "Edit"),
        ("tool", "Bash"),
        ("assistant", ""),
    ]  # the injected context and the event copies of the messages are not steps
    first, install, patch, again = t.steps[1:5]
    assert (first.command, first.is_error, first.result) == ("npm test", True, "Error: Cannot find module 'jest'")
    assert (install.command, install.is_error, install.result) == (
        "npm install --save-dev jest",
        False,
        "added 300 packages",
    )
    assert patch.tool_input["file_path"] == "package.json" and '"test": "jest"' in patch.tool_input["new_string"]
    assert (again.command, again.is_error) == ("npm test", False)


def test_the_older_codex_shape_without_wrappers() -> None:
    text = "\n".join(
        json.dumps(r)
        for r in [
            {"id": "s-1", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "build it"}]},
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": json.dumps({"command": ["cargo", "build", "--release"]}),
            },
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps({"output": "error[E0432]: unresolved import", "metadata": {"exit_code": 101}}),
            },
        ]
    )
    t = parse_transcript(text)
    assert (t.format, t.session_id) == ("codex", "s-1")
    assert t.steps[1].command == "cargo build --release" and t.steps[1].is_error


def test_a_real_codex_rollout_skips_injected_context_and_takes_results_from_exec_events() -> None:
    t = parsed("codex.jsonl")  # the first 14 records of a real session: one turn, two commands
    assert (t.format, t.session_id) == ("codex", "019daa66-5b7b-7b01-b9ce-b527014cc09f")
    assert [(s.role, s.tool) for s in t.steps] == [("user", ""), ("assistant", ""), ("tool", "Bash"), ("tool", "Bash")]
    assert t.steps[0].text == "help me apply for the agentic engineering grant by Superteam"
    assert (t.steps[2].command, t.steps[2].result, t.steps[2].is_error) == ("pwd", "/Users/devuser0000ab", False)
    assert t.steps[3].command.startswith("sed -n '1,220p' ")


def test_the_rules_learn_from_a_codex_session() -> None:
    texts = bullets(parse_transcript(CODEX))
    assert any("npm test" in b and "Cannot find module" in b for b in texts), texts


# -- what the user is told ------------------------------------------------------------------------------


def test_a_large_input_that_gives_one_step_is_reported_in_the_notes(memory: Memory) -> None:
    text = "Notes from the meeting about the release.\n" * 400  # 16 KB, no format memx knows
    result = reflect(memory.deps, text, mode="rules", dry_run=True)
    assert any("not a session format memx reads" in n and "1 step(s)" in n for n in result.report.notes)


@pytest.mark.parametrize("name", sorted(p.name for p in FORMATS.iterdir() if not p.name.startswith("SOURCE")))
def test_every_real_sample_is_read_as_a_session_not_as_plain_text(name: str) -> None:
    t = parsed(name)
    assert t.format not in ("text", "messages") and len(t.steps) >= 4, (t.format, len(t.steps))
    assert all(s.role != "tool" or s.tool for s in t.steps)


# -- Cursor agent transcripts, Gemini CLI saved chats (tests/hooks/sessions.py writes them) --------------


def _same_session(text: str) -> tuple[Transcript, list[str]]:
    from ...hooks import sessions

    t = parse_transcript(text)
    claude = bullets(parse_transcript(sessions.claude_code("s", "/w")))
    assert claude and sessions.BULLET in claude[0]
    return t, claude


def test_a_cursor_transcript_gives_the_bullet_the_same_claude_code_session_gives() -> None:
    from ...hooks import sessions

    t, claude = _same_session(sessions.cursor())
    assert t.format == "cursor" and t.steps[0].text == sessions.PROMPT  # no <user_query>, no <timestamp>
    shells = [s for s in t.steps if s.role == "tool"]
    assert [(s.tool, s.command, s.is_error) for s in shells] == [
        ("Bash", "pytest -q", True),
        ("Bash", "pip install requests", False),
        ("Bash", "pytest -q", False),
    ]
    assert bullets(t) == claude


@pytest.mark.parametrize("shape", ["jsonl", "legacy"])
def test_a_gemini_chat_gives_the_bullet_the_same_claude_code_session_gives(shape: str) -> None:
    from ...hooks import sessions

    t, claude = _same_session(sessions.gemini("g-1") if shape == "jsonl" else sessions.gemini_legacy("g-1"))
    assert t.format == "gemini" and t.session_id == "g-1"
    assert "Let me think again." not in t.text  # rewound away
    shells = [s for s in t.steps if s.role == "tool"]
    assert len(shells) == 3  # the tool message was appended three times as it grew: one step per call
    assert shells[0].is_error and shells[0].result.startswith("ImportError")  # the "Output: " frame is gone
    assert bullets(t) == claude


def test_a_cursor_str_replace_becomes_an_edit_of_that_file() -> None:
    edit_input = {"path": "/w/app.py", "old_string": "a", "new_string": "b"}
    use = {"type": "tool_use", "name": "StrReplace", "input": edit_input}
    lines = [{"role": "assistant", "message": {"content": [use]}}, {"role": "user", "message": {"content": "ok"}}]
    t = parse_transcript("".join(json.dumps(line) + "\n" for line in lines))
    edit = next(s for s in t.steps if s.role == "tool")
    assert edit.tool == "Edit" and edit.tool_input["file_path"] == "/w/app.py"


LAUNCHED = """# aider chat started at 2026-02-28 21:50:00

> /home/dev/proj/venv/bin/aider --model openai/Qwen/Qwen3-Coder --message Crea una función hello world --yes
> Aider v0.86.2
> Model: openai/Qwen/Qwen3-Coder with whole edit format
> litellm.APIError: APIError: OpenAIException - Your request was blocked.

# aider chat started at 2026-02-28 21:59:36

> You can skip this check with --no-gitignore
> /home/dev/proj/scripts/aider_with_patch.py --model=Qwen/Qwen3-Coder --message=Crea una función --yes
> Aider v0.86.2
> Model: Qwen/Qwen3-Coder with whole edit format

#### Crea una función hello world

Here it is.

> Tokens: 2.1k sent, 100 received.

# aider chat started at 2026-02-28 22:10:00

> /opt/homebrew/bin/aider
> Aider v0.86.2
> Model: Qwen/Qwen3-Coder with whole edit format

#### hola

Hola.
"""


def test_an_aider_run_is_the_command_line_it_was_started_with_without_its_request() -> None:
    runs = [(s.command, s.is_error) for s in parse_transcript(LAUNCHED).steps if s.tool == "Bash"]
    assert runs == [
        ("aider --model openai/Qwen/Qwen3-Coder --yes", True),  # any path to aider itself is aider
        ("scripts/aider_with_patch.py --model=Qwen/Qwen3-Coder --yes", False),  # a launcher script, by its folder
        ("aider --model Qwen/Qwen3-Coder", False),  # the model from a config file: the one it named
    ]


# aider ends the lines it writes itself with two spaces (a model's code does not)
CUT_THEN_UNDONE = "\n".join(
    [
        "# aider chat started at 2026-03-01 10:00:00",
        "",
        "> Aider v0.86.2",
        "> Model: openai/deepseek-v4 with whole edit format",
        "",
        "#### make the greeting casual  ",
        "",
        "launcher.py",
        "```",
        "#!/usr/bin/env python3",
        "#### Usage (a heading inside the file, not a line aider wrote)",
        "def banner():",
        "",
        "#### /undo  ",
        "> The last commit was not made by aider in this chat session.  ",
        "> You could try `/git reset --hard HEAD^` but be aware that this is a destructive command!  ",
        "",
        "#### /git reset --hard  ",
        "> HEAD is now at a137604 UPDATE  ",
        "",
        "#### /add launcher.py  ",
        "> Added launcher.py to the chat  ",
        "",
    ]
)


def test_an_answer_cut_inside_its_code_fence_does_not_swallow_the_slash_commands_after_it() -> None:
    t = parse_transcript(CUT_THEN_UNDONE)
    (answer,) = [s.text for s in t.steps if s.role == "assistant"]
    assert "#### Usage" in answer and "/undo" not in answer
    tools = [
        (s.tool, s.tool_input.get("slash") or s.command, s.result.split("\n")[0]) for s in t.steps if s.role == "tool"
    ]
    assert tools == [
        ("Bash", "aider --model openai/deepseek-v4", "the model answered"),
        ("Slash", "/undo", "The last commit was not made by aider in this chat session."),
        ("Bash", "git reset --hard", "HEAD is now at a137604 UPDATE"),
    ]  # /add changes nothing worth a step
