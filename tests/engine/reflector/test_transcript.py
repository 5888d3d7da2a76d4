from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memx_mcp.domain.errors import InvalidInputError
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript

DATA = Path(__file__).parents[3] / "benchmarks" / "data" / "transcripts"
SESSION = DATA / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def test_a_real_claude_code_session_becomes_ordered_steps_with_tool_results_and_errors() -> None:
    t = parse_transcript(SESSION.read_text(encoding="utf-8"))
    assert t.format == "claude-code" and t.session_id.startswith("258c7280")
    tools = [s for s in t.steps if s.role == "tool" and s.tool != "TaskNotification"]
    assert len(tools) == 186
    # its two background-task notifications are what the tasks reported, not the user's words
    notices = [s for s in t.steps if s.tool == "TaskNotification"]
    assert len(notices) == 2 and all(s.result.startswith("completed") for s in notices)
    assert sum(s.is_error for s in tools) == 7  # the is_error flags of the file
    assert [s.index for s in t.steps] == list(range(len(t.steps)))
    push = next(s for s in tools if s.command.startswith("git push") and s.is_error)
    assert "no upstream branch" in push.result
    assert all(s.timestamp is not None for s in t.steps)


def test_subagent_files_are_accepted() -> None:
    t = parse_transcript((DATA / "subagents" / "agent-a881341.jsonl").read_text(encoding="utf-8"))
    assert t.format == "claude-code" and any(s.role == "tool" for s in t.steps)


def test_progress_snapshot_and_system_records_are_skipped() -> None:
    lines = [
        {"type": "progress", "data": {}},
        {"type": "file-history-snapshot", "snapshot": {}},
        {"type": "system", "content": "x"},
        {"type": "user", "message": {"role": "user", "content": "run the tests"}},
    ]
    t = parse_transcript("\n".join(json.dumps(r) for r in lines))
    assert [(s.role, s.text) for s in t.steps] == [("user", "run the tests")]


def test_malformed_jsonl_lines_are_skipped_and_counted() -> None:
    good = json.dumps({"type": "user", "message": {"role": "user", "content": "hello"}})
    t = parse_transcript(good + "\n{not json\n" + good)
    assert t.skipped_lines == 1 and len(t.steps) == 2


def test_anthropic_message_list_with_tool_blocks() -> None:
    messages = [
        {"role": "user", "content": "deploy it"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the deploy."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make deploy"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Error: no creds", "is_error": True}],
        },
    ]
    t = parse_transcript(json.dumps(messages))
    tool = next(s for s in t.steps if s.role == "tool")
    assert (tool.command, tool.is_error, tool.result) == ("make deploy", True, "Error: no creds")
    assert tool.texts == ["make deploy", "Error: no creds"]
    assert t.text == "deploy it\nRunning the deploy.\nmake deploy\nError: no creds"  # what bullets can quote


def test_openai_message_list_with_tool_calls_infers_errors_from_output() -> None:
    messages = {
        "messages": [
            {"role": "user", "content": "run tests"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": '{"command": "pytest"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "E   ModuleNotFoundError: No module named 'yaml'"},
        ]
    }
    tool = next(s for s in parse_transcript(json.dumps(messages)).steps if s.role == "tool")
    assert tool.command == "pytest" and tool.is_error


@pytest.mark.parametrize(
    "text",
    [
        "User: the build fails\nAssistant: try again\nwith -v",
        "用户：构建失败了\n助手：再试一次",
        "ユーザー：ビルドが失敗します\nアシスタント：もう一度試してください",
        "**Human:** hi\n**Assistant:** hello",
    ],
)
def test_plain_text_with_speaker_markers_in_three_languages(text: str) -> None:
    t = parse_transcript(text)
    assert [s.role for s in t.steps] == ["user", "assistant"]


def test_binary_input_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="binary"):
        parse_transcript("abc\x00def")


@given(st.text(max_size=2000))
def test_any_text_parses_without_crashing(text: str) -> None:
    try:
        t = parse_transcript(text)
    except InvalidInputError:
        assert "\x00" in text
        return
    assert all(s.index == i for i, s in enumerate(t.steps))


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["type", "message", "role", "content"]),
            st.one_of(st.text(max_size=20), st.integers(), st.none()),
            max_size=4,
        ),
        max_size=20,
    )
)
def test_arbitrary_json_records_never_crash_the_parser(records: list[dict[str, object]]) -> None:
    parse_transcript("\n".join(json.dumps(r) for r in records))
