"""`memx ui`: the token, loopback only, and the page itself in headless Chromium against a real store."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.web.api import dispatch
from memx_mcp.web.server import UiServer

from ..helpers import env_for, script

PYTEST = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"


@contextmanager
def serving(memory: Memory) -> Iterator[UiServer]:
    """The page's server over ``memory`` on a thread, shut down after."""
    server = UiServer(memory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def ui(memory: Memory) -> Iterator[UiServer]:
    with serving(memory) as server:
        yield server


def fetch(url: str, headers: dict[str, str] | None = None, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            raw = res.read()
            return res.status, json.loads(raw) if res.headers.get_content_type() == "application/json" else raw
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_requests_without_the_token_are_refused(ui: UiServer, memory: Memory) -> None:
    b = memory.remember(PYTEST).bullet
    base = f"http://127.0.0.1:{ui.server_address[1]}"
    assert fetch(base + "/")[0] == 403
    assert fetch(base + "/?token=wrong")[0] == 403
    assert fetch(base + "/api/stats")[0] == 403
    status, page = fetch(ui.url)
    assert status == 200 and b"<title>memx</title>" in page and b"/*JS*/" not in page
    token = {"X-Memx-Token": ui.token}
    assert fetch(base + "/api/stats", token)[1]["active"] == 1
    assert fetch(base + f"/api/bullets/{b.id}/archive?token={ui.token}", body={})[0] == 403  # writes: header only
    assert fetch(base + "/api/stats", {**token, "Host": "evil.example:80"})[0] == 403  # DNS rebinding
    assert fetch(base + "/api/bullets/b_nope", token) == (404, {"error": "no bullet 'b_nope'"})
    assert fetch(base + f"/api/bullets/{b.id}", token, {"tags": "x"})[0] == 400
    assert memory.store.get([b.id])[0].status.value == "active"


def test_memx_ui_prints_its_url_and_serves_the_store(tmp_path: Path) -> None:
    import subprocess

    home = tmp_path / "home"
    proc = subprocess.Popen(
        [*script("memx"), "--home", str(home), "ui", "--no-open", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        status, page = fetch(url)
        assert status == 200 and b"memx" in page
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_server_listens_on_loopback_only(ui: UiServer) -> None:
    assert ui.server_address[0] == "127.0.0.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this finds the machine's outward address
        outward = probe.getsockname()[0]
    if outward.startswith("127."):
        pytest.skip("this machine has no non-loopback address")
    with pytest.raises(OSError):
        socket.create_connection((outward, ui.server_address[1]), timeout=2).close()


def test_the_api_edits_archives_restores_and_draws_the_decay_curve(memory: Memory) -> None:
    b = memory.remember(PYTEST).bullet
    status, data = dispatch(memory, "POST", f"/api/bullets/{b.id}", {}, {"content": "Run pytest -n 8", "tags": ["ci"]})
    assert status == 200 and data["bullet"]["content"] == "Run pytest -n 8" and data["bullet"]["tags"] == ["ci"]
    assert data["points"][0]["weight"] == 1.0 and data["points"][-1]["day"] == 90 and data["today"] == 1.0
    assert dispatch(memory, "POST", f"/api/bullets/{b.id}/archive", {}, {})[1]["archived"] == [b.id]
    assert dispatch(memory, "GET", "/api/bullets", {"status": "archived"}, {})[1]["bullets"][0]["id"] == b.id
    assert dispatch(memory, "POST", f"/api/bullets/{b.id}/restore", {}, {})[1]["bullet"]["status"] == "active"
    assert dispatch(memory, "GET", "/api/nothing", {}, {})[0] == 404


# -- the page in headless Chromium ----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
needs_browser = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver")


@pytest.fixture(scope="module")
def chromium() -> Iterator[dict[tuple[int, int], Any]]:
    """One headless Chromium per window size for the module (each start costs seconds), quit at its end."""
    drivers: dict[tuple[int, int], Any] = {}
    yield drivers
    for driver in drivers.values():
        driver.quit()


def _start(width: int, height: int) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_window_size(width, height)
    # The window size includes the browser's frame: set the page's viewport itself.
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    driver.implicitly_wait(10)
    return driver


@pytest.fixture
def browser(request: pytest.FixtureRequest, chromium: dict[tuple[int, int], Any]) -> Iterator[Any]:
    """The module's Chromium of this window size, on a blank page with an empty console log: nothing of
    the test before it (whose server is gone) is left to see. The page keeps no storage of its own."""
    width, height = getattr(request, "param", (1400, 900))
    if (width, height) not in chromium:
        chromium[width, height] = _start(width, height)
    driver = chromium[width, height]
    driver.get("about:blank")
    driver.get_log("browser")  # read, so emptied
    yield driver
    driver.get("about:blank")


def click_fresh(driver: Any, selector: str) -> bool:
    """Click what ``selector`` finds now; False when the page replaced it meanwhile (a list reloading)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        driver.find_element(By.CSS_SELECTOR, selector).click()
    except StaleElementReferenceException:
        return False
    return True


def wait_for(driver: Any, condition: Any, timeout: float = 15) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


@needs_browser
def test_search_in_the_page_shows_the_score_breakdown(ui: UiServer, memory: Memory, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    memory.remember(PYTEST)
    memory.remember("Set MAX_POOL_SIZE=50 in .env because Redis drops connections at 10")
    browser.get(ui.url)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr"))
    browser.find_element(By.TAG_NAME, "body").send_keys("/")  # the keyboard shortcut to search
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    browser.switch_to.active_element.send_keys("make the tests run faster", Keys.ENTER)
    rows = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))
    heads = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#results thead th")]
    assert heads == ["#", "Content", "L1", "L2", "L3", "Semantic", "Blended", "Decay", "Recency", "Scope", "Final"]
    cells = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
    expected = memory.recall("make the tests run faster", reinforce=False).hits[0]
    assert rows[0].find_element(By.CSS_SELECTOR, ".content").text == expected.bullet.content
    assert float(cells[2]) == pytest.approx(expected.score.l1, abs=0.051)  # shown to one decimal
    assert float(cells[10]) == pytest.approx(expected.score.final, abs=0.00051)
    assert cells[9] == "1.3"  # the current scope's boost
    blended, decay, recency, scope = (float(c) for c in cells[6:10])  # decay: its effect, not the weight
    assert blended * decay * recency * scope == pytest.approx(float(cells[10]), abs=2e-4)  # they multiply


@needs_browser
def test_a_conflict_resolved_in_the_page_is_resolved_in_the_store(ui: UiServer, memory: Memory, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    a = memory.remember("A Redis pool of 10 connections is enough").bullet
    b = memory.remember("Redis is only stable with a pool of 50 connections or more").bullet
    browser.get(ui.url)
    browser.find_element(By.ID, "tab-conflicts").click()
    card = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict"))[0]
    assert "contradiction" in card.text and "10 vs 50" in card.text
    card.find_element(By.CSS_SELECTOR, "button[data-keep='b']").click()
    wait_for(browser, lambda d: "No open conflicts." in d.find_element(By.ID, "conflicts").text)
    got = {x.id: x.status.value for x in memory.store.get([a.id, b.id])}
    assert got == {a.id: "archived", b.id: "active"} and memory.list_conflicts() == []


@needs_browser
def test_an_edit_in_the_page_is_what_the_mcp_client_recalls(
    ui: UiServer, memory: Memory, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    b = memory.remember(PYTEST).bullet
    browser.get(ui.url)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#bullets tr[data-id='{b.id}']"))[0].click()
    wait_for(browser, lambda d: d.find_element(By.ID, "d-content").get_attribute("value") == PYTEST)
    box = browser.find_element(By.ID, "d-content")
    box.clear()
    box.send_keys("Run the test suite with uv run pytest -n 8 --dist loadfile to keep it under a minute")
    browser.find_element(By.ID, "d-save").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "status").text.startswith("Saved"))
    svg = browser.find_element(By.ID, "d-curve")
    assert svg.find_elements(By.TAG_NAME, "polyline")  # the decay curve is drawn

    async def recall() -> Any:
        cmd = script("memx-mcp")
        env = env_for(memory.settings.home, MEMX_SCOPE="project:demo")
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("recall", {"query": "keep the test suite under a minute"})

    found = anyio.run(recall)
    top = found.structured_content["results"][0]
    assert top["id"] == b.id and top["content"].startswith("Run the test suite with uv run pytest -n 8")


@needs_browser
def test_chinese_and_japanese_bullets_show_and_open_from_the_keyboard(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    zh = memory.remember("测试太慢时，用 pytest -n auto 并行运行整个测试套件").bullet
    ja = memory.remember("デプロイ前に docker compose build --no-cache を実行しないと古いイメージが使われる").bullet
    browser.get(ui.url)
    rows = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr"))
    texts = {r.get_attribute("data-id"): r.find_element(By.CSS_SELECTOR, ".content").text for r in rows}
    assert texts == {zh.id: zh.content, ja.id: ja.content}
    row = browser.find_element(By.CSS_SELECTOR, f"#bullets tr[data-id='{ja.id}']")
    row.send_keys(Keys.ENTER)  # rows are focusable; Enter opens one
    wait_for(browser, lambda d: d.find_element(By.ID, "d-content").get_attribute("value") == ja.content)
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)  # the detail is modal: close it first
    wait_for(browser, lambda d: d.switch_to.active_element.get_attribute("data-id") == ja.id)
    browser.find_element(By.TAG_NAME, "body").send_keys("/")
    browser.switch_to.active_element.send_keys("测试 并行", Keys.ENTER)
    first = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))[0]
    assert first.get_attribute("data-id") == zh.id


# -- a real-sized store: thousands of bullets, long unbroken paths, CJK, any width (issue 20) ----------

LONG_PATH = "/home/dev/src/github.com/acme/platform/services/billing/internal/adapters/postgres/migrations/v2"
LONG_FACTS = [
    f"When the migration fails, delete {LONG_PATH}/0042_add_invoice_index.sql.lock and rerun make migrate",
    "Run PYTHONPATH=src:tests:benchmarks:tools/vendor/lib/python3.12/site-packages python -m pytest"
    "--maxfail=1--disable-warnings--tb=short-ptests.plugins.timeout_guard_plugin_with_a_very_long_name",
    "测试太慢时，用 pytest -n auto 并行运行整个测试套件，不要在持续集成服务器上串行执行所有的集成测试和端到端测试用例"
    * 2,
    "デプロイ前に docker compose build --no-cache を実行しないと古いイメージが使われる",
]
SIZES = [(1280, 800), (390, 844)]


def fill_big_store(memory: Memory, n: int = 2_200) -> None:
    """Reflected-looking bullets through the real write path, then ``n`` more straight into the store
    (as ``memx import`` of an export would): ages over a year, recall counts 0-6, two scopes."""
    from datetime import timedelta

    from memx_mcp.domain.models import Bullet, KnowledgeType, Section, new_id

    for fact in LONG_FACTS:
        memory.remember(fact, origin=f"session {LONG_PATH}/transcript.jsonl", source="reflector:rule-pitfall")
    memory.remember("A Redis pool of 10 connections is enough")
    memory.remember("Redis is only stable with a pool of 50 connections or more")
    now = memory.now()
    sections, types = list(Section), list(KnowledgeType)
    # every bullet of a real store has its embedding; unit vectors stand in for them (this is about paging)
    import numpy as np

    rng = np.random.default_rng(20)
    vectors = rng.normal(size=(n, memory.settings.model_dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    bulk = [
        Bullet(
            id=new_id(),
            content=f"Imported lesson {i}: build with cmake -S . -B {LONG_PATH}/build-{i} before ninja -C build",
            section=sections[i % len(sections)],
            knowledge_type=types[i % len(types)],
            instructivity_score=40 + i % 60,
            confidence=1.0,
            source="import",
            scope="project:demo" if i % 3 else "global",
            created_at=now - timedelta(days=i % 400, hours=i % 24),
            updated_at=now,
            recall_count=i % 7,
            origin="import",
            vector=tuple(float(x) for x in vectors[i]),
        )
        for i in range(n)
    ]
    memory.store.add(bulk)


def page_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def no_sideways_scroll(driver: Any) -> tuple[int, int]:
    return driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")


@needs_browser
@pytest.mark.parametrize("browser", SIZES, indirect=True, ids=["1280x800", "390x844"])
def test_every_view_fits_the_width_over_thousands_of_long_and_cjk_bullets(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    fill_big_store(memory)
    browser.get(ui.url)
    wait_for(browser, lambda d: "of 2,2" in d.find_element(By.ID, "range").text)
    assert browser.find_element(By.ID, "range").text == "1–200 of 2,206"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bullets tbody tr")) == 200
    assert "project:demo" in browser.find_element(By.ID, "scope-now").text
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"bullets view is {width} px wide in {inner}"

    # A clamped long bullet expands in place; the row still opens the detail.
    # (only where a bullet is cut: on a phone some are; test_more_follows_… checks the button is where the cut is)
    expands = browser.find_elements(By.CSS_SELECTOR, "#bullets .expand:not([hidden])")
    assert expands or browser.execute_script("return window.innerWidth") > 500
    for expand in expands[:1]:
        expand.click()
        assert expand.get_attribute("aria-expanded") == "true"

    browser.find_element(By.ID, "tab-search").click()
    browser.find_element(By.ID, "q").send_keys("migration fails lock file", Keys.ENTER)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"search view is {width} px wide in {inner}"

    browser.find_element(By.ID, "tab-conflicts").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict"))
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"conflicts view is {width} px wide in {inner}"

    browser.find_element(By.ID, "tab-stats").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#histogram .band"))
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"stats view is {width} px wide in {inner}"

    # The detail of the longest bullet: a modal dialog inside the viewport.
    browser.find_element(By.ID, "tab-bullets").click()
    browser.find_element(By.ID, "f-text").send_keys("0042_add_invoice")

    def filtered(d: Any) -> list[Any]:  # the rows of the filtered list, not those it replaces
        rows = d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]")
        try:
            return rows if rows and all("0042_add_invoice" in r.get_attribute("textContent") for r in rows) else []
        except StaleElementReferenceException:
            return []

    row = wait_for(browser, filtered)[0]
    row.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "detail").get_attribute("open") is not None)
    assert browser.execute_script("return document.getElementById('detail').matches(':modal')")
    box = browser.execute_script(
        "const r = document.getElementById('detail').getBoundingClientRect(); return [r.left, r.right]"
    )
    assert box[0] >= 0 and box[1] <= inner
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"the open detail makes the page {width} px wide in {inner}"
    assert page_errors(browser) == []


@needs_browser
def test_the_detail_is_a_dialog_driven_by_the_keyboard(ui: UiServer, memory: Memory, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    fill_big_store(memory, n=50)
    memory.recall("migration fails lock file")  # a recall to show in the provenance
    browser.get(ui.url)
    target = memory.store.find_content(memory.deps.sanitizer.mask(LONG_FACTS[0]), "project:demo")
    assert target is not None
    row = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#bullets tr[data-id='{target.id}']"))[0]
    row.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "d-id").text == target.id)
    dialog = browser.find_element(By.ID, "detail")
    assert browser.switch_to.active_element.get_attribute("id") == "d-close"  # focus moved in
    prov = browser.find_element(By.ID, "d-prov").text
    assert target.origin.startswith("session ") and target.origin in prov and "reflector:rule-pitfall" in prov
    assert "last recalled\n2026-01-01" in prov
    # The list behind the dialog is inert: the element at a row's position is the dialog or its backdrop.
    hit = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); const e = document.elementFromPoint(r.left + 5, r.top + 5);"
        "return e === null || document.getElementById('detail').contains(e) || e.tagName === 'HTML'",
        browser.find_elements(By.CSS_SELECTOR, "#bullets tbody tr")[-1],
    )
    assert hit
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_for(browser, lambda d: dialog.get_attribute("open") is None)
    assert browser.switch_to.active_element.get_attribute("data-id") == target.id  # focus came back
    # Archive by keyboard: the archived bullet draws no decay curve.
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "d-id").text == target.id)
    browser.find_element(By.ID, "d-archive").send_keys(Keys.ENTER)
    wait_for(browser, lambda d: d.find_element(By.ID, "status").text == f"Archived: {target.id}")
    assert memory.store.get([target.id])[0].status.value == "archived"
    assert browser.find_elements(By.CSS_SELECTOR, "#d-curve polyline") == []
    assert "Archived" in browser.find_element(By.ID, "d-curve-note").text
    assert page_errors(browser) == []


@needs_browser
def test_the_first_page_of_two_thousand_bullets_renders_only_its_own_rows_then_pages_sorts_and_narrows(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    fill_big_store(memory)
    browser.get(ui.url)
    wait_for(browser, lambda d: "of 2,206" in d.find_element(By.ID, "range").text)
    # What keeps the first page fast at any store size: one page of rows is asked for and drawn, never the
    # whole store. Its time (issue 20's 300 ms) is a benchmark, not a timed test: `python benchmarks/page_load.py`.
    assert browser.find_element(By.ID, "range").text == "1–200 of 2,206"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bullets tbody tr")) == 200
    assert browser.execute_script("return performance.getEntriesByName('bullets-first-page').length") == 1
    # Paging, sorting and a histogram band narrow the same list.
    browser.find_element(By.ID, "next").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "range").text == "201–400 of 2,206")
    browser.find_element(By.CSS_SELECTOR, "#f-sort option[value='recalled']").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "range").text.startswith("1–200"))
    first = browser.find_elements(By.CSS_SELECTOR, "#bullets tbody tr td[data-label='recalls']")[0]
    assert first.text == "6"
    browser.find_element(By.ID, "tab-stats").click()
    gc = wait_for(browser, lambda d: d.find_element(By.ID, "gc-preview").text)
    would = maintenance_dry_run(memory)
    assert f"These {would:,} would be archived" in gc
    band = browser.find_element(By.CSS_SELECTOR, "#histogram .band[data-band='permanent']")
    count = int(band.find_element(By.CSS_SELECTOR, ".count").text.replace(",", ""))
    browser.find_element(By.ID, "gc-show").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "range").text == f"1–200 of {would:,}")
    browser.find_element(By.ID, "tab-stats").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#histogram .band"))
    browser.find_element(By.CSS_SELECTOR, "#histogram .band[data-band='permanent']").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "range").text.endswith(f"of {count:,}"))
    assert page_errors(browser) == []


def maintenance_dry_run(memory: Memory) -> int:

    return len(memory.gc(dry_run=True).archived)


@pytest.fixture
def global_memory(settings: Settings, store: Any, embedder: Any, clock: Any, tmp_path: Path) -> Memory:
    """A Memory started in a folder outside any repository, with no scope configured: it sees global."""
    from dataclasses import replace

    from memx_mcp.ports import ReadyEmbedder

    outside = tmp_path / "outside"
    outside.mkdir()
    return Memory(replace(settings, scope=""), store, ReadyEmbedder(embedder), clock=clock, cwd=outside)


@needs_browser
def test_search_outside_a_repository_finds_project_bullets_in_their_scope_and_badges_count_cards(
    memory: Memory, global_memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    tip = memory.remember(PYTEST).bullet  # project:demo
    memory.remember("A Redis pool of 10 connections is enough")
    memory.remember("Redis is only stable with a pool of 50 connections or more")
    global_memory.remember("Tabs are always better than spaces in Makefiles")
    global_memory.remember("Never use tabs in Makefiles, spaces are always better")
    server = UiServer(global_memory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.get(server.url)
        assert wait_for(browser, lambda d: "Detected scope: global" in d.find_element(By.ID, "scope-now").text)
        browser.find_element(By.ID, "tab-search").click()
        browser.find_element(By.ID, "q").send_keys("make the tests run faster", Keys.ENTER)
        wait_for(browser, lambda d: "hit(s) in global" in d.find_element(By.ID, "search-info").text)
        assert not browser.find_elements(By.CSS_SELECTOR, f"#results tr[data-id='{tip.id}']")
        Select(browser.find_element(By.ID, "s-scope")).select_by_value("project:demo")
        row = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#results tr[data-id='{tip.id}']"))[0]
        assert f"{tip.id} · project:demo · returned by recall" in row.text
        row.click()  # a hit opens the bullet
        wait_for(browser, lambda d: d.find_element(By.ID, "d-id").text == tip.id)
        browser.find_element(By.ID, "d-close").click()

        browser.find_element(By.ID, "tab-conflicts").click()
        for scope, expected in (("*", 2), ("", 1), ("project:demo", 2)):
            Select(browser.find_element(By.ID, "c-scope")).select_by_value(scope)
            wait_for(browser, lambda d, n=expected: len(d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")) == n)
            badge = browser.find_element(By.ID, "conflict-count").text
            assert badge == f"({expected})", f"scope {scope!r}: badge {badge} for {expected} cards"
        assert page_errors(browser) == []
    finally:
        server.shutdown()
        server.server_close()


@needs_browser
def test_an_action_on_a_bullet_erased_by_another_process_shows_an_error(
    memory: Memory, browser: Any, tmp_path: Path
) -> None:
    import subprocess

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    b = memory.remember(PYTEST).bullet
    home = memory.settings.home
    proc = subprocess.Popen(
        [*script("memx"), "--home", str(home), "ui", "--no-open", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=env_for(home),
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        browser.get(json.loads(proc.stdout.readline())["url"])
        wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"#bullets tr[data-id='{b.id}']"))[0].click()
        wait_for(browser, lambda d: d.find_element(By.ID, "d-id").text == b.id)
        done = subprocess.run(
            [*script("memx"), "--home", str(home), "forget", "--purge", b.id], env=env_for(home), capture_output=True
        )
        assert done.returncode == 0, done.stderr
        browser.find_element(By.ID, "d-archive").click()
        error = wait_for(browser, lambda d: d.find_element(By.ID, "d-error").text)
        assert error.startswith("Error: no bullet") and b.id in error
        browser.find_element(By.ID, "d-close").click()
        assert browser.find_element(By.ID, "bullets-error").text == ""
    finally:
        proc.terminate()
        proc.wait(30)
    # The server is gone: the next load says so in its own view, not in a console.
    Select(browser.find_element(By.ID, "f-sort")).select_by_value("stalest")
    message = wait_for(browser, lambda d: d.find_element(By.ID, "bullets-error").text)
    assert "does not answer" in message
    browser.find_element(By.ID, "tab-stats").click()
    assert "does not answer" in wait_for(browser, lambda d: d.find_element(By.ID, "stats-error").text)


def test_the_page_api_pages_sorts_filters_and_marks_what_recall_returns(memory: Memory) -> None:
    fill_big_store(memory, n=300)
    status, first = dispatch(memory, "GET", "/api/page", {"scope": "*", "limit": "100"}, {})
    assert status == 200 and first["total"] == 306 and len(first["bullets"]) == 100
    second = dispatch(memory, "GET", "/api/page", {"scope": "*", "limit": "100", "offset": "100"}, {})[1]
    assert not {b["id"] for b in first["bullets"]} & {b["id"] for b in second["bullets"]}
    stalest = dispatch(memory, "GET", "/api/page", {"sort": "stalest"}, {})[1]["bullets"]
    assert [b["decay_weight"] for b in stalest] == sorted(b["decay_weight"] for b in stalest)
    gc = dispatch(memory, "GET", "/api/gc-preview", {}, {})[1]
    band = dispatch(memory, "GET", "/api/page", {"band": "<0.02 (gc)", "limit": "500"}, {})[1]
    assert gc["would_archive"] == band["total"] > 0 and set(gc["ids"]) == {b["id"] for b in band["bullets"]}
    text = dispatch(memory, "GET", "/api/page", {"text": "0042_ADD_INVOICE"}, {})[1]
    assert text["total"] == 1 and "0042_add_invoice" in text["bullets"][0]["content"]
    assert dispatch(memory, "GET", "/api/page", {"sort": "oldest"}, {})[0] == 400
    assert dispatch(memory, "GET", "/api/page", {"offset": "x"}, {})[0] == 400
    assert dispatch(memory, "GET", "/api/page", {"band": "nope"}, {})[0] == 400

    found = dispatch(memory, "GET", "/api/search-marked", {"q": "cmake build before ninja"}, {})[1]
    served = [h.bullet.id for h in memory.recall("cmake build before ninja", reinforce=False).hits]
    assert [h["id"] for h in found["results"] if h["returned"]] == served
    assert len(found["results"]) > len(served) == found["returned"] == memory.settings.max_results
    cards = dispatch(memory, "GET", "/api/conflicts-in", {"scope": "*"}, {})[1]["conflicts"]
    assert len(cards) == 1 and "10 vs 50" in " ".join(cards[0]["evidence"])


def two_conflicts(memory: Memory) -> tuple[Any, Any]:
    """Two open contradictions (a Redis pool size, a gunicorn timeout); the Redis pair's bullets."""
    a = memory.remember("A Redis pool of 10 connections is enough").bullet
    b = memory.remember("Redis is only stable with a pool of 50 connections or more").bullet
    memory.remember("Set the gunicorn timeout to 30 seconds")
    memory.remember("Set the gunicorn timeout to 120 seconds, 30 seconds kills slow uploads")
    return a, b


@needs_browser
def test_selected_conflicts_are_dismissed_in_bulk(ui: UiServer, memory: Memory, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    two_conflicts(memory)
    open_ids = {c.conflict.id for c in memory.list_conflicts()}
    assert len(open_ids) == 2
    browser.get(ui.url)
    wait_for(browser, lambda d: d.find_element(By.ID, "conflict-count").text == "(2)")
    browser.find_element(By.ID, "tab-conflicts").click()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")) == 2)
    browser.find_element(By.ID, "c-select-all").click()
    browser.find_element(By.ID, "c-bulk-dismiss").click()
    wait_for(browser, lambda d: "No open conflicts." in d.find_element(By.ID, "conflicts").text)
    assert browser.find_element(By.ID, "conflict-count").text == ""
    assert memory.list_conflicts() == [] and memory.stats().active == 4  # dismissed: both sides kept


def tab_to(browser: Any, selector: str, most: int = 60) -> None:
    """Press Tab until the element matching ``selector`` has the focus (reachable by keyboard), or fail."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    for _ in range(most):
        if browser.execute_script(f"return document.activeElement.matches({json.dumps(selector)})"):
            return
        ActionChains(browser).send_keys(Keys.TAB).perform()
    raise AssertionError(f"{selector} is not reachable with Tab")


@needs_browser
def test_conflicts_are_resolved_and_dismissed_in_bulk_by_keyboard_alone(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    a, b = two_conflicts(memory)
    browser.get(ui.url)
    wait_for(browser, lambda d: d.find_element(By.ID, "conflict-count").text == "(2)")
    tab_to(browser, "#tab-conflicts")
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")) == 2)
    redis = next(c for c in browser.find_elements(By.CSS_SELECTOR, "#conflicts .conflict") if "Redis" in c.text)
    keep_b = redis.find_element(By.CSS_SELECTOR, "button[data-keep='b']")
    browser.execute_script("arguments[0].setAttribute('data-target', '1')", keep_b)
    tab_to(browser, "#conflicts button[data-target='1']")
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")) == 1)
    assert {x.id: x.status.value for x in memory.store.get([a.id, b.id])} == {a.id: "archived", b.id: "active"}
    tab_to(browser, "#c-select-all")
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    tab_to(browser, "#c-bulk-dismiss")
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(browser, lambda d: "No open conflicts." in d.find_element(By.ID, "conflicts").text)
    assert memory.list_conflicts() == [] and page_errors(browser) == []


def raw_request(port: int, head: str) -> bytes:
    """The server's first answer to ``head`` sent as is on a socket (no body follows)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(head.encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.mark.parametrize("length", ["-1", "abc", "１２", "12, 13", str(10**30)])
def test_a_bad_content_length_is_answered_at_once_and_the_server_keeps_serving(ui: UiServer, length: str) -> None:
    port = ui.server_address[1]
    head = (
        f"POST /api/bullets/b_x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Memx-Token: {ui.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    answer = raw_request(port, head)  # the socket stays open: a server waiting for the body would hang here
    expected = b"413" if length == str(10**30) else b"400"
    assert answer.split(b"\r\n")[0] == b"HTTP/1.1 " + expected + (
        b" Bad Request" if expected == b"400" else b" Request Entity Too Large"
    )
    assert fetch(f"http://127.0.0.1:{port}/api/stats", {"X-Memx-Token": ui.token})[0] == 200


def test_a_one_time_link_opens_the_page_once_and_carries_no_token(ui: UiServer) -> None:
    link = ui.one_time_url()
    assert ui.token not in link
    status, page = fetch(link)  # redirected to the token URL
    assert status == 200 and b"<title>memx</title>" in page
    assert fetch(link) == (403, {"error": "this link was used already or expired: use the URL `memx ui` printed"})
    assert fetch(link.replace("code=", "code=x"))[0] == 403


def test_memx_ui_starts_the_browser_without_the_token_on_its_command_line(tmp_path: Path) -> None:
    import subprocess
    import time

    seen = tmp_path / "browser-argv"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$*" > "{seen}.part" && mv "{seen}.part" "{seen}"\n')
    browser.chmod(0o755)
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [*script("memx"), "--home", str(home), "ui", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env={**env_for(home), "BROWSER": str(browser)},  # webbrowser runs $BROWSER with the URL
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        token = json.loads(proc.stdout.readline())["url"].split("token=")[1]
        deadline = time.monotonic() + 60
        while not seen.exists():  # the browser stand-in writes its command line once it runs
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        opened = seen.read_text()
        assert opened.startswith("http://127.0.0.1:") and token not in opened
        status, page = fetch(opened)
        assert status == 200 and b"<title>memx</title>" in page
        assert fetch(opened)[0] == 403  # good for one visit
    finally:
        proc.terminate()
        proc.wait(30)


@needs_browser
@pytest.mark.parametrize("browser", SIZES, indirect=True, ids=["1280x800", "390x844"])
def test_a_stale_bullet_is_shown_and_confirmed_or_forgotten_with_one_key(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    from memx_mcp.usecases.staleness import mark_stale

    kept = memory.remember("Deploy with `scripts/deploy.sh --prod`; it reads DEPLOY_ENV from the environment").bullet
    gone = memory.remember("Regenerate the client with tools/gen_client.py after editing openapi.yaml").bullet
    memory.remember("Use pnpm in this repository, never npm")
    mark_stale(memory.deps, [kept, gone])  # what injection does when a named file is gone (no tag can)
    browser.get(ui.url)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]"))
    browser.find_element(By.ID, "f-stale").click()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]")) == 2)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bullets .badge-stale")) == 2
    assert no_sideways_scroll(browser)[0] <= no_sideways_scroll(browser)[1]
    for bullet, key, done in ((kept, "c", "Confirmed"), (gone, "f", "Archived")):
        wait_for(browser, lambda d, b=bullet: click_fresh(d, f"#bullets tr[data-id='{b.id}']"))  # list reloads
        wait_for(browser, lambda d, b=bullet: d.find_element(By.ID, "d-id").text == b.id)
        assert browser.find_element(By.ID, "d-stale").is_displayed()
        browser.switch_to.active_element.send_keys(key)
        wait_for(browser, lambda d, b=bullet, t=done: d.find_element(By.ID, "status").text == f"{t}: {b.id}")
        browser.execute_script("document.getElementById('detail').close()")
    (confirmed,) = memory.store.get([kept.id])
    assert "memx:confirmed" in confirmed.tags and "stale" not in confirmed.tags
    assert memory.store.get([gone.id])[0].status.value == "archived"
    assert page_errors(browser) == []


def test_the_stats_count_and_the_conflicts_tab_with_all_scopes_and_both_kinds_agree_and_say_what_they_count(
    memory: Memory,
) -> None:
    from memx_mcp.domain.models import Conflict

    memory.remember("The payments API request timeout is 30 s", scope="project:one")
    memory.remember("Set the payments API request timeout to 60 s", scope="project:one")
    x, y, z = (
        memory.remember(text, scope="project:two").bullet
        for text in ("Run `make lint` before committing", "Deploys go out on Tuesdays", "The CI image is Debian 12")
    )
    memory.store.add_conflicts(
        [Conflict(f"c_{b.id}", x.id, b.id, 0.6, "overlap", (), "project:two", x.created_at) for b in (y, z)]
    )
    memory.forget([z.id])  # a record whose bullet is archived is no open conflict
    stats = dispatch(memory, "GET", "/api/stats", {}, {})[1]
    cards = dispatch(memory, "GET", "/api/conflicts-in", {"scope": "*", "kind": "any"}, {})[1]["conflicts"]
    kinds = [c["kind"] for c in cards]
    assert (
        (stats["open_contradictions"], stats["open_overlaps"])
        == (1, 1)
        == (kinds.count("contradiction"), kinds.count("overlap"))
    )
    assert stats["open_conflicts"] == len(cards) == 2
    page = (Path(__file__).parents[2] / "src/memx_mcp/web/static/app.js").read_text(encoding="utf-8")
    assert "between active bullets, all scopes" in page and "Stats counts all scopes, both kinds" in page


# 154 characters: the bullet a phone cut without a "more" button
CUT_ON_A_PHONE = (
    "When the billing api's integration tests hang on CI, run them with pytest -p no:randomly and "
    "PGHOST=127.0.0.1, because the Unix socket path differs there."
)
CLAMP_STATE = """return [...document.querySelectorAll('#bullets .clamp')].map(box => {
  const content = box.querySelector('.content'), button = box.querySelector('.expand');
  return [content.textContent, content.scrollHeight > content.clientHeight, !!button && !button.hidden];
});"""
# A word broken across two lines has two client rectangles.
BROKEN_WORDS = """return [...document.querySelectorAll('#histogram .band-label')].flatMap(label => {
  const walk = document.createTreeWalker(label, NodeFilter.SHOW_TEXT), range = document.createRange(), words = [];
  for (let text = walk.nextNode(); text; text = walk.nextNode())
    for (const m of text.textContent.matchAll(/\\S+/g)) {
      range.setStart(text, m.index); range.setEnd(text, m.index + m[0].length);
      if (range.getClientRects().length > 1) words.push(m[0]);
    }
  return words;
});"""


@needs_browser
@pytest.mark.parametrize("browser", SIZES, indirect=True, ids=["1280x800", "390x844"])
def test_more_follows_whether_the_text_is_cut_and_histogram_labels_keep_their_words(
    ui: UiServer, memory: Memory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    assert len(CUT_ON_A_PHONE) == 154
    # past the old 160-character rule, yet whole at 1280 px
    longer = ("Docs site previews build from the docs branch only; to see a pull request's pages, push it to "
              "docs-preview/NAME and open the link the bot posts in the pull request thread.")  # fmt: skip
    texts = [CUT_ON_A_PHONE, longer, PYTEST, " ".join(LONG_FACTS), "\n".join(["one", "two", "three", "four", "five"])]
    for text in texts:
        memory.remember(text)
    browser.get(ui.url)
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#bullets .clamp")) == len(texts))
    state = {text: (cut, shown) for text, cut, shown in browser.execute_script(CLAMP_STATE)}
    assert all(cut == shown for cut, shown in state.values()), state  # "more" exactly where the text is cut
    phone = browser.execute_script("return window.innerWidth") < 500
    assert state[CUT_ON_A_PHONE] == state[longer] == (phone, phone)  # cut on a phone, whole at 1280 px
    assert state[PYTEST] == (False, False) and state["\n".join(["one", "two", "three", "four", "five"])] == (True, True)
    browser.find_element(By.ID, "tab-stats").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#histogram .band-label"))
    assert browser.execute_script(BROKEN_WORDS) == []
    width, inner = no_sideways_scroll(browser)
    assert width <= inner, f"stats view is {width} px wide in {inner}"
