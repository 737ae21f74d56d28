"""Driving the Label and Adjudicate pages in a real browser as a person would, by keyboard where the page allows.

Streamlit puts a widget's key into a CSS class (``st-key-<key>``, ':' becoming
'-'), which gives stable selectors for the page's own controls.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

ITEM = re.compile(r"^Item \S+$")
EMPTY = "Your queue is empty"
SCORE_KEYS = {-1: "1", 0: "2", 1: "3"}  # the Label page's keys for the demo scale, lowest first
TIMEOUT = 20_000
expect.set_options(timeout=TIMEOUT)


class Reviewer:
    def __init__(self, page: Page, base_url: str):
        self.page, self.base = page, base_url
        page.set_default_timeout(TIMEOUT)

    # -- opening -----------------------------------------------------------------
    def open_with_url_name(self, name: str, golden_set: str) -> "Reviewer":
        self.page.goto(f"{self.base}/label?rater={name}&golden_set={golden_set}")
        self.wait_ready()
        return self

    def open_and_type_name(self, name: str, golden_set: str) -> "Reviewer":
        """Open /label without a name and type a new one into the sidebar's rater picker."""
        self.page.goto(f"{self.base}/label?golden_set={golden_set}")
        expect(self.page.get_by_text("Pick or type your rater name")).to_be_visible()
        self.page.get_by_role("combobox", name="Rater").click()
        self.page.keyboard.type(name)
        expect(self.page.get_by_role("option", name=re.compile(name))).to_be_visible()
        self.page.keyboard.press("Enter")
        self.page.evaluate("document.activeElement.blur()")  # leave the picker so the page's keys work
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        """Until the item (or the empty queue) is on screen with its keys live.

        A first visit loads the widgets' code after the page's text, so the item
        can show a moment before its buttons; a key pressed then would be lost.
        The skip (or back) button is the last of the item's keyed buttons.
        """
        expect(self.item_line.or_(self.page.get_by_text(EMPTY)).first).to_be_visible()
        if not self.item_line.count():
            return
        item = self.item_line.inner_text().removeprefix("Item ").strip()
        last_key = self.page.locator(f".st-key-skip-{item} button, .st-key-back-{item} button")
        expect(last_key.filter(visible=True)).to_have_count(1)

    # -- reading -----------------------------------------------------------------
    @property
    def item_line(self):
        return self.page.locator("[data-testid=stMarkdownContainer] p").filter(has_text=ITEM)

    def shown(self) -> str | None:
        """The item on screen, or None when the queue is empty."""
        self.wait_ready()
        if not self.item_line.count():
            return None
        return self.item_line.inner_text().removeprefix("Item ").strip()

    # -- labeling by keyboard -----------------------------------------------------
    def label(self, score: int, rationale: str | None = None) -> str | None:
        """Label the item on screen with the keyboard; returns the item that comes next."""
        before = self.shown()
        self.page.bring_to_front()  # key presses go to the window in front, as for a person
        if rationale:
            self.type_rationale(rationale)
        self.page.keyboard.press(SCORE_KEYS[score])
        return self.wait_for_next(before)

    def type_rationale(self, text: str) -> None:
        self.page.get_by_role("textbox", name="Rationale").focus()
        self.page.keyboard.type(text)
        self.page.keyboard.press("Tab")  # leaving the box commits it; the score keys work outside it

    def wait_for_next(self, before: str | None) -> str | None:
        expect(self.item_line.filter(has_text=re.compile(rf"^Item {re.escape(before)}$"))).to_have_count(0)
        return self.shown()

    def change(self, item_id: str, score: int, rationale: str | None = None) -> None:
        """Reopen one of my recent labels (keyboard: focus its Change button, Enter) and give a new score."""
        self.page.bring_to_front()
        self.page.locator(f".st-key-change-{item_id} button").focus()
        self.page.keyboard.press("Enter")
        expect(self.page.get_by_text("Changing your label")).to_be_visible()
        expect(self.item_line).to_have_text(f"Item {item_id}")
        self.wait_ready()
        if rationale:
            self.type_rationale(rationale)
        self.page.keyboard.press(SCORE_KEYS[score])
        expect(self.page.get_by_text(f"Changed your label of {item_id}")).to_be_visible()


class Lead:
    def __init__(self, page: Page, base_url: str):
        self.page, self.base = page, base_url
        page.set_default_timeout(TIMEOUT)

    def adjudicate(self, golden_set: str, item_id: str, label_text: str, note: str) -> None:
        page = self.page
        page.goto(f"{self.base}/adjudicate?rater=lead&golden_set={golden_set}")
        expect(page.get_by_role("heading", name="Adjudicate")).to_be_visible()
        page.get_by_role("combobox", name=re.compile("Item waiting for a final label")).click()
        page.get_by_role("option", name=item_id, exact=True).click()
        expect(page.locator(f".st-key-adjudicate-{item_id}")).to_be_visible()
        page.locator(f".st-key-adjudicate-score-{item_id}").get_by_text(label_text, exact=True).click()
        page.locator(f".st-key-adjudicate-note-{item_id} textarea").fill(note)
        page.locator(f".st-key-adjudicate-{item_id} button").click()
        expect(page.get_by_text(f"Final label of {item_id}")).to_be_visible()
