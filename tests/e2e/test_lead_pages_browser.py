"""Every lead page in headless Chromium on the demo database: it renders without an exception.

A full-page screenshot of each is written to a temporary folder (its path is
printed) so a person can look at what a lead sees.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PAGES = [  # url path, a text that shows the page has computed its content, and whether it draws charts
    ("overview", "synthetic demo", False),
    ("judges", "Nothing left to run", False),
    ("calibration", "Calibrated", True),
    ("compare", "Which differences are real", True),
    ("drift", "noisy-llama: agreement per run", True),
    ("export", "Approved bundles", False),
]


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    yield folder
    print(f"\nscreenshots of the lead pages: {folder}")


@pytest.mark.parametrize("path, marker, charts", PAGES, ids=[p for p, _, _ in PAGES])
def test_lead_page_renders_in_the_browser(ui_server, browser, shots, path, marker, charts):
    server, _ = ui_server
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/{path}?rater=lead")
        expect(page.get_by_text(marker).first).to_be_visible(timeout=60_000)
        if charts:  # Vega draws after the page's text: wait for the first chart's canvas
            expect(page.locator(".vega-embed canvas, .vega-embed svg").first).to_be_visible(timeout=60_000)
        expect(page.locator("[data-testid='stException']")).to_have_count(0)
        page.screenshot(path=str(shots / f"{path}.png"), full_page=True)
        assert (shots / f"{path}.png").stat().st_size > 10_000
    finally:
        context.close()
