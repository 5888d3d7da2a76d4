"""Screenshots of `memx ui` for the README: a demo store (English, Chinese and Japanese bullets, one
contradiction), the page in headless Chromium, one PNG per view and the detail dialog at 1280x800 and
390x844 (suffix -phone) in docs/img/.

    python docs/screenshots.py        # needs chromium and chromedriver (Debian: apt install chromium-driver)
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from memx_mcp.compose import open_memory
from memx_mcp.config import Settings
from memx_mcp.memory import Memory
from memx_mcp.models import Bullet, KnowledgeType, Section, new_id
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


LONG_PATH = "/srv/ci/src/github.com/acme/platform/services/billing/internal/adapters/postgres/migrations/v2"
SIZES = {"wide": (1280, 800), "phone": (390, 844)}


def fill(memory: Memory) -> None:
    """The facts above, one long unbroken path, and 600 older imported lessons (so paging, the histogram
    and the gc preview have something to show)."""
    for fact in FACTS:
        memory.remember(fact, origin="demo session", source="reflector:demo")
    memory.remember(f"When the migration fails, delete {LONG_PATH}/0042_add_invoice_index.sql.lock first")
    for _ in range(4):
        memory.recall("tests are slow")
    now = memory.clock()
    memory.store.add(
        [
            Bullet(
                id=new_id(),
                content=f"Imported lesson {i}: cmake -S . -B build-{i} before ninja -C build-{i}",
                section=Section.COMMANDS,
                knowledge_type=KnowledgeType.METHOD,
                instructivity_score=50 + i % 40,
                confidence=1.0,
                source="import",
                scope="project:shop" if i % 3 else "global",
                created_at=now - timedelta(days=1 + i % 300),
                updated_at=now,
                recall_count=i % 4,
                origin="import",
            )
            for i in range(600)
        ]
    )


def shoot(driver: webdriver.Chrome, url: str, suffix: str) -> None:
    wait = WebDriverWait(driver, 15)
    driver.get(url)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]"))
    driver.save_screenshot(str(OUT / f"ui-bullets{suffix}.png"))
    driver.find_elements(By.CSS_SELECTOR, "#bullets tbody tr[data-id]")[0].click()
    wait.until(lambda d: d.find_element(By.ID, "d-prov").text)
    time.sleep(0.3)  # the dialog's first paint; nothing to wait on
    driver.save_screenshot(str(OUT / f"ui-detail{suffix}.png"))
    driver.find_element(By.ID, "d-close").click()
    driver.find_element(By.ID, "tab-search").click()
    driver.find_element(By.ID, "q").send_keys("build with cmake before ninja", Keys.ENTER)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))
    driver.save_screenshot(str(OUT / f"ui-search{suffix}.png"))
    driver.find_element(By.ID, "tab-conflicts").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#conflicts .conflict"))
    driver.save_screenshot(str(OUT / f"ui-conflicts{suffix}.png"))
    driver.find_element(By.ID, "tab-stats").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#histogram .band"))
    driver.save_screenshot(str(OUT / f"ui-stats{suffix}.png"))


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="memx-shots-"))
    memory = open_memory(Settings(home=home, scope="project:shop"), cwd=home)
    fill(memory)
    server = UiServer(memory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    OUT.mkdir(exist_ok=True)
    try:
        for name, (width, height) in SIZES.items():
            options = Options()
            options.binary_location = shutil.which("chromium") or "chromium"
            for arg in ("--headless=new", "--no-sandbox", "--hide-scrollbars"):
                options.add_argument(arg)
            driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)
            driver.implicitly_wait(10)
            driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            try:
                shoot(driver, server.url, "" if name == "wide" else "-phone")
            finally:
                driver.quit()
    finally:
        server.shutdown()
        shutil.rmtree(home, ignore_errors=True)
    print("\n".join(str(p) for p in sorted(OUT.glob("ui-*.png"))))


if __name__ == "__main__":
    main()
