"""The Label page on a phone (issue 33 item 7): a reviewer at 390x844 in headless Chromium, on the demo.

No horizontal scroll anywhere (the document, and no element of the page wider than the screen or scrolling
sideways inside itself: code blocks wrap), and every control (the rationale, each score button, Skip, Flag, the
recent labels' Change, the sidebar's menu) is inside the screen's width and comes into view by scrolling down;
a link at the top ("Score this item") brings the score buttons on screen at once.
Then the reviewer labels an item by tapping a score and reaches the next one. Screenshots are kept in a
temporary folder (its path is printed).
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import E2E_SET
from tests.e2e.reviewer import Reviewer

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 390, 844

# every element of the page's main area whose box spills past the screen's right edge, and every one that scrolls
# sideways inside itself (a code block or table that does not wrap); a box past the left edge cannot be scrolled
# to (the progress bar's fill is drawn there, clipped by its track)
OVERFLOW = """() => {
  const w = window.innerWidth, out = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    const r = el.getBoundingClientRect(), name = el.tagName + '.' + (el.getAttribute('data-testid') || '');
    if (r.width > 0 && r.height > 0 && r.right > w + 1) out.push(`${name} spans ${r.left}-${r.right}`);
    const s = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && ['auto', 'scroll'].includes(s.overflowX) && el.clientWidth > 0)
      out.push(`${name} scrolls ${el.scrollWidth} > ${el.clientWidth}`);
  }
  return out;
}"""


def on_screen(page: Page, locator, what: str) -> None:
    """Scrolled to (vertically), the control lies wholly inside the screen (polled: an expander still opening
    moves what it holds, the sidebar slides in)."""
    expect(locator).to_be_visible()
    for _ in range(50):
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        assert box is not None, f"{what} has no box"
        if (box["x"] >= 0 and box["x"] + box["width"] <= WIDTH + 0.5
                and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT + 0.5):
            return
        time.sleep(0.1)  # polling interval while the layout settles (an expander or the sidebar still moving)
    raise AssertionError(f"{what} does not come wholly on screen by scrolling: {box}")


def no_sideways_scroll(page: Page, when: str) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{when}: the page scrolls sideways ({widths[0]} > {widths[1]})"
    assert page.evaluate(OVERFLOW) == [], when


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("phone-screenshots")
    yield folder
    print(f"\nscreenshots of the Label page at {WIDTH}x{HEIGHT}: {folder}")


def test_a_reviewer_labels_on_a_phone_without_sideways_scrolling(ui_server, browser, shots):
    server, ids = ui_server
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    try:
        page = context.new_page()
        rev = Reviewer(page, server.url).open_with_url_name("pat", E2E_SET)
        first = rev.item_line.inner_text().removeprefix("Item ").strip()
        assert first in ids
        page.screenshot(path=str(shots / "label-top.png"))
        # the demo's trajectories carry code blocks (tool output, diffs): they are there, and they wrap
        assert page.locator("[data-testid=stMain] pre").count() > 0
        no_sideways_scroll(page, "the first item")

        # at the top, a link goes straight to the scoring (below the whole trajectory on a phone)
        jump = page.get_by_role("link", name="Score this item ↓")
        on_screen(page, jump, "the link to the scoring")
        jump.tap()
        score_line = page.locator(f"[class*='st-key-score-new-{first}-'] button").filter(visible=True).first
        for _ in range(50):
            box = score_line.bounding_box()
            if box and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT:
                break
            time.sleep(0.1)  # polling interval while the page scrolls to the anchor
        else:
            raise AssertionError(f"the link did not bring the score buttons on screen: {box}")

        rationale = page.get_by_role("textbox", name="Rationale")
        on_screen(page, rationale, "the rationale box")
        scores = page.locator(f"[class*='st-key-score-new-{first}-'] button").filter(visible=True)
        expect(scores).to_have_count(3)  # the demo scale: -1, 0, +1
        for i in range(3):
            on_screen(page, scores.nth(i), f"score button {i + 1}")
        page.screenshot(path=str(shots / "label-scores.png"))
        on_screen(page, page.locator(f".st-key-skip-{first} button"), "Skip")
        flag = page.get_by_text("Flag this item")
        on_screen(page, flag, "Flag this item")
        flag.click()
        on_screen(page, page.locator(f".st-key-flag-{first} button"), "Flag and move on")
        on_screen(page, page.get_by_placeholder("What is broken or unclear?"), "the flag's note")
        no_sideways_scroll(page, "the flag form open")
        flag.click()  # closed again

        # the sidebar (rater, pages) opens from its button at the top of the screen and fits too
        page.mouse.wheel(0, -100_000)
        menu = page.locator("[data-testid=stExpandSidebarButton], [data-testid=stSidebarCollapsedControl] button")
        on_screen(page, menu.first, "the sidebar's button")

        # tap a score: the label is saved and the next item comes, still without sideways scrolling
        rationale.fill("Tests pass; a competent patch.")
        page.evaluate("document.activeElement.blur()")
        scores.nth(1).tap()
        expect(page.get_by_text(f"Saved {first}")).to_be_visible()
        rev.wait_ready()
        second = rev.item_line.inner_text().removeprefix("Item ").strip()
        assert second != first and second in ids
        no_sideways_scroll(page, "the second item")
        change = page.locator(f".st-key-change-{first} button")
        on_screen(page, change, "the recent label's Change")
        page.screenshot(path=str(shots / "label-after-save.png"))

        menu.first.tap()
        label_link = page.get_by_role("link", name="Label")
        expect(label_link).to_be_visible()
        on_screen(page, label_link, "the sidebar's Label link")
        page.screenshot(path=str(shots / "label-sidebar.png"))
        assert (shots / "label-scores.png").stat().st_size > 10_000
    finally:
        context.close()
