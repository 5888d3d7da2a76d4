"""The page's first load over a store of 2,206 bullets (issue 20: the first page in under 300 ms).

The page measures itself (``performance.measure('bullets-first-page')``: from its request for the first page of
bullets to the rows drawn). Beside it, in the same run, the floor: the same headless Chromium loading the same
server's page with an empty store. Needs Chromium and chromedriver (`apt install chromium chromium-driver`).

    python benchmarks/page_load.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

MEASURE = "performance.getEntriesByName('bullets-first-page')"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _memory(home: Path) -> Any:
    from memx_mcp.compose import open_memory
    from memx_mcp.config import load_settings

    return open_memory(load_settings(home=home, scope="project:demo"), cwd=home)


def _loads(memory: Any, driver: Any, runs: int) -> list[float]:
    from selenium.webdriver.common.by import By
    from tests.web.test_web import wait_for

    from memx_mcp.web.server import UiServer

    server = UiServer(memory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    times = []
    try:
        for _ in range(runs):
            driver.get("about:blank")
            driver.get(server.url)
            wait_for(driver, lambda d: " of " in d.find_element(By.ID, "range").text or "No bullets" in d.page_source)
            wait_for(driver, lambda d: d.execute_script(f"return {MEASURE}.length"))
            times.append(driver.execute_script(f"return {MEASURE}[0].duration"))
    finally:
        server.shutdown()
        server.server_close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    from tests.web.test_web import _start, fill_big_store

    driver = _start(1400, 900)
    try:
        with tempfile.TemporaryDirectory() as empty_home, tempfile.TemporaryDirectory() as full_home:
            empty = _memory(Path(empty_home))
            full = _memory(Path(full_home))
            fill_big_store(full)
            floor = _loads(empty, driver, args.runs)
            big = _loads(full, driver, args.runs)
    finally:
        driver.quit()
    load = os.getloadavg()[0]
    for name, times in (("empty store (floor)", floor), ("2,206 bullets", big)):
        print(
            f"{name:>20}: first page min {min(times):.0f} / median {statistics.median(times):.0f} / "
            f"max {max(times):.0f} ms over {len(times)} loads"
        )
    print(
        f"ratio of medians {statistics.median(big) / statistics.median(floor):.2f}x; target: under 300 ms; "
        f"load average {load:.1f}"
    )


if __name__ == "__main__":
    main()
