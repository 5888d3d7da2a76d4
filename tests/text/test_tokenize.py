from __future__ import annotations

from memx_mcp.text.tokenize import query_terms, tokens


def test_command_with_a_short_flag_keeps_the_flag() -> None:
    assert tokens("pytest -v") == ["pytest", "-v", "v"]


def test_long_flags_keep_the_flag_and_its_words() -> None:
    assert tokens("--dry-run") == ["--dry-run", "dry", "run"]


def test_snake_case_is_kept_whole_and_split() -> None:
    assert tokens("max_pool_size") == ["max_pool_size", "max", "pool", "size"]


def test_dotted_names_are_kept_whole_and_split() -> None:
    assert tokens("os.path.join") == ["os.path.join", "os", "path", "join"]


def test_error_types_split_on_camel_case() -> None:
    assert tokens("ModuleNotFoundError:") == ["modulenotfounderror", "module", "not", "found", "error"]


def test_paths_keep_whole_path_and_parts() -> None:
    assert tokens("src/memx_mcp/cli.py") == [
        "src/memx_mcp/cli.py",
        "src",
        "memx_mcp",
        "memx",
        "mcp",
        "cli",
        "py",
    ]


def test_sentence_punctuation_is_stripped() -> None:
    assert tokens("(pytest-xdist), done.") == ["pytest-xdist", "pytest", "xdist", "done"]


def test_chinese_gives_characters_and_bigrams_so_substrings_match() -> None:
    terms = tokens("连接池大小")
    assert {"连接", "接池", "池大", "大小"} <= set(terms)
    assert set(query_terms("连接池")) <= set(terms)


def test_japanese_gives_bigrams_and_drops_particles_in_queries() -> None:
    terms = set(tokens("東京の天気は晴れです"))
    assert "天気" in terms
    q = query_terms("天気は")
    assert "は" not in q and "天気" in q


def test_query_terms_drop_stop_words_and_repeats() -> None:
    assert query_terms("how do I run the tests and the tests") == ["run", "test"]  # stemmed


def test_plain_words_are_lightly_stemmed_but_code_is_not() -> None:
    assert tokens("painting stories") == ["paint", "story"]
    assert tokens("v2.4.6")[0] == "v2.4.6" and "running" not in tokens("running")


def test_a_query_of_common_words_only_has_no_terms_but_one_meaningful_word_keeps_its_own() -> None:
    assert query_terms("the") == [] and query_terms("how should I do it") == [] and query_terms("的") == []
    assert query_terms("pytest") == ["pytest"] and query_terms("猫") == ["猫"]
    assert "todo" in query_terms("How should I search the codebase for all the TODO comments?")
