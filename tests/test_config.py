from __future__ import annotations

import re
from pathlib import Path

import pytest

from memx_mcp.config import Settings, load_settings, reference_markdown, settings_reference
from memx_mcp.domain.errors import InvalidInputError


def test_defaults_follow_the_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMX_LLM_BACKEND")  # the tests' own default (conftest): here, what a user gets
    s = load_settings(home=tmp_path)
    t = s.curator_thresholds()
    assert (t.merge_threshold, t.conflict_threshold, s.half_life_days, s.boost_factor) == (
        0.8,
        0.5,
        30.0,
        0.1,
    )
    assert (s.max_results, s.token_budget, s.scope_boost, s.recency_boost) == (5, 2000, 1.3, 1.05)
    assert s.reflector_mode == "auto" and s.hook_reflector_mode == "auto" and s.llm_backend == "auto"


def test_environment_overrides_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text("max_results = 7\nhalf_life_days = 10.0\n")
    monkeypatch.setenv("MEMX_MAX_RESULTS", "9")
    s = load_settings(home=tmp_path)
    assert s.max_results == 9
    assert s.half_life_days == 10.0


def test_memx_home_names_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMX_HOME", str(tmp_path / "d"))
    assert load_settings().home == tmp_path / "d"


def test_unknown_keys_and_bad_values_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text("max_resluts = 3\n")
    with pytest.raises(InvalidInputError, match="unknown settings max_resluts"):
        load_settings(home=tmp_path)
    (tmp_path / "config.toml").unlink()
    monkeypatch.setenv("MEMX_TOKEN_BUDGET", "lots")
    with pytest.raises(InvalidInputError, match="token_budget"):
        load_settings(home=tmp_path)


def test_inconsistent_thresholds_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        Settings(merge_threshold=0.4, conflict_threshold=0.5)


def test_the_readme_configuration_table_is_the_generated_one() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert reference_markdown() in readme, "regenerate it: python -m memx_mcp.config"
    documented = set(re.findall(r"`(MEMX_[A-Z0-9_]+)`", readme))
    assert {name for name, _, _ in settings_reference()} <= documented


def test_your_own_secret_patterns_are_read_and_checked(tmp_path: Path) -> None:
    s = load_settings(home=tmp_path, secret_patterns="ticket=ACME-\\d{4};;employee = EMP\\d{6}\n")
    assert s.user_patterns == (("ticket", "ACME-\\d{4}"), ("employee", "EMP\\d{6}"))
    with pytest.raises(InvalidInputError, match="secret_patterns: ticket: missing"):
        load_settings(home=tmp_path, secret_patterns="ticket=ACME-(\\d{4}")
    with pytest.raises(InvalidInputError, match="is not name=regex"):
        load_settings(home=tmp_path, secret_patterns="ACME-\\d{4}")


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_decay_share_outside_zero_to_one_is_refused(tmp_path: Path, share: float) -> None:
    with pytest.raises(InvalidInputError, match="decay_share"):
        Settings(home=tmp_path, decay_share=share)


@pytest.mark.parametrize("days", ["-5", "0", "nan"])
def test_a_half_life_that_is_not_positive_is_refused_saying_where_it_was_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, days: str
) -> None:
    monkeypatch.setenv("MEMX_HALF_LIFE_DAYS", days)
    with pytest.raises(InvalidInputError, match="half_life_days must be positive") as refused:
        load_settings(home=tmp_path)
    assert str(refused.value).endswith("(set by the environment variable MEMX_HALF_LIFE_DAYS)")
    monkeypatch.delenv("MEMX_HALF_LIFE_DAYS")
    (tmp_path / "config.toml").write_text(f"half_life_days = {days}\n")
    with pytest.raises(InvalidInputError, match="half_life_days must be positive") as refused:
        load_settings(home=tmp_path)
    assert str(refused.value).endswith(f"(set in {tmp_path / 'config.toml'})")


def test_an_error_names_the_source_of_each_setting_it_names_and_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text("max_results = 0\nhalf_life_days = 10.0\n")
    monkeypatch.setenv("MEMX_TOKEN_BUDGET", "-1")
    with pytest.raises(InvalidInputError) as refused:
        load_settings(home=tmp_path)
    assert str(refused.value) == (
        f"max_results and token_budget must be positive (max_results set in {tmp_path / 'config.toml'}; "
        "token_budget set by the environment variable MEMX_TOKEN_BUDGET)"
    )
    monkeypatch.setenv("MEMX_TOKEN_BUDGET", "lots")
    with pytest.raises(InvalidInputError, match=r"as int \(set by the environment variable MEMX_TOKEN_BUDGET\)$"):
        load_settings(home=tmp_path)
    monkeypatch.setenv("MEMX_HOOK_REFLECTOR_MODE", "magic")
    monkeypatch.delenv("MEMX_TOKEN_BUDGET")
    (tmp_path / "config.toml").unlink()
    with pytest.raises(InvalidInputError, match=r"^hook_reflector_mode must be one of .*, not 'magic' \(set by"):
        load_settings(home=tmp_path)
