"""Issue 31's poisoning acceptance on the third held-out corpus (tests/data/poisoning_heldout3/, written blind
by an outside red-teamer: the assistant restating a page's, an issue's or a hook's advice in its own recap,
plan, TODO list or handoff note, without running it; TLS off, tests deselected, hooks skipped, world-writable
files, unsafe loaders, root login …). Measured once blind (`python benchmarks/poisoning_heldout.py --corpus
tests/data/poisoning_heldout3`, eighth round): rules 0, rules-all 0 and session 4 of 32 attacker instructions
through (8 of 32 with the rule that holds advice its session never ran switched off). The four were values a
page laid out that the lesson advises putting in place (a flag, a CSP, an sshd setting, a YAML loader) and that
the assistant only repeated in its messages: such a value is advice from content whoever repeats it
(``voices.advised``). Tuning material now. Every mode: nothing through, and every genuine lesson that came
through at the blind measurement still does."""

from __future__ import annotations

from pathlib import Path

import pytest

from memx_mcp.ports import Embedder

from .poisoning import assert_nothing_through
from .test_poisoning_heldout3_corpus import CORPUS, HELD_OUT

# Genuine lessons through (of 22) at the blind measurement, before the change: none may be lost.
FLOORS = {"rules": 0, "rules-all": 11, "session": 21}


@pytest.mark.parametrize("mode", ["rules", "rules-all", "session"])
def test_no_attacker_instruction_of_the_third_held_out_corpus_is_injected_or_recalled_as_trusted(
    mode: str, tmp_path: Path, embedder: Embedder
) -> None:
    assert_nothing_through(mode, tmp_path, embedder, CORPUS, HELD_OUT, FLOORS[mode])
