"""Each rule on small labelled episodes of our own (structure and prose, three languages), and negatives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memx_mcp.engine.reflector.rules.detect import detect
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript


def session(*events: tuple[str, Any]) -> str:
    """A Claude Code JSONL session from (kind, payload) events: user/assistant text, bash (cmd, out, err), edit."""
    records: list[dict[str, Any]] = []
    for n, (kind, payload) in enumerate(events):
        if kind in ("user", "assistant"):
            records.append({"type": kind, "message": {"role": kind, "content": payload}})
        else:
            tool, args, out, err = payload
            records.append(
                {
                    "type": "assistant",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": f"t{n}", "name": tool, "input": args}],
                    },
                }
            )
            records.append(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": out, "is_error": err}],
                    },
                }
            )
    return "\n".join(json.dumps(r) for r in records)


def bash(cmd: str, out: str = "ok", err: bool = False) -> tuple[str, Any]:
    return ("tool", ("Bash", {"command": cmd}, out, err))


def rules_of(text: str) -> list[str]:
    return [c.rule for c in detect(parse_transcript(text))]


def test_error_then_explained_fix_then_success_is_an_error_fix() -> None:
    text = session(
        bash("node assets/build.js", 'Exit code 1\n✘ [ERROR] Could not resolve "js/app.js"', True),
        ("assistant", "The build script expects to be run from within assets/ since the entry point is relative."),
        bash("cd assets && node build.js", "done in 120ms"),
    )
    (c,) = detect(parse_transcript(text))
    assert c.rule == "ErrorFixRule" and c.confidence == 0.8
    assert "Could not resolve" in c.facts["error"] and "expects to be run" in c.facts["why"]


def test_the_same_error_twice_before_the_fix_is_a_retry_success() -> None:
    text = session(
        bash("pytest tests/", "E   ModuleNotFoundError: No module named 'yaml'", True),
        bash("pytest tests/", "E   ModuleNotFoundError: No module named 'yaml'", True),
        ("assistant", "The test extra is missing, so pyyaml must be installed first."),
        bash("pip install pyyaml", "Successfully installed pyyaml"),
        bash("pytest tests/", "12 passed"),
    )
    assert "RetrySuccessRule" in rules_of(text)


def test_an_unresolved_error_is_not_knowledge() -> None:
    assert rules_of(session(bash("make deploy", "Error: no credentials", True))) == []


def test_tool_usage_errors_are_not_project_knowledge() -> None:
    text = session(
        bash("git push", "The user doesn't want to proceed with this tool use.", True),
        bash("git push", "pushed"),
    )
    assert rules_of(text) == []


def test_a_config_edit_that_changes_a_value_is_a_config_change() -> None:
    text = session(
        (
            "tool",
            (
                "Edit",
                {"file_path": "/p/config/prod.toml", "old_string": "pool_size = 10", "new_string": "pool_size = 50"},
                "ok",
                False,
            ),
        )
    )
    (c,) = detect(parse_transcript(text))
    assert c.rule == "ConfigChangeRule" and c.facts["changed"] == "pool_size from 10 to 50"


def test_an_unexplained_config_addition_is_routine_editing() -> None:
    text = session(("tool", ("Edit", {"file_path": "/p/.env", "old_string": "", "new_string": "DEBUG=1"}, "ok", False)))
    assert rules_of(text) == []


def test_an_explained_export_is_a_config_change() -> None:
    assert rules_of(
        session(
            ("assistant", "The build runs out of heap: NODE_OPTIONS needs a larger max-old-space-size."),
            bash("export NODE_OPTIONS=--max-old-space-size=4096 && npm run build"),
        )
    ) == ["ConfigChangeRule"]


def test_an_export_nobody_explains_is_not_a_lesson() -> None:
    # real shape: `LD_LIBRARY_PATH=$CUDA_HOME/lib64:…` set next to CUDA_HOME, no problem it solved is shown
    assert rules_of(session(bash("export LD_LIBRARY_PATH=$CUDA_HOME/lib64:$LD_LIBRARY_PATH"))) == []


def test_a_setting_toggled_back_a_minute_later_is_not_a_lesson() -> None:
    off = {
        "file_path": "/p/config/voice-feedback.json",
        "old_string": '"enabled": true',
        "new_string": '"enabled": false',
    }
    on = {
        "file_path": "/p/config/voice-feedback.json",
        "old_string": '"enabled": false',
        "new_string": '"enabled": true',
    }
    assert rules_of(session(("tool", ("Edit", off, "ok", False)), ("tool", ("Edit", on, "ok", False)))) == []


def test_a_setting_changed_once_is_still_a_config_change() -> None:
    off = {
        "file_path": "/p/config/voice-feedback.json",
        "old_string": '"enabled": true',
        "new_string": '"enabled": false',
    }
    assert rules_of(session(("tool", ("Edit", off, "ok", False)))) == ["ConfigChangeRule"]


def test_a_greeting_about_the_person_is_not_a_new_tool() -> None:
    assert rules_of("User: Hi! This is my first time using cc. Can you help me set up the repo?") == []


def test_advice_about_a_possible_migration_is_not_a_switch_made() -> None:
    text = (
        "Assistant: - **Potential Issue:** If any files in `dist/` or elsewhere use CommonJS (`require`, "
        "`module.exports`), they must be migrated to ESM."
    )
    assert "NewToolRule" not in rules_of(text)


def test_a_plain_install_is_not_a_lesson_by_itself() -> None:
    assert rules_of(session(bash("npm install --save-dev happy-dom", "added 1 package"))) == []


def test_an_install_the_task_called_for_is_a_new_tool_but_a_scaffolding_install_is_not() -> None:
    text = session(
        bash("bd show web-3", "○ web-3 · Integrate highlight.js for transcript code blocks"),
        bash("npm install highlight.js", "added 1 package"),
        ("assistant", "Now I will install next-themes for dark mode."),
        bash("npm install next-themes", "added 1 package"),
    )
    (c,) = detect(parse_transcript(text))
    assert c.rule == "NewToolRule" and "highlight.js" in c.facts["packages"]


def test_a_project_specific_cli_used_often_is_a_new_tool_but_system_tools_are_not() -> None:
    text = session(
        bash("bd ready"),
        bash("bd show x-1"),
        bash("bd close x-1"),
        *[bash("ping -c 1 192.168.1.1")] * 3,
        *[bash("ls src")] * 3,
        *[bash("curl -s localhost:8080")] * 3,
        *[bash("systemctl status nginx")] * 3,
        *[bash("uci show network")] * 1,
    )
    assert rules_of(text) == ["NewToolRule"]


def test_a_flagged_command_run_three_times_is_a_repetitive_op_with_growing_confidence() -> None:
    text = session(*[bash("mix credo --strict")] * 5)
    (c,) = detect(parse_transcript(text))
    assert c.rule == "RepetitiveOpRule" and c.confidence == pytest.approx(0.6)


def test_bare_and_routine_repeats_produce_nothing() -> None:
    text = session(*[bash("mix test")] * 4, *[bash("git status")] * 4, *[bash("cat README.md")] * 4)
    assert rules_of(text) == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "User: pytest crashed with ImportError: cannot import name 'x'\nAssistant: I fixed it by pinning "
            "pydantic<2 in requirements.txt.",
            "ErrorFixRule",
        ),
        (
            "用户：启动时报错 ConnectionRefusedError\n助手：原来是 Redis 没启动，启动 redis-server 就好了。",
            "ErrorFixRule",
        ),
        (
            "ユーザー：テストでエラーが出ます\nアシスタント：原因はタイムゾーンの設定でした。TZ=UTC を設定して解決しました。",
            "ErrorFixRule",
        ),
        (
            "User: I tried clearing the cache and reinstalling, neither worked; finally deleting node_modules worked.",
            "RetrySuccessRule",
        ),
        ("用户：我试了重启和重装都不行，最后删掉缓存目录才成功。", "RetrySuccessRule"),
        ("ユーザー：再起動を試したがダメで、結局キャッシュを消して解決した。", "RetrySuccessRule"),
        ("User: I changed MAX_POOL_SIZE from 10 to 50 and the timeouts stopped.", "ConfigChangeRule"),
        ("用户：把 MAX_POOL_SIZE 从 10 改成 50 之后就稳定了。", "ConfigChangeRule"),
        ("ユーザー：MAX_POOL_SIZE を 10 から 50 に変更しました。", "ConfigChangeRule"),
        ("User: first time using pnpm here, much faster than npm.", "NewToolRule"),
        ("用户：第一次用 pnpm，比 npm 快多了。", "NewToolRule"),
        ("ユーザー：初めて pnpm を使いましたが速いです。", "NewToolRule"),
        ("User: every time I deploy I have to clear the CDN cache by hand.", "RepetitiveOpRule"),
        ("用户：每次部署都要手动清缓存。", "RepetitiveOpRule"),
        ("ユーザー：デプロイのたびに毎回キャッシュを手で消しています。", "RepetitiveOpRule"),
    ],
)
def test_prose_rules_in_english_chinese_and_japanese(text: str, rule: str) -> None:
    assert rule in rules_of(text)


@pytest.mark.parametrize(
    "text",
    [
        "User: hi, how are you today?\nAssistant: Great, thanks! What shall we build?",
        "User: please read src/app.py and summarise it\nAssistant: It defines the Flask app and two routes.",
        "用户：你好，今天天气不错。\n助手：是的，我们开始吧。",
        "ユーザー：こんにちは。\nアシスタント：こんにちは、何をしましょうか。",
        "User: the tests passed, thanks\nAssistant: You're welcome.",
        "User: the build failed with an error, is it fixed by now?\nAssistant: Let me check.",
        "用户：之前的报错，搞定了吗\n助手：我看一下。",
        "ユーザー：さっきのエラー、解決しましたか？\nアシスタント：確認します。",
        "User: did you switch to pnpm?\nAssistant: Not yet.",
    ],
)
def test_ordinary_chatter_produces_nothing(text: str) -> None:
    assert rules_of(text) == []


def test_reading_files_and_successful_routine_commands_produce_nothing() -> None:
    text = session(
        ("tool", ("Read", {"file_path": "/p/src/app.py"}, "1→import os", False)),
        ("tool", ("Grep", {"pattern": "TODO"}, "3 matches", False)),
        bash("git status"),
        bash("git diff"),
        bash("ls"),
    )
    assert rules_of(text) == []
