"""Which repository paths a bullet names, and when one gone from the tree makes the bullet stale."""

from __future__ import annotations

from memx_mcp.engine.staleness import cited_paths, stale_reason


def test_paths_of_the_repository_are_found_and_urls_versions_and_hosts_are_not() -> None:
    text = (
        "Run `scripts/aider_with_patch.py` (not aider) after editing config/test.exs and package.json; see "
        "https://example.com/docs/a.html, version 1.2.3, example.com and ~/.bashrc."
    )
    assert cited_paths(text) == ["scripts/aider_with_patch.py", "config/test.exs", "package.json"]


def test_a_bullet_is_stale_when_a_file_the_repository_tracked_is_gone() -> None:
    now, ever = {"src/app.py"}, {"src/app.py", "src/old.py"}
    exists, was_here = now.__contains__, ever.__contains__
    assert stale_reason("Start it with src/app.py --debug.", exists, was_here) == ""
    assert stale_reason("Fix src/old.py first.", exists, was_here) == "src/old.py is not in the working tree any more"
    assert stale_reason("The bundle is dist/app.js.", exists, was_here) == ""  # never tracked: nothing to say
    assert stale_reason("Use pnpm, never npm.", exists, was_here) == ""
