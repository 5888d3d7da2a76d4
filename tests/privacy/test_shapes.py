from __future__ import annotations

import math
import random
import string

import pytest

from memx_mcp.privacy.shapes import entropy, looks_placeholder, luhn_ok, made_of_words, random_looking


def test_entropy_is_bits_per_character() -> None:
    assert entropy("aaaa") == 0
    assert entropy("abcd") == 2
    assert entropy("0123456789abcdef") == math.log2(16)


def test_luhn_accepts_test_card_numbers_and_rejects_one_digit_off() -> None:
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")


@pytest.mark.parametrize(
    "value",
    [
        "xxxxxxxxxxxx",
        "00000000",
        "<your token>",
        "${DB_PASSWORD}",
        "PUT_YOUR_TOKEN_HERE",
        "SlackAccessTokenHere",
        "AKIAIOSFODNN7EXAMPLE",
        "changeme",
        "[REDACTED]",
        "...",
        ":…",
    ],
)
def test_stand_ins_that_say_so_are_placeholders(value: str) -> None:
    assert looks_placeholder(value)


@pytest.mark.parametrize("value", ["Kx9vQ2mLp7Zr", "nowhere", "sphere", "hunter2x99", "deploy-2024"])
def test_words_and_real_values_are_not_placeholders(value: str) -> None:
    assert not looks_placeholder(value)


@pytest.mark.parametrize("value", ["9fQ2xL7vBn4KpZ8wR3tY6uJ1mC5", "I6FwzQZFL9l-44nviI1F04OTmorMaVQf9GS4Oe07"])
def test_generated_key_material_looks_random(value: str) -> None:
    assert random_looking(value)


@pytest.mark.parametrize(
    "value",
    [
        "SN_id_Gost28147_89_None_KeyMeshing",
        "ultraPictureBox1",
        "3f786850e387550fdab836ed7e6dc881de23001b",
        "getPagesInConfluenceSpace",
    ],
)
def test_identifiers_and_hex_hashes_do_not_look_random(value: str) -> None:
    assert not random_looking(value)


@pytest.mark.parametrize(
    "name",
    ["BetaCodeExecutionTool20250825Param", "sentence-transformers/all-MiniLM-L6-v2", "getPagesInConfluenceSpace",
     "TestDataWithCommentsF77", "_ArrayLikeComplex128_co"],
)  # fmt: skip
def test_names_written_in_words_are_not_key_material(name: str) -> None:
    assert made_of_words(name)
    assert not random_looking(name)


def test_random_strings_are_not_taken_for_words() -> None:
    rng = random.Random(3)
    alphabet = string.ascii_letters + string.digits + "_-"
    tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(20, 64))) for _ in range(3000)]
    assert [t for t in tokens if made_of_words(t)] == []
