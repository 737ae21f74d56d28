"""Blind labeling stays blind in a real browser: a reviewer who tries every control in the sidebar (every golden
set, every rubric, every reviewer name, every page link, and any toggle or checkbox there is) and skips through
the queue never has an unmasked self-identification on the page, hidden parts included."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import seed, start_ui, stop_ui
from tests.ui.test_blind_review import CODENAME, PHRASES, hidden_item
from workbench.features.importing import service as importing
from workbench.features.labeling import masking
from workbench.store import Store

pytestmark = pytest.mark.browser

SET = "blind"
SECRETS = [p.rstrip(".,") for ps in PHRASES.values() for p in ps] + [CODENAME]
IDLE = """() => { const app = document.querySelector('[data-testid=stApp]');
  const shown = e => !!(e.offsetWidth || e.offsetHeight);
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && ![...document.querySelectorAll('[data-testid=stSkeleton], [data-testid=stSpinner]')].some(shown); }"""


@pytest.fixture(scope="module")
def blind_server(demo_db_template, tmp_path_factory, chromium_path):
    tmp = tmp_path_factory.mktemp("blind")
    db = tmp / "blind.db"
    seed(db, demo_db_template, tmp)
    with (tmp / "blind.jsonl").open("w") as fh:
        for k in range(3):
            fh.write(json.dumps(hidden_item(f"b{k}")) + "\n")
    with Store(db) as s:
        importing.import_items(s, tmp / "blind.jsonl", SET)
        masking.set_masking(s, SET, add=[CODENAME])  # a lead's own pattern counts like the built-in ones
    server = start_ui(db, tmp / "ui.log")
    try:
        yield server
    finally:
        stop_ui(server.proc)


def settle(page: Page) -> None:
    page.wait_for_function(IDLE, timeout=30_000)


def assert_blind(page: Page, where: str) -> None:
    settle(page)
    text = page.evaluate("document.body.textContent")  # hidden text too: folded steps, closed expanders
    shown = [s for s in SECRETS if s.lower() in text.lower()]
    assert not shown, f"{where}: the page shows {shown}"


def sidebar_selectbox(page: Page, label: str):
    return page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").filter(has_text=label)


def options_of(page: Page, label: str) -> list[str]:
    box = sidebar_selectbox(page, label)
    box.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return [o.strip() for o in options]


def choose(page: Page, label: str, option: str) -> None:
    sidebar_selectbox(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def test_a_reviewer_trying_every_sidebar_control_sees_no_self_identification(blind_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{blind_server.url}/label?rater=ana&golden_set={SET}")
        expect(page.get_by_text(re.compile(r"^Item b\d$"))).to_be_visible(timeout=60_000)
        assert_blind(page, "the first item")
        assert masking.MASK in page.evaluate("document.body.textContent")
        sidebar = page.locator("[data-testid=stSidebar]")
        for switch in sidebar.get_by_role("switch").all() + sidebar.get_by_role("checkbox").all():
            label = switch.locator("xpath=ancestor::label").inner_text()
            switch.click(force=True)  # (there was a "Mask self-identifying phrases" toggle here)
            assert_blind(page, f"after switching '{label}'")
        for golden_set in options_of(page, "Golden set"):
            choose(page, "Golden set", golden_set)
            assert_blind(page, f"golden set {golden_set}")
            for rubric in options_of(page, "Rubric"):
                choose(page, "Rubric", rubric)
                assert_blind(page, f"golden set {golden_set}, rubric {rubric}")
        choose(page, "Golden set", SET)
        with Store(blind_server.db) as s:  # other reviewers; a lead's name opens lead pages, another role
            reviewers = [r["name"] for r in s.raters() if r["role"] == "reviewer"]
        for name in [n for n in options_of(page, "Rater") if n in reviewers]:
            choose(page, "Rater", name)
            assert_blind(page, f"rater {name}")
        for link in sidebar.locator("[data-testid=stSidebarNavLink]").all():
            name = link.inner_text().strip()
            link.click()
            assert_blind(page, f"page {name}")
        page.goto(f"{blind_server.url}/label?rater=ana&golden_set={SET}")
        for k in range(3):  # skip through the queue: every item of the set in turn
            expect(page.get_by_text(re.compile(r"^Item b\d$"))).to_be_visible()
            assert_blind(page, f"queue item {k + 1}")
            for expander in page.locator("[data-testid=stExpander] summary").all():
                expander.click()  # the flag form and any folded content
            assert_blind(page, f"queue item {k + 1}, expanders open")
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.keyboard.press("s")
            settle(page)
        assert_blind(page, "the end of the queue")
    finally:
        context.close()
