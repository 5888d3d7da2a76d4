"""`memx ui`: the token, loopback only, and the page itself in headless Chromium against a real store."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memx_mcp.memory import Memory
from memx_mcp.web.api import dispatch
from memx_mcp.web.server import UiServer

from .helpers import env_for, script

PYTEST = "Use pytest -n auto (pytest-xdist) to run the suite in parallel"


@pytest.fixture
def ui(memory: Memory) -> Iterator[UiServer]:
    server = UiServer(memory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


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


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.implicitly_wait(10)
    yield driver
    driver.quit()


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
    assert cells[1] == expected.bullet.content
    assert float(cells[2]) == pytest.approx(expected.score.l1, abs=0.051)  # shown to one decimal
    assert float(cells[10]) == pytest.approx(expected.score.final, abs=0.0051)
    assert cells[9] == "1.30"  # the current scope's boost


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
    texts = {r.get_attribute("data-id"): r.find_elements(By.TAG_NAME, "td")[0].text for r in rows}
    assert texts == {zh.id: zh.content, ja.id: ja.content}
    row = browser.find_element(By.CSS_SELECTOR, f"#bullets tr[data-id='{ja.id}']")
    row.send_keys(Keys.ENTER)  # rows are focusable; Enter opens one
    wait_for(browser, lambda d: d.find_element(By.ID, "d-content").get_attribute("value") == ja.content)
    browser.find_element(By.TAG_NAME, "body").send_keys("/")
    browser.switch_to.active_element.send_keys("测试 并行", Keys.ENTER)
    first = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))[0]
    assert first.get_attribute("data-id") == zh.id


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
