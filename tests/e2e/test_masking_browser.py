"""Blinding covers every field, in a real browser (issue 27 item 5): an item with model, family, maker and producer
names planted in every field, in many spellings, is opened on the Label page as a reviewer would open it; neither
the page's text (folded steps and closed expanders opened too) nor any websocket frame the browser received
carries one of them, while each field's own planted plain word is there (so a page that showed nothing would
fail)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.conftest import DEMO_RUBRIC
from tests.e2e.conftest import start_ui, stop_ui
from tests.e2e.test_blind_review_browser import settle
from tests.ui.test_blind_review import KEPT, PLANTED, planted_item
from workbench.features.importing import service as importing
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

pytestmark = pytest.mark.browser

SET = "planted"
ITEM = "p1"
NEVER_SHOWN = ["keepmetadata", "keepcategory"]  # metadata and category are never handed to a reviewer


def leaked(text: str) -> list[str]:
    """Planted names in ``text`` as words of their own, case-insensitive."""
    return [n for n in PLANTED if re.search(rf"(?<![^\W_]){re.escape(n)}(?![^\W_])", text, re.IGNORECASE)]


@pytest.fixture(scope="module")
def planted_server(tmp_path_factory, chromium_path):
    tmp = tmp_path_factory.mktemp("masking")
    db = tmp / "masking.db"
    (tmp / "planted.jsonl").write_text(json.dumps(planted_item(ITEM)) + "\n")
    with Store(db) as s:
        add_rubric(s, DEMO_RUBRIC)
        importing.import_items(s, tmp / "planted.jsonl", SET)
    server = start_ui(db, tmp / "ui.log")
    try:
        yield server
    finally:
        stop_ui(server.proc)


def test_no_planted_name_reaches_the_reviewers_page_or_websocket(planted_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    frames: list[bytes] = []

    def on_websocket(ws) -> None:
        ws.on("framereceived", lambda payload: frames.append(
            payload if isinstance(payload, bytes) else payload.encode("utf-8")))

    page.on("websocket", on_websocket)
    try:
        page.goto(f"{planted_server.url}/label?rater=ana&golden_set={SET}")
        expect(page.get_by_text(f"Item {ITEM}", exact=True)).to_be_visible(timeout=60_000)
        settle(page)
        for summary in page.locator("[data-testid=stExpander] summary").all():
            summary.click()  # the reference, the folded tool output, the flag form
            settle(page)
        expect(page.get_by_text("keepfoldedtail", exact=False).first).to_be_visible()
        text = page.evaluate("document.body.textContent")  # hidden parts too
        visible = page.evaluate("document.body.innerText")
        received = b"\n".join(frames).decode("utf-8", errors="replace")
    finally:
        context.close()

    assert frames, "the browser received no websocket frame"
    for where, content in (("page text", text), ("visible text", visible), ("websocket frames", received)):
        assert not leaked(content), f"{where} carries {leaked(content)}"
        missing = [k for k in KEPT if k not in content]
        assert not missing, f"{where} lacks the planted plain words {missing}: the fields were not all shown"
        assert not [k for k in NEVER_SHOWN if k in content], where
        assert "[name masked]" in content
