"""The script family recall's cross-language rule compares (issue 33): Chinese and Japanese are one family, since
memx's keyword layers match the Han characters they share; Latin text is the other."""

from __future__ import annotations

from memx_mcp.text.language import script, text_language


def test_a_chinese_paragraph_with_a_kana_title_is_in_the_same_family_as_a_chinese_question() -> None:
    paragraph = "《ドラゴンボール》是日本漫画家鸟山明创作的漫画作品，1984年开始连载。"
    assert text_language(paragraph) == "ja"  # one kana marks Japanese
    assert script(paragraph) == script("鸟山明的漫画是哪一年开始连载的？") == "cjk"


def test_english_and_chinese_or_japanese_are_different_families() -> None:
    assert script("Which port does the local Postgres use?") == "latin"
    assert script("ローカルの Postgres はポート 5433 で動かす") == "cjk"
    assert script("本地的 Postgres 使用 5433 端口") == "cjk"
