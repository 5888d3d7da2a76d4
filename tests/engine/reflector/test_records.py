"""Fix records a session writes out itself (work logs, summaries): symptom, cause and fix kept together."""

from __future__ import annotations

from memx_mcp.engine.reflector.rules.detect import detect
from memx_mcp.engine.reflector.rules.distiller import distill
from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript

WORK_LOG = """# Claude 作業ログ

### E2E テスト全件パス（8/8）

#### 1. レートリミットによる TODO 作成失敗
- **症状**: テストを繰り返し実行すると POST /todos が失敗する
- **原因**: `backend/src/app.ts` のレートリミットが `NODE_ENV !== 'test'` 条件で有効だった
- **修正**: 条件を `=== 'production'` に変更

#### 2. 削除ボタンが見つからない
- **症状**: `card.getByRole('button', { name: '削除' })` がタイムアウト
- **修正**: `card.getByTitle('削除')` に変更
- **原因その2**: `.todoActions` が `opacity: 0` でホバーしないと不可視
- **修正**: クリック前に `await card.hover()` を追加

  8 passed (7.4s)
"""


def bullets(text: str) -> list[str]:
    return [distill(c) for c in detect(parse_transcript(text))]


def test_a_work_logs_symptom_cause_and_fix_become_one_bullet_each() -> None:
    found = bullets(WORK_LOG)
    assert len(found) == 2
    assert "NODE_ENV" in found[0] and "production" in found[0] and "fixed by" in found[0]
    assert "getByTitle" in found[1] and "card.hover()" in found[1]  # both fixes of one problem stay together


def test_an_english_summary_with_root_cause_and_fix_is_a_record() -> None:
    text = (
        "## Summary\n\nAll 42 tests pass now.\n\n### Flaky login test\n"
        "- **Root cause**: the session cookie was set with `SameSite=Strict`, dropped on the OAuth redirect\n"
        "- **Fix**: `SameSite=Lax` in `config/session.ts`\n"
    )
    (b,) = bullets(text)
    assert "SameSite=Strict" in b and "fixed by `SameSite=Lax`" in b


def test_a_plan_with_causes_and_fixes_but_no_result_is_not_a_record() -> None:
    text = (
        "## Plan\n\n### Flaky login test\n- **Cause**: probably the `SameSite=Strict` cookie\n"
        "- **Fix**: try `SameSite=Lax` in `config/session.ts`\n"
    )
    assert bullets(text) == []


def rules(text: str) -> list[str]:
    return [c.rule for c in detect(parse_transcript(text))]


def test_a_rule_the_user_states_with_the_identifier_it_names_is_a_convention() -> None:
    (b,) = [
        distill(c)
        for c in detect(parse_transcript("User: Always run `mix format` before committing, never `git commit -n`."))
    ]
    assert b.startswith("The user's rule here:") and "`mix format`" in b


def test_rules_stated_in_chinese_and_japanese_are_conventions() -> None:
    assert "ConventionRule" in rules("用户：以后不要直接改 `dist/` 目录，改 `src/` 然后运行 `npm run build`。")
    assert "ConventionRule" in rules("ユーザー：`.env` は絶対にコミットしないでください。")


def test_the_harness_boilerplate_in_a_user_turn_is_not_a_convention() -> None:
    for text in (
        "User: DO NOT respond to these messages or otherwise consider them in your response unless asked.",
        "User: Implement the plan. Do NOT edit the plan file itself. Don't stop until you have completed all the to-dos.",
    ):
        assert "ConventionRule" not in rules(text), text


def test_a_problem_the_user_reports_is_not_a_rule_even_with_instead_of() -> None:
    report = (
        "User: When I navigate to qbittorrent.example.com instead of loading my qbittorrent instance, "
        "I am getting redirected to admin.example.com."
    )
    assert "ConventionRule" not in rules(report)
    assert "ConventionRule" in rules("User: Use `uv run pytest` instead of `python -m pytest` in this repository.")
