"""The Export page of a fresh demo in headless Chromium (issue 50 item 2): the demo records only paths inside its
workspace, the page never lists a bundle as approved beside the same judge's "no verdict yet", and a bundle whose
file is gone is said in one sentence with what to do (and doing it brings the file back).

The demo is seeded by `workbench demo --no-ui` in a private workspace (``tests/e2e/test_paid_jobs_browser.py``'s
server: no API key, nothing reaches the network).
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_paid_jobs_browser import Demo, demo, settle  # noqa: F401 - the fresh demo's server
from workbench.store import Store

pytestmark = pytest.mark.browser

BUNDLE = "demo-patch-quality@v1--test-results.yaml"


def export_page(server: Demo, page: Page, golden_set: str) -> str:
    page.goto(f"{server.server.url}/export?rater=lead")
    settle(page)
    box = page.get_by_role("combobox", name="Golden set")
    if box.input_value() != golden_set:
        page.locator("[data-testid=stSelectbox]").filter(has=page.get_by_text("Golden set", exact=True)).click()
        page.get_by_role("option", name=golden_set, exact=True).click()
        expect(box).to_have_value(golden_set)
        time.sleep(0.3)  # the rerun the choice starts: let it begin before waiting for the page to be idle
        settle(page)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    return page.locator("[data-testid=stMain]").inner_text()


def no_verdict_judges(text: str) -> set[str]:
    return set(re.findall(r"^(\S+) \(\S+\): no verdict yet", text, re.M))


def approved_judges(text: str) -> set[str]:
    return set(re.findall(r"^\S+@v\d+--\S+\.yaml — rubric \S+ v\d+, judge (\S+),", text, re.M))


def test_the_demos_bundle_is_in_its_workspace_and_listed_with_its_own_golden_set(demo, browser):  # noqa: F811
    with Store(demo.server.db) as s:  # every path the demo recorded is inside its workspace
        paths = [r[0] for r in s.conn.execute("SELECT path FROM exports")]
    assert paths and all(p.startswith(str(demo.root) + "/") for p in paths), paths
    bundle = demo.root / "rubrics" / "approved" / "demo-board" / BUNDLE
    assert paths == [str(bundle)] and bundle.is_file()

    context = browser.new_context(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
    page = context.new_page()
    try:
        # golden set demo: test-results never ran on it, so no verdict, and its bundle (of demo-board) is not
        # listed here as approved; one line says where the other bundles are
        text = export_page(demo, page, "demo")
        assert "test-results" in no_verdict_judges(text)
        assert BUNDLE not in text and "file moved" not in text
        assert not no_verdict_judges(text) & approved_judges(text)
        expect(page.get_by_text(re.compile(r"Approved on other golden sets or rubrics: demo-board \(1 bundle\)\. "
                                           r"Pick the golden set"))).to_be_visible()
        page.screenshot(path=str(demo.shots / "export-demo.png"), full_page=True)

        # golden set demo-board: the grader is calibrated there, and its bundle downloads as the file it is
        text = export_page(demo, page, "demo-board")
        assert "test-results" in approved_judges(text) and not no_verdict_judges(text) & approved_judges(text)
        assert re.search(r"^test-results \(\S+\) on rubric v1: ✅ calibrated", text, re.M), text[:2000]
        with page.expect_download() as got:
            page.locator("[data-testid=stDownloadButton] button").first.click()
        assert got.value.suggested_filename == BUNDLE
        assert open(got.value.path(), "rb").read() == bundle.read_bytes()
        page.screenshot(path=str(demo.shots / "export-demo-board.png"), full_page=True)

        # the file gone: one sentence with what to do; doing it (Export) writes the file again
        bundle.unlink()
        text = export_page(demo, page, "demo-board")
        gone = page.locator("[data-testid=stAlert]").filter(has_text="its file is no longer at")
        expect(gone).to_have_count(1)
        sentence = gone.inner_text().removeprefix("📄").strip()
        assert sentence.count(". ") == 0 and sentence.endswith("folder.")  # one sentence
        assert sentence.startswith(f"{BUNDLE} (judge test-results, rubric demo-patch-quality v1) was approved on ")
        assert "export it again with its Export button above, or run workbench export -g demo-board -r " \
               "demo-patch-quality@v1 -j test-results" in sentence
        assert "file moved" not in text
        page.screenshot(path=str(demo.shots / "export-file-gone.png"), full_page=True)
        page.locator(".st-key-export-test-results button").click()
        expect(page.get_by_text(re.compile(rf"Exported {re.escape(BUNDLE)} \(sha256 "))).to_be_visible(timeout=60_000)
        time.sleep(0.3)  # the rerun the export starts
        settle(page)
        written = demo.root / "rubrics" / "approved" / BUNDLE  # where the Export page writes, in the workspace
        assert written.is_file()
        expect(page.locator("[data-testid=stAlert]").filter(has_text="its file is no longer at")).to_have_count(0)
    finally:
        context.close()
