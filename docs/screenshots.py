"""Screenshots of `memx ui` for the README: a demo store (English, Chinese and Japanese bullets, one
contradiction), the page in headless Chromium, one PNG per view in docs/img/.

    python docs/screenshots.py        # needs chromium and chromedriver (Debian: apt install chromium-driver)
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.web.server import UiServer

OUT = Path(__file__).parent / "img"
FACTS = [
    "Use pytest -n auto (pytest-xdist) to run the suite in parallel",
    "When alembic upgrade fails with 'Can't locate revision', run alembic stamp head first",
    "npm ci fails on node 18 with ERR_OSSL_EVP_UNSUPPORTED: export NODE_OPTIONS=--openssl-legacy-provider",
    "Prefer ruff format over black in this repository",
    "测试太慢时，用 pytest -n auto 并行运行整个测试套件",
    "デプロイ前に docker compose build --no-cache を実行しないと古いイメージが使われる",
    "A Redis pool of 10 connections is enough",
    "Redis is only stable with a pool of 50 connections or more",
]


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="memx-shots-"))
    memory = open_memory(Settings(home=home, scope="project:shop"), cwd=home)
    for fact in FACTS:
        memory.remember(fact)
    for _ in range(4):
        memory.recall("tests are slow")
    server = UiServer(memory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = Options()
    options.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--window-size=1400,800", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)
    driver.implicitly_wait(10)
    OUT.mkdir(exist_ok=True)
    try:
        driver.get(server.url)
        driver.find_elements(By.CSS_SELECTOR, "#bullets tbody tr")[0].click()
        time.sleep(1)
        driver.save_screenshot(str(OUT / "ui-bullets.png"))
        driver.find_element(By.ID, "tab-search").click()
        driver.find_element(By.ID, "q").send_keys("make the tests run faster", Keys.ENTER)
        driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")
        time.sleep(1)
        driver.save_screenshot(str(OUT / "ui-search.png"))
        driver.find_element(By.ID, "tab-conflicts").click()
        driver.find_elements(By.CSS_SELECTOR, "#conflicts .conflict")
        time.sleep(1)
        driver.save_screenshot(str(OUT / "ui-conflicts.png"))
        driver.find_element(By.ID, "tab-stats").click()
        time.sleep(1)
        driver.save_screenshot(str(OUT / "ui-stats.png"))
    finally:
        driver.quit()
        server.shutdown()
        shutil.rmtree(home, ignore_errors=True)
    print("\n".join(str(p) for p in sorted(OUT.glob("ui-*.png"))))


if __name__ == "__main__":
    main()
