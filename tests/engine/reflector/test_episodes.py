"""Episodes: a failure, the actions, the first observed success; what gets the credit and what the bullet
may claim. Small sessions of our own, in the shapes seen in real public sessions."""

from __future__ import annotations

from typing import Any

import pytest

from memx_mcp.engine.reflector.pipeline import Reflector
from memx_mcp.engine.reflector.rules.detect import detect
from memx_mcp.engine.reflector.rules.distiller import distill
from memx_mcp.engine.reflector.shell.commands import error_signature, is_question
from memx_mcp.engine.reflector.shell.goals import action_kind, goal_key
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript
from memx_mcp.privacy.sanitizer import PrivacySanitizer
from memx_mcp.text.clip import shorten

from .test_rules import bash, session


def edit(path: str, old: str = "a", new: str = "b") -> tuple[str, Any]:
    return ("tool", ("Edit", {"file_path": path, "old_string": old, "new_string": new}, "ok", False))


def bullets(*events: tuple[str, Any]) -> list[str]:
    return [distill(c) for c in detect(parse_transcript(session(*events)))]


def test_the_state_changing_command_before_the_success_gets_the_credit_not_the_diagnostics() -> None:
    (b,) = bullets(
        bash("git commit -m 'x'", "Author identity unknown\n*** Please tell me who you are.", True),
        bash("git status", "On branch main"),
        bash("cat ~/.gitconfig", "cat: /root/.gitconfig: No such file or directory"),
        bash("git config --global user.email dev@example.com"),
        bash("ls -la"),
        bash("git commit -m 'x'", "[main 1a2b3c] x"),
    )
    assert "git config --global user.email dev@example.com" in b and "it succeeded" in b
    assert "git status" not in b and "cat " not in b and "ls -la" not in b


@pytest.mark.parametrize(
    ("fix", "shown"),
    [
        ("sudo systemctl restart nginx", "sudo systemctl restart nginx"),
        ("rm -rf node_modules && npm ci", "rm -rf node_modules && npm ci"),
        ("pip install pyyaml", "pip install pyyaml"),
    ],
)
def test_restarts_clean_reinstalls_and_installs_are_credited(fix: str, shown: str) -> None:
    (b,) = bullets(
        bash("npm run start", "Error: connect ECONNREFUSED 127.0.0.1:8080", True),
        bash("ping -c 1 127.0.0.1", "1 packets transmitted, 1 received"),
        bash("grep -r listen /etc/nginx", "listen 8080;"),
        bash(fix, "done"),
        bash("npm run start", "listening on 8080"),
    )
    assert f"running `{shown}`" in b and "ping" not in b and "grep" not in b


def test_a_differently_formed_command_counts_as_the_fix() -> None:
    (b,) = bullets(
        bash("pytest tests/", "bash: pytest: command not found", True),
        bash("which pytest", "", True),
        bash(".venv/bin/python -m pytest tests/", "12 passed in 0.4s"),
    )
    assert "`.venv/bin/python -m pytest tests/` worked" in b and "command not found" in b


def test_an_env_var_that_skips_a_hook_is_the_fix_of_a_gate() -> None:
    (b,) = bullets(
        bash(
            "git commit -m 'wip'", "husky - pre-commit hook exited with code 1 (error)\neslint found 3 problems", True
        ),
        bash("SKIP_HOOKS=1 git commit -m 'wip'", "[main 9f8e7d] wip"),
    )
    assert b.startswith("A commit check runs here") and "`SKIP_HOOKS=1 git commit -m 'wip'` worked" in b


def test_a_per_package_linter_run_after_a_failing_root_run_is_learned() -> None:
    (b,) = bullets(
        bash("npx eslint .", "Error: No ESLint configuration found in /repo", True),
        bash("npx eslint packages/web/src", "✔ no problems"),
    )
    assert "`npx eslint packages/web/src` worked" in b


def test_a_fix_is_not_said_to_work_when_the_next_run_failed_too() -> None:
    (b,) = [
        text
        for text in bullets(
            bash("cargo build", "error[E0432]: unresolved import `serde`", True),
            ("assistant", "The serde crate is missing from Cargo.toml, so the import cannot resolve."),
            edit("/p/Cargo.toml", "[dependencies]", '[dependencies]\nserde = "1"'),
            bash("cargo build", "error[E0599]: no method named `foo` found", True),
        )
        if text.startswith("When")
    ]
    assert "worked" not in b and "succeeded" not in b and "that error went away" in b


def test_a_pipe_that_hides_the_exit_code_is_not_an_observed_success() -> None:
    found = bullets(
        bash("npm test 2>&1 | tail -5", "Error: Cannot find module 'jsdom'", True),
        bash("npm install jsdom", "added 1 package"),
        bash("npm test 2>&1 | tail -5", "Tests: 3 failed, 10 passed"),
    )
    assert not any("succeeded" in b or "worked" in b for b in found)


def test_a_long_command_is_never_cut_inside_a_path_or_flag() -> None:
    target = "/very/long/path/" + "segment/" * 20 + "file.py"
    long_cmd = f"python -m mypy --strict --config-file pyproject.toml {target} --show-error-codes"
    (b,) = bullets(
        bash("python -m mypy --strict src", "src/a.py:1: error: Missing return", True),
        bash(long_cmd, "Success: no issues found"),
    )
    inner = b.split("`")[3]
    assert inner == long_cmd or (inner.endswith(" …") and all(w in long_cmd.split() for w in inner[:-2].split()))
    assert shorten("git push --set-upstream origin feature/x", 20) == "git push …"


def test_an_explanation_about_another_problem_is_not_the_cause() -> None:
    (b,) = bullets(
        bash("git commit -m x", "Pre-commit validation failed: [FORMAT] Code is not formatted.", True),
        ("assistant", "The dialyzer warning in worker.ex happens because the spec is too narrow."),
        bash("mix format"),
        bash("git commit -m x", "[main abc] x"),
    )
    assert "dialyzer" not in b and "running `mix format`" in b


@pytest.mark.parametrize(
    "line",
    ["$ ssh root@192.168.1.1", "192.168.1.1", "ÃƒÂ©chec de la connexion Ã  lâ€™hÃ´te", "ϵͳ�Ҳ���ָ����·��"],
)
def test_command_echoes_addresses_and_garbled_text_are_not_error_signatures(line: str) -> None:
    assert error_signature(line, "ssh root@192.168.1.1") == ""
    assert error_signature(f"{line}\nssh: connect to host 192.168.1.1 port 22: Connection refused", "ssh x") == (
        "ssh: connect to host 192.168.1.1 port 22: Connection refused"
    )


@pytest.mark.parametrize("text", ["is it done?", "搞定了吗", "できましたか", "Did that fix it？", "修好了吗？"])
def test_questions_are_recognised_in_three_languages(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize("text", ["It is done.", "搞定了", "できました。", "Fixed it by pinning pydantic"])
def test_statements_are_not_questions(text: str) -> None:
    assert not is_question(text)


def test_an_approval_loop_and_its_way_out_is_a_lesson() -> None:
    blocked = "This command requires approval"
    (b,) = bullets(
        bash("rm -rf build/", blocked, True),
        bash("rm -rf ./build", blocked, True),
        bash("rm -r build", blocked, True),
        bash("npm run clean", "cleaned"),
    )
    assert "`rm -rf build/`" in b and "requires approval" in b and "`npm run clean` ran instead" in b


def test_a_refused_call_with_the_users_instruction_is_a_lesson() -> None:
    (b,) = bullets(
        bash(
            "git push --force", "The user doesn't want to proceed with this tool use. The tool use was rejected", True
        ),
        ("user", "never force-push here, open a PR branch instead"),
        bash("git push origin HEAD:pr-branch", "pushed"),
    )
    assert "`git push --force` was refused" in b and "never force-push here" in b


def test_one_refusal_without_a_word_from_the_user_is_not_a_lesson() -> None:
    assert (
        bullets(
            bash("git push", "The user doesn't want to proceed with this tool use.", True),
            bash("git push", "pushed"),
        )
        == []
    )


def test_command_kinds_and_goals() -> None:
    assert action_kind("cat a.txt | grep x") == "diagnostic"
    assert action_kind("git status && git log -1") == "diagnostic"
    assert action_kind("git config --global core.autocrlf false") == "state"
    assert action_kind("mix format") == "state"
    assert action_kind("pytest -x") == "diagnostic"
    assert action_kind("echo 'x=1' > .env") == "state"
    assert goal_key("/usr/bin/python3.11 -m pytest -q") == goal_key("pytest -q") == "pytest"
    assert goal_key(r"C:\Python311\python.exe build.py") == goal_key("python3 scripts/build.py") == "python build.py"
    assert goal_key("python -m mypy --strict src") == goal_key("mypy --config-file x.toml") == "mypy"
    assert goal_key('ssh -p 2222 root@192.168.1.1 "opkg install luci"') == "opkg install"
    assert goal_key('powershell -Command "Get-Service sshd"') == "get-service"
    assert action_kind("ssh root@192.168.1.1 'uci show network'") != "state"
    assert action_kind("ssh root@192.168.1.1 '/etc/init.d/network restart'") == "state"
    assert action_kind("ssh root@192.168.1.1 'uci set network.lan.ipaddr=10.0.0.1'") == "state"


def test_the_whole_pipeline_states_only_what_was_observed_on_a_chatty_session() -> None:
    text = session(
        ("user", "is it done? 搞定了吗 できましたか"),
        bash("ping -c 3 10.0.0.1", "3 packets transmitted, 3 received"),
        bash("ls /etc", "hosts"),
        bash("curl -s http://10.0.0.1/status", "ok"),
        ("assistant", "All good, the router answers."),
    )
    report = Reflector(PrivacySanitizer(), "rules").reflect(parse_transcript(text))
    assert report.bullets == []


def test_another_tool_on_the_same_file_after_command_not_found_is_the_fix() -> None:
    (b,) = bullets(
        bash("jq '.sessionId' logs/f33c.jsonl", "bash: jq: command not found", True),
        bash("python3 -c \"import json; print(json.loads(open('logs/f33c.jsonl').readline())['sessionId'])\"", "f33c"),
    )
    assert "jq: command not found" in b and "python3 -c" in b and "worked" in b


def test_a_hook_that_blocks_a_command_states_the_projects_rule() -> None:
    (b,) = bullets(
        bash("python manage.py test", "PreToolUse:Bash hook error: Use `uv run python` instead of bare python", True),
        bash("uv run python manage.py test", "OK"),
    )
    assert b.startswith("A hook in this project blocks `python manage.py test`")
    assert "Use `uv run python` instead" in b.replace("'", "`") and "`uv run python manage.py test` ran instead" in b


def test_a_failure_hidden_by_a_pipe_opens_an_episode() -> None:
    (b,) = bullets(
        bash("docker compose build web 2>&1 | tail -5", "ERROR: failed to solve: process 'npm ci' did not complete"),
        ("assistant", "The lockfile is out of date with package.json, so npm ci refuses to install."),
        bash("npm install --package-lock-only"),
        bash("docker compose build web 2>&1 | tail -5", "#12 DONE 3.1s\nnaming to docker.io/library/web done"),
    )
    assert "failed to solve" in b and "running `npm install --package-lock-only`" in b and "it succeeded" in b


def test_curl_printing_an_http_error_code_is_a_failure_not_a_success() -> None:
    found = bullets(
        bash('curl -s -o /dev/null -w "%{http_code}" https://app.example.com/health', "504"),
        bash("docker network connect web_net proxy", "ok"),
        bash('curl -s -o /dev/null -w "%{http_code}" https://app.example.com/health', "502"),
    )
    assert not any("succeeded" in b or "worked" in b for b in found)


def test_a_command_that_stops_at_an_interactive_prompt_twice_is_a_lesson() -> None:
    prompt = "\x1b[36m?\x1b[39m Would you like to use React Compiler? › No / Yes"
    (b,) = bullets(
        bash("npx create-next-app@latest . --typescript", prompt),
        bash("printf 'n\\n' | npx create-next-app@latest . --typescript", prompt),
    )
    assert "stops at the interactive prompt" in b and "React Compiler" in b and "never got past it" in b


def test_a_docker_compose_service_brought_up_differently_is_the_fix() -> None:
    (b,) = bullets(
        bash("docker compose -p geox restart geox_server", "no such service: geox_server", True),
        bash("docker compose -p geox ps", "NAME IMAGE"),
        bash("git pull origin main", "Already up to date."),
        bash("docker compose -p geox up -d --build geox_server", "Container geox_server Started"),
    )
    assert "`docker compose -p geox up -d --build geox_server` worked" in b
    assert "git pull" not in b and "compose -p geox ps" not in b


def test_a_lint_rule_in_the_output_makes_an_edit_fix_a_convention() -> None:
    out = "Failed to compile.\n./app/layout.tsx\n26:43  Error: Unexpected any.  @typescript-eslint/no-explicit-any"
    (b,) = bullets(bash("npm run build", out, True), edit("/p/app/layout.tsx"), bash("npm run build", "Compiled"))
    assert "@typescript-eslint/no-explicit-any" in b and "after editing layout.tsx (`a` → `b`), it succeeded" in b


def test_an_announcement_of_the_next_step_is_not_an_explanation() -> None:
    (b,) = bullets(
        bash("npx create-next-app .", "The directory portfolio contains files that could conflict:\n  README.md", True),
        ("assistant", "README.mdは簡単な見出しだけなので、一時的に移動してNext.jsプロジェクトを作成します："),
        bash("mv README.md README.md.bak"),
        bash("npx create-next-app .", "Success! Created portfolio"),
    )
    assert "作成します" not in b and "running `mv README.md README.md.bak`" in b and "README.md" in b


def test_a_problem_the_user_reported_and_then_confirmed_fixed_is_an_episode() -> None:
    toggle = {
        "file_path": "/p/src/lib/ThemeToggle.svelte",
        "old_string": "document.body.classList.add('dark')",
        "new_string": "document.documentElement.classList.add('dark')",
    }
    (b,) = bullets(
        ("user", "ダークモードの切り替えボタンが動作しないです。"),
        ("assistant", "CSS変数は:rootに定義されているため、darkクラスはhtml要素に付ける必要があります。"),
        ("tool", ("Edit", toggle, "ok", False)),
        ("user", "解決しました。ありがとうございます"),
    )
    assert "`document.body.classList.add` → `document.documentElement.classList.add`" in b and "ThemeToggle" in b
    assert "解決しました" in b and ":root" in b


def test_a_complaint_never_confirmed_fixed_is_not_an_episode() -> None:
    edit_args = {"file_path": "/p/app.js", "old_string": "a", "new_string": "b"}
    assert (
        bullets(
            ("user", "the save button doesn't work"),
            ("tool", ("Edit", edit_args, "ok", False)),
            ("user", "is it fixed now?"),
        )
        == []
    )


def test_a_chained_cd_followed_by_a_cwd_reset_notice_is_not_a_lesson() -> None:
    # real shape: the command already ran where it meant to; the notice is the harness talking
    found = bullets(
        bash(
            "cd /Users/dev/.claude/hooks && bun run initialize-session.ts", "ok\nShell cwd was reset to /Users/dev/PAI"
        )
    )
    assert found == []


def test_a_refusal_followed_by_continue_is_not_an_instruction() -> None:
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    found = bullets(
        bash("git commit -m 'Add docs'", refused, True),
        ("user", "continue"),
        bash("git commit -m 'Add docs'", "[main 1a2b3c4] Add docs"),
    )
    assert found == []


def test_an_interrupted_push_is_not_a_failure_fixed_by_the_commit_before_it() -> None:
    stop = (
        "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to "
        "tell you how to proceed."
    )
    found = bullets(
        bash("git push origin main", stop, True),
        ("user", "continue"),
        bash("git commit -m 'Add docs'", "[main 1a2b3c4] Add docs"),
        bash("git push origin main", "To github.com:o/r.git\n   1a2b3c4..5d6e7f8  main -> main"),
    )
    assert not any("git push" in b and "succeeded" in b for b in found), found


def test_a_refusal_with_a_redirect_keeps_what_the_user_said() -> None:
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    (b,) = bullets(bash("npm install", refused, True), ("user", "use pnpm instead, never npm in this repo"))
    assert "use pnpm instead" in b


def test_the_cursor_wrappers_here_document_noise_is_not_an_error() -> None:
    noise = (
        "--: line 20: cannot create temp file for here-document: Permission denied\n"
        "--: dump_bash_state: command not found\n"
    )
    t = parse_transcript(session(bash("git log --oneline -n 3", noise + "a1b2c3d fix build\n9f8e7d6 add docs", None)))
    (step,) = [s for s in t.steps if s.role == "tool"]
    assert not step.is_error and "here-document" not in step.result and "a1b2c3d" in step.result


def test_a_fix_chained_after_earlier_changes_does_not_take_their_credit() -> None:
    (b,) = bullets(
        bash("bun self-test.ts", "❌ History Directory: Missing: /p/.claude/history", True),
        bash("mkdir -p ~/.claude/history/sessions && mkdir -p ~/.claude/history/learnings"),
        bash("rm -rf ~/.claude/history/\\{*; bun self-test.ts", "✅ 13/13 checks passed"),
    )
    assert "mkdir -p ~/.claude/history/sessions" in b and "rm -rf" not in b


def test_another_script_is_not_another_form_of_the_failed_one() -> None:
    found = bullets(
        bash("python diverse_musical_ai.py", "Press Enter to continue...", True),
        bash("python test_diverse_simple.py", "all good"),
    )
    assert not any("test_diverse_simple.py` worked" in b for b in found), found


def test_a_file_utility_pointed_at_a_missing_path_is_not_a_lesson() -> None:
    found = bullets(
        bash(
            "cp /tmp/exports/run1/conversation_full.xml .",
            "cp: cannot stat '/tmp/exports/run1/conversation_full.xml': No such file or directory",
            True,
        ),
        bash("python export.py --out /tmp/exports/run1"),
        bash("cp /tmp/exports/run1/conversation_full.xml .", ""),
    )
    assert found == []


def test_git_refusing_to_merge_over_local_changes_is_not_a_lesson() -> None:
    out = "error: Your local changes to the following files would be overwritten by merge:\n\t.gitignore"
    found = bullets(
        bash("git pull origin main --no-rebase", out, True),
        bash("git add .gitignore && git commit -m 'gitignore'"),
        bash("git pull origin main --no-rebase", "Merge made by the 'ort' strategy."),
    )
    assert found == []


def test_a_cheer_at_the_end_of_the_work_is_not_the_reason_for_a_change() -> None:
    change = {
        "file_path": "/p/.github/workflows/deploy.yml",
        "old_string": "region: us-east1",
        "new_string": "region: asia-northeast1",
    }
    (b,) = bullets(
        ("assistant", "すべての設定が完了しているので、region を設定すればすぐにデプロイできます！"),
        ("tool", ("Edit", change, "ok", False)),
    )
    assert "デプロイできます" not in b and "region from us-east1 to asia-northeast1" in b


def test_a_small_edit_credited_as_a_fix_says_what_it_changed() -> None:
    (b,) = bullets(
        bash("python app.py", "EOFError: EOF when reading a line", True),
        ("assistant", "The EOFError comes from input() in app.py: the agent's shell has no stdin to read a line from."),
        edit("/p/app.py", "input('Press Enter to continue...')", "time.sleep(3)"),
        bash("python app.py", "done"),
    )
    assert "editing app.py (`input` → `time.sleep`" in b


def test_a_cd_the_shell_resets_is_a_lesson_once() -> None:
    found = bullets(
        bash("cd packages/api", "Shell cwd was reset to /Users/dev/PAI"),
        bash("cd packages/web", "Shell cwd was reset to /Users/dev/PAI"),
    )
    assert len(found) == 1 and "cwd was reset" in found[0] and "`cd packages/api`" in found[0]
