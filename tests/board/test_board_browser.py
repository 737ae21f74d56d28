"""The Board page in a real Chromium at 1400 px: 30 tasks x 6 models x 3 repeats, both tiers, without overflow.

The board is graded for real (the python grader and the loopback judge) and served by `workbench ui`; the test
measures what the browser laid out: no sideways scrolling of the page, no grid wider than its column, no cell
whose text spills out of it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.board.conftest import run_item, write_runs
from tests.board.synthetic import FAMILIES, synthetic_board
from tests.e2e.conftest import browser, chromium_path, start_ui, stop_ui  # noqa: F401 - fixtures
from workbench.features.people import raters
from workbench.store import Store

pytestmark = pytest.mark.browser

MODELS = 6
IDLE = """() => { const app = document.querySelector('[data-testid=stApp]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'; }"""
OVERFLOW = """() => {
  const grid = [...document.querySelectorAll('table.grid')];
  const spills = [...document.querySelectorAll('table.grid td, table.grid th')]
    .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 40));
  const wide = grid.filter(t => t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length;
  return {page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          tables: grid.length, rows: document.querySelectorAll('table.grid tr').length, wide, spills}; }"""


@pytest.fixture
def board_db(workspace, loopback, tmp_path):
    s6 = synthetic_board(2, n_models=MODELS)
    rows = [run_item(f"{r.model}-{r.task_id}-{r.repeat}", r.task_id, f"category-{r.category}",
                     f"vendor-model-{r.model}-2026-11", FAMILIES[int(r.model[1:]) % len(FAMILIES)], int(r.repeat),
                     passes=r.mechanical == 0, judged=int(r.judged)) for r in s6.items.itertuples()]
    files = write_runs(tmp_path / "runs", rows)
    # graded by the CLI in its own process: Playwright's fixture holds this thread's event loop
    subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(workspace["db"]), "--project",
                    str(workspace["dir"]), "board", "grade", *map(str, files), "-b", str(workspace["mech"]), "-b",
                    str(workspace["loop"]), "-n", "week-49", "--concurrency", "32"],
                   env={**os.environ, **loopback.env()}, check=True, capture_output=True, timeout=600)
    with Store(workspace["db"]) as s:
        raters.set_role(s, "lee", "lead")
    return workspace["db"]


def test_the_board_fits_1400_px_for_30_tasks_and_6_models(board_db, browser, tmp_path):  # noqa: F811
    server = start_ui(board_db, tmp_path / "ui.log")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{server.url}/board?rater=lee")
        expect(page.get_by_text("Where to look").first).to_be_visible(timeout=120_000)
        page.wait_for_function(IDLE, timeout=120_000)
        expect(page.locator("table.grid").first).to_be_visible(timeout=60_000)
        got = page.evaluate(OVERFLOW)
        # the measure can fail: a cell made to hold something wider than itself is reported
        layout = page.evaluate("""() => { const s = document.createElement('span');
            s.style.cssText = 'display:inline-block;width:900px'; s.textContent = 'wide';
            document.querySelector("table.grid td:nth-child(2)").appendChild(s);
            return getComputedStyle(document.querySelector("table.grid")).tableLayout; }""")
        broken = page.evaluate(OVERFLOW)
        context.close()
    finally:
        stop_ui(server.proc)
    assert got["tables"] == 4 and got["rows"] == 30 + 4  # a header row per category
    assert got["page"] <= 0, "the page scrolls sideways"
    assert got["wide"] == 0 and got["spills"] == [], got
    assert layout == "fixed"  # the board's own style reached the page
    assert broken["spills"] or broken["wide"], broken
