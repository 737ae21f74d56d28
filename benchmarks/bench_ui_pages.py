"""Lead pages against a trivial Streamlit app, in Chromium on the same machine with the same server flags.

Issue 33, item 8: each lead page's warm visit (a lead moves to it through the sidebar, in one session) settles
within 4x the time a trivial two-page Streamlit app takes to change page. Measured here:

- trivial: a two-page app of a title and a line of text each, started as ``workbench ui`` starts Streamlit
  (``--server.headless true --browser.gatherUsageStats false --server.fileWatcherType none``, same working
  directory); the median time from a click on the other page's sidebar link to that page finished;
- warm: ``workbench ui`` on the database ``workbench demo`` leaves; in one browser session, from the Glossary page
  (Home for the Glossary itself) a click on the page's sidebar link, until it is finished; median of ``--runs``;
- first visit: the page's address opened in a new tab, the first time the server shows that page (each page's
  own cached computations not yet made; the demo's reports are computed, as ``workbench demo`` leaves them).

"Finished" is ``bench_lead_pages_browser.FINISHED``: title drawn, script run over, no spinner or skeleton, every
visible chart and table drawn. Skipped with a note when chromium is not installed.

Usage: python benchmarks/bench_ui_pages.py [--runs N] [--pages calibration,compare] [--rows-only]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_lead_pages_browser import FINISHED, demo_database  # one definition of "finished"

RATIO = 4.0  # the target: a lead page's warm visit within 4x the trivial app's page change
PAGES = [  # url path, the page's title (its h1), its link in the sidebar
    ("overview", "Judge Workbench", "Home"), ("judges", "Judges", "Judges"), ("calibration", "Calibration", "Calibration"),
    ("compare", "Compare judges", "Compare"), ("drift", "Drift", "Drift"), ("export", "Export approved rubrics", "Export"),
    ("refine", "Refine", "Refine"), ("board", "Board", "Board"), ("monitoring", "Monitoring", "Monitoring"),
    ("adjudicate", "Adjudicate", "Adjudicate"), ("import", "Import", "Import"),
    ("blind-review", "Blind review", "Blind review"), ("glossary", "Glossary", "Glossary"),
]
TRIVIAL_APP = '''import streamlit as st

def one():
    st.title("One")
    st.write("A page of a line of text.")

def two():
    st.title("Two")
    st.write("Another page of a line of text.")

st.navigation([st.Page(one, title="One", default=True), st.Page(two, title="Two", url_path="two")]).run()
'''


def click_and_time(page, link_text: str, title: str) -> float:
    link = page.locator("[data-testid=stSidebarNavLink]").filter(has_text=link_text).first
    start = time.perf_counter()
    link.click()
    page.wait_for_function(FINISHED, arg=title, timeout=120_000, polling=20)
    return time.perf_counter() - start


def trivial_page_change(browser, tmp: Path, runs: int) -> list[float]:
    from tests.e2e.conftest import free_port, stop_ui, wait_until_up

    app = tmp / "trivial_app.py"
    app.write_text(TRIVIAL_APP)
    port = free_port()
    log = tmp / "trivial.log"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.address", "127.0.0.1", "--server.port",
           str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType",
           "none"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, proc, log)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(FINISHED, arg="One", timeout=120_000, polling=20)
        times = []
        for _ in range(runs):
            times.append(click_and_time(page, "Two", "Two"))
            click_and_time(page, "One", "One")
        context.close()
        return times
    finally:
        stop_ui(proc)


def workbench_pages(browser, tmp: Path, pages: list[tuple[str, str, str]], runs: int) -> dict:
    from tests.e2e.conftest import start_ui, stop_ui

    db = demo_database(tmp, cold=False)
    server = start_ui(db, tmp / "ui.log")
    results = {}
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        for path, title, _ in pages:  # first visits: a new tab on the address, once per page
            tab = context.new_page()
            start = time.perf_counter()
            tab.goto(f"{server.url}/{path}?rater=lead", wait_until="commit")
            tab.wait_for_function(FINISHED, arg=title, timeout=120_000, polling=20)
            results[path] = {"first": time.perf_counter() - start}
            tab.close()
        page = context.new_page()
        page.goto(f"{server.url}/glossary?rater=lead")
        page.wait_for_function(FINISHED, arg="Glossary", timeout=120_000, polling=20)
        for path, title, link in pages:
            via = ("Home", "Judge Workbench") if path == "glossary" else ("Glossary", "Glossary")
            warm = []
            for _ in range(runs):
                click_and_time(page, via[0], via[1])
                warm.append(click_and_time(page, link, title))
            results[path]["warm"] = warm
        context.close()
    finally:
        stop_ui(server.proc)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm visits per page (default 5)")
    parser.add_argument("--pages", default="", help="comma-separated url paths (default: every lead page)")
    parser.add_argument("--rows-only", action="store_true", help="print only the result rows")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("| lead pages against a trivial Streamlit app | skipped: chromium is not installed | |")
        return 0
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS

    pages = [p for p in PAGES if not args.pages or p[0] in args.pages.split(",")]
    with tempfile.TemporaryDirectory() as d, sync_playwright() as pw:
        tmp = Path(d)
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        trivial = statistics.median(trivial_page_change(browser, tmp, args.runs))
        results = workbench_pages(browser, tmp, pages, args.runs)
        browser.close()
    if not args.rows_only:
        print(f"trivial two-page app: page change, median of {args.runs}: {trivial:.2f} s", file=sys.stderr)
        print("| benchmark | result | target |\n|---|---|---|")
    ok = True
    for path, r in results.items():
        warm = statistics.median(r["warm"])
        ratio = warm / trivial
        ok &= ratio <= RATIO
        print(f"| lead page `{path}`, Chromium at 1400 px: warm visit from the sidebar, median of {len(r['warm'])} "
              f"(worst), against a trivial app's page change ({trivial:.2f} s); first visit in a new tab | "
              f"{warm:.2f} s ({max(r['warm']):.2f} s) = {ratio:.1f}x; first {r['first']:.2f} s | <= {RATIO:.0f}x |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
