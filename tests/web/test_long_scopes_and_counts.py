"""What a new user found on the page (round 9): a long scope name widened the phone's page through the Scope
dropdowns and broke inside its words on a laptop, a flag broke at its hyphens, Stats counted two things under
one word, and two views showed a heading or a help text over nothing. Each at 1280 and 390 px, real store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.web.server import UiServer

from .test_web import (  # noqa: F401 - the fixtures, used by name
    SIZES,
    browser,
    chromium,
    needs_browser,
    no_sideways_scroll,
    page_errors,
    serving,
    wait_for,
)

LONG_SCOPE = "project:main@commit-33a279c69222/workspace:feature-login"
COMPOSE = (
    "Run the integration suite with docker compose -f deploy/compose/integration-tests.yml up "
    "--abort-on-container-exit --exit-code-from integration-tests-runner, or a failed test leaves postgres running"
)
FLAGS = ("--abort-on-container-exit", "--exit-code-from", "integration-tests-runner")
CONTRADICTION = ("The payments API request timeout is 30 s", "Set the payments API request timeout to 60 s")
# A word broken across two lines has two client rectangles: the words of each scope shown (between its
# separators) and the flags of the bullet text, wherever the page shows them.
SPLIT_WORDS = """const [selector, words] = arguments, found = [];
for (const node of document.querySelectorAll(selector)) {
  if (!node.getClientRects().length) continue;  // not shown in this view
  const walk = document.createTreeWalker(node, NodeFilter.SHOW_TEXT), range = document.createRange();
  for (let text = walk.nextNode(); text; text = walk.nextNode())
    for (const m of text.textContent.matchAll(words ? new RegExp(words, 'g') : /[^:\\/@\\s]+/g)) {
      range.setStart(text, m.index); range.setEnd(text, m.index + m[0].length);
      if (range.getClientRects().length > 1) found.push(m[0]);
    }
}
return found;"""
SCOPES = (
    "#scope-now .scope, #bullets .scope, #search-info .scope, #results .scope, #conflicts-info .scope, "
    "#conflicts .scope, #by-scope .scope, #d-prov .scope, #review .scope"
)
FLAG_WORDS = "|".join(FLAGS)
SHOTS = Path(os.environ.get("MEMX_UI_SHOTS", "")) if os.environ.get("MEMX_UI_SHOTS") else None


def shot(driver: Any, name: str) -> None:
    """A screenshot for a person to look at (MEMX_UI_SHOTS=folder); the test asserts without it."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        width = driver.execute_script("return window.innerWidth")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": min(height, 4000), "deviceScaleFactor": 1, "mobile": width < 600},
        )
        driver.save_screenshot(str(SHOTS / f"{name}-{width}.png"))
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 844 if width < 600 else 800, "deviceScaleFactor": 1, "mobile": width < 600},
        )


@pytest.fixture
def long_memory(settings: Settings, store: Any, embedder: Any, clock: Any, tmp_path: Path) -> Memory:
    """A Memory whose detected scope is as long as a new user's (a repository without a remote, a branch)."""
    from memx_mcp.ports import ReadyEmbedder

    return Memory(replace(settings, scope=LONG_SCOPE), store, ReadyEmbedder(embedder), clock=clock, cwd=tmp_path)


@pytest.fixture
def long_ui(long_memory: Memory) -> Iterator[UiServer]:
    with serving(long_memory) as server:
        yield server


def select_fits(driver: Any, select_id: str) -> None:
    right = driver.execute_script(f"return document.getElementById('{select_id}').getBoundingClientRect().right")
    assert right <= driver.execute_script("return window.innerWidth"), f"the Scope select ends at {right} px"


def fits(driver: Any, view: str) -> None:
    width, inner = no_sideways_scroll(driver)
    assert width <= inner, f"{view} view is {width} px wide in {inner}"


def whole(driver: Any, view: str) -> None:
    shown = "return [...document.querySelectorAll(arguments[0])].filter((n) => n.getClientRects().length).length"
    assert driver.execute_script(shown, SCOPES) > 0, f"{view}: no scope shown to check"
    assert driver.execute_script(SPLIT_WORDS, SCOPES, None) == [], f"{view}: a scope broke inside a word"
    assert driver.execute_script(SPLIT_WORDS, ".clamp .content", FLAG_WORDS) == [], f"{view}: a flag broke"
    model = "sentence-transformers/all-MiniLM-L6-v2"  # the Stats line names the model whole
    assert driver.execute_script(SPLIT_WORDS, "#stats > p", model) == [], f"{view}: the model's name broke"


@needs_browser
@pytest.mark.parametrize("browser", SIZES, indirect=True, ids=["1280x800", "390x844"])
def test_a_long_scope_fits_every_view_and_breaks_only_at_its_separators(
    long_ui: UiServer,
    long_memory: Memory,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    memory = long_memory
    assert str(memory.current_scope()) == LONG_SCOPE
    compose = memory.remember(COMPOSE, scope=LONG_SCOPE).bullet
    for text in CONTRADICTION:
        memory.remember(text, scope=LONG_SCOPE)
    memory.remember("Deploys of the login feature go out on Tuesdays", scope=LONG_SCOPE)
    old = memory.remember("The staging database is reset every night at 02:00", scope=LONG_SCOPE).bullet
    memory.forget([old.id])  # archived: counted by scope, section and type, not in the histogram
    stats = memory.stats()
    assert (stats.total, stats.active, stats.archived) == (5, 4, 1)
    assert stats.by_scope == {LONG_SCOPE: 5} and len(memory.list_conflicts()) == 1

    browser.get(long_ui.url)
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]")) == 4)
    assert LONG_SCOPE in browser.find_element(By.ID, "scope-now").text
    cells = browser.find_elements(By.CSS_SELECTOR, "#bullets td[data-label='scope']")
    assert {c.text.replace("\n", "") for c in cells} == {LONG_SCOPE}  # the text is the scope, whatever its lines
    shot(browser, "bullets")
    fits(browser, "bullets")
    whole(browser, "bullets")

    browser.find_element(By.CSS_SELECTOR, f"#bullets tr[data-id='{compose.id}']").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "d-id").text == compose.id)
    fits(browser, "detail")
    whole(browser, "detail")
    browser.find_element(By.ID, "d-close").click()

    browser.find_element(By.ID, "tab-search").click()
    browser.find_element(By.ID, "q").send_keys("docker compose integration tests", Keys.ENTER)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#results tr[data-id='{compose.id}']"))
    select_fits(browser, "s-scope")
    shot(browser, "search")
    fits(browser, "search")
    whole(browser, "search")

    browser.find_element(By.ID, "tab-conflicts").click()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")) == 1)
    select_fits(browser, "c-scope")
    shot(browser, "conflicts")
    fits(browser, "conflicts")
    whole(browser, "conflicts")

    browser.find_element(By.ID, "tab-stats").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#by-scope li"))
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#stats h3")]
    assert headings == [
        "By scope (all 5: active and archived)",
        "By section (all 5: active and archived)",
        "By type (all 5: active and archived)",
        "Context injections",
    ]
    assert browser.find_element(By.CSS_SELECTOR, "#by-scope li").text.replace("\n", "") == f"{LONG_SCOPE}: 5"
    summary = browser.find_element(By.CSS_SELECTOR, "#stats > p").text
    assert (
        summary.startswith("5 bullets (4 active, 1 archived)") and "sentence-transformers/all-MiniLM-L6-v2" in summary
    )
    assert browser.find_element(By.ID, "histogram-title").text == "Decay histogram of the 4 active bullets"
    bands = browser.find_elements(By.CSS_SELECTOR, "#histogram .band .count")
    assert sum(int(b.text) for b in bands) == 4
    # no hook ran in this store: one line says so instead of an empty section
    assert (
        browser.find_element(By.ID, "injections").text == "Context injections\nNone yet: no hook has injected context."
    )
    assert not browser.find_elements(By.CSS_SELECTOR, "#injections ul")
    shot(browser, "stats")
    fits(browser, "stats")
    whole(browser, "stats")

    browser.find_element(By.ID, "tab-review").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "review-info").text == "Nothing waits for review.")
    assert not browser.find_element(By.ID, "review-help").is_displayed()  # no help over nothing
    assert browser.find_element(By.ID, "view-review").text == "Nothing waits for review."
    fits(browser, "review")
    shot(browser, "review")
    assert page_errors(browser) == []
