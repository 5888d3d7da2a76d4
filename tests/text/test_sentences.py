from __future__ import annotations

import pytest

from memx_mcp.text.sentences import split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Set strict in tsconfig.json. Then rebuild.", ["Set strict in tsconfig.json.", "Then rebuild."]),
        ("Put the key in .env and restart. Done!", ["Put the key in .env and restart.", "Done!"]),
        ("Run build.py again. It passes.", ["Run build.py again.", "It passes."]),
        ("Pin v1.2.3 of the tool. Pi is 3.14 here.", ["Pin v1.2.3 of the tool.", "Pi is 3.14 here."]),
        ("See https://x.y/z. Then go on.", ["See https://x.y/z.", "Then go on."]),
        ("Edit the path ~/.config/app/settings.toml now.", ["Edit the path ~/.config/app/settings.toml now."]),
    ],
)
def test_file_names_paths_versions_urls_and_decimals_stay_whole(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_abbreviations_do_not_end_a_sentence() -> None:
    assert split_sentences("Use a linter (e.g. ruff). It is fast, i.e. very fast. Tabs, spaces, etc. are handled.") == [
        "Use a linter (e.g. ruff).",
        "It is fast, i.e. very fast.",
        "Tabs, spaces, etc. are handled.",
    ]


def test_etc_before_a_capital_letter_ends_the_sentence() -> None:
    assert split_sentences("Lint, test, etc. Then push.") == ["Lint, test, etc.", "Then push."]


def test_cjk_sentence_ends_split_without_a_space() -> None:
    assert split_sentences("先安装依赖。然后运行测试！好了吗？好") == [
        "先安装依赖。",
        "然后运行测试！",
        "好了吗？",
        "好",
    ]
    assert split_sentences("設定を変更した。テストは通る。") == ["設定を変更した。", "テストは通る。"]


def test_commands_and_quoted_error_output_are_never_cut() -> None:
    text = 'When `cd .. && ls. -a` fails with "Error: no. Stop.": run it. Next step.'
    assert split_sentences(text) == ['When `cd .. && ls. -a` fails with "Error: no. Stop.": run it.', "Next step."]


def test_list_numbers_stay_with_their_item_and_lines_end_sentences() -> None:
    assert split_sentences("1. Install it. 2. Run it.\n- then push") == ["1. Install it.", "2. Run it.", "- then push"]


def test_empty_and_blank_text_give_no_sentence() -> None:
    assert split_sentences("") == []
    assert split_sentences("  \n\n ") == []


def test_reflector_prose_bullets_keep_the_file_name_they_name() -> None:
    from memx_mcp.engine.reflector.rules.detect import detect
    from memx_mcp.engine.reflector.transcripts.transcript import parse_transcript

    text = "User: the TS2307 error is gone, the fix was to add paths to tsconfig.json. Now it compiles."
    fixes = [c.facts.get("fix", "") for c in detect(parse_transcript(text)) if c.rule == "ErrorFixRule"]
    assert any(f.endswith("tsconfig.json.") for f in fixes), fixes


def test_reflector_explanations_are_not_cut_at_an_abbreviation() -> None:
    from memx_mcp.engine.reflector.shell.commands import explanation

    assert explanation("The loader needs the key, e.g. API_KEY in .env. Then restart it.") == (
        "The loader needs the key, e.g. API_KEY in .env."
    )
