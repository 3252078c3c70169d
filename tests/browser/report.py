"""`lakewriter report` in a real browser: headless Chromium (Debian's, driven by its chromedriver
through Selenium) opens the page from a file and must find it loads without a console error and
without a request, holds per job as many cells of each state as `status --json` counts over the
same range, and shows a partition's version, rows and time on hover. A screenshot of the whole
page is kept as target-artifacts/report.png.

    python tests/browser/report.py LAKEWRITER_BINARY WORK_DIR

WORK_DIR is made if missing; the demo's project is laid out in it, backfilled, a late file
delivered into one day (stale) and the report drawn over a range past the last day (missing, or without input).
"""

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
RANGE = ["--from", "2026-09-01", "--to", "2026-10-03"]
LATE = "2026-09-14"
SCREENSHOT = Path(__file__).resolve().parents[2] / "target-artifacts" / "report.png"


def lakewriter(binary, project, *args):
    """Runs `lakewriter --project PROJECT --json ARGS…`, which must exit 0; its JSON lines."""
    run = subprocess.run(
        [binary, "--project", str(project), "--json", "--color", "never", *args],
        capture_output=True, text=True, check=False,
    )
    if run.returncode != 0:
        sys.exit(f"lakewriter {' '.join(args)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    return [json.loads(line) for line in run.stdout.splitlines()]


def expected_counts(binary, project):
    """{job: {state: n}} of `status --json` over RANGE, for every job of the graph."""
    jobs = [line["job"] for line in lakewriter(binary, project, "graph") if "job" in line]
    counts = {}
    for job in jobs:
        lines = lakewriter(binary, project, "status", job, *RANGE)
        counts[job] = dict(Counter(line["state"] for line in lines if "state" in line))
    return counts


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1000,900"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='lakewriter-chromium-')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Debian's driver and browser: nothing is looked up or downloaded.
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def check_page(driver, page, expected):
    """Every assertion on the open page; returns the failures."""
    failures = []
    severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    if severe:
        failures.append(f"console errors: {severe}")
    requests = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    if requests:
        failures.append(f"the page requested {requests}")
    shown = driver.execute_script(
        """const counts = {};
        for (const cell of document.querySelectorAll('rect.cell')) {
            const job = (counts[cell.dataset.job] ??= {});
            job[cell.dataset.state] = (job[cell.dataset.state] || 0) + 1;
        }
        return counts;"""
    )
    if shown != expected:
        failures.append(f"cells per job and state {shown}, but status --json counts {expected}")
    sections = driver.execute_script("return [...document.querySelectorAll('section.job')].map(s => s.dataset.job)")
    if sorted(sections) != sorted(expected):
        failures.append(f"sections {sections}, jobs {sorted(expected)}")
    cell = driver.find_element(By.CSS_SELECTOR, f'rect.cell[data-job="daily_orders"][data-partition="dt={LATE}"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
    ActionChains(driver).move_to_element(cell).perform()
    tip = driver.find_element(By.ID, "tip")
    text = tip.text if tip.is_displayed() else ""
    for part in (f"daily_orders dt={LATE}", "stale: inputs changed", "version ", " rows", "written at ", "run took "):
        if part not in text:
            failures.append(f"the hover over daily_orders dt={LATE} shows {text!r}, without {part!r}")
    return failures


def whole_page(driver):
    """A window as tall as the page, so that a screenshot holds all of it."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1000, min(height + 200, 16000))


def screenshot(driver):
    """The whole page, with the hover's tooltip, as a CI artefact."""
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOT))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, work = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    os.environ["SE_OFFLINE"] = "true"
    work.mkdir(parents=True, exist_ok=True)
    demo = work / "demo"
    project = demo / "lakewriter.toml"
    if not project.exists():
        lakewriter(binary, project, "demo", str(demo))
    lakewriter(binary, project, "demo", str(demo), "--late", LATE)
    page = work / "report.html"
    written = lakewriter(binary, project, "report", "--out", str(page), *RANGE)[0]
    expected = expected_counts(binary, project)
    totals = Counter()
    for counts in expected.values():
        totals.update(counts)
    if any(written[state] != totals[state] for state in ("fresh", "stale", "missing", "no_input")):
        sys.exit(f"report printed {written}, status --json counts {dict(totals)}")
    if totals["stale"] == 0 or totals["missing"] == 0 or totals["no_input"] == 0:
        sys.exit(f"the project should have stale, missing and no-input partitions: {expected}")
    driver = browser()
    try:
        driver.get(page.as_uri())
        whole_page(driver)
        failures = check_page(driver, page, expected)
        screenshot(driver)
    finally:
        driver.quit()
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(f"report in Chromium: {sum(totals.values())} cells of {len(expected)} jobs as status counts them; "
          f"screenshot {SCREENSHOT}; {'failed' if failures else 'ok'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
