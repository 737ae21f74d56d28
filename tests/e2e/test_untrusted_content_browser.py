"""Untrusted text loads nothing in the browser: hostile markdown in items, rationales, notes, categories and ids.

Every hostile URL points at the discard port of the loopback address (nothing
listens there) and contains "beacon"; the test records every request the page
makes and fails on any such one, on any <img> or link to it, and checks that
an id with backticks is shown exactly as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DEMO_RUBRIC
from tests.e2e.conftest import start_ui, stop_ui
from workbench.features.importing import service as importing
from workbench.features.labeling import service as svc
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

pytestmark = pytest.mark.browser

HOST = "http://127.0.0.1:9"  # the discard port: nothing answers, and a request there is what this test looks for
SET, RUBRIC, JUDGE = "hostile", "demo-patch-quality", "careful-sonnet"
LABEL_ID = "lab`el![i](http://127.0.0.1:9/beacon-label-id.png)"  # in the reviewer's queue
ADJ_ID = "adj``id`![i](http://127.0.0.1:9/beacon-adj-id.png)"  # raters disagree: on the Adjudicate page
AGREED = [f"c{k}" for k in range(1, 5)]  # consensus 0, the judge says +1: in the disagreement browser
HOSTILE_CATEGORY = "cat![c](http://127.0.0.1:9/beacon-category.png)"


def hostile(where: str) -> str:
    """Markdown that loads or links http://127.0.0.1:9/beacon-<where>-... in as many ways as we know."""
    b = f"{HOST}/beacon-{where}"
    return (f"Look ![img]({b}-img.png?q=secret-item-text) and <img src=\"{b}-html.png\"> and "
            f"[link]({b}-link) and <{b}-auto> and {b}-bare and :blue-badge[![b]({b}-badge.png)] "
            f"$\\includegraphics{{{b}-tex.png}}$\n\n"
            f"![ref][r-{where}]\n\n[r-{where}]: {b}-ref.png\n\n"
            f"tick ```\n\n![fence]({b}-fence.png)\n\n```\n\n"
            f"a`b\n`![span]({b}-span.png)`\n\n\\`![esc]({b}-esc.png)`\n\n"
            f"    ![indented]({b}-indented.png)\n")


def item(item_id: str, category: str, n: int) -> dict:
    return {
        "id": item_id, "task_id": f"task-{n}", "category": category,
        "input": hostile(f"input-{n}"), "output": hostile(f"output-{n}"), "reference": hostile(f"reference-{n}"),
        "producer": {"model": "m![p](http://127.0.0.1:9/beacon-producer.png)", "family": "openai"},
        "trajectory": [
            {"role": "user", "content": hostile(f"step-user-{n}")},
            {"role": "assistant", "content": hostile(f"step-assistant-{n}"),
             "tool_calls": [{"name": "read`![t](http://127.0.0.1:9/beacon-toolname.png)",
                             "arguments": {"path": hostile(f"arg-{n}"), "k![a](http://127.0.0.1:9/beacon-key.png)": 1}}]},
            {"role": "tool", "name": "n`![n](http://127.0.0.1:9/beacon-stepname.png)", "content": hostile(f"tool-{n}")},
        ],
    }


def seed(db: Path, tmp: Path) -> None:
    items = [item(LABEL_ID, "bugfix", 0), item(ADJ_ID, HOSTILE_CATEGORY, 1)]
    items += [item(i, HOSTILE_CATEGORY if k % 2 else "bugfix", k + 2) for k, i in enumerate(AGREED)]
    (tmp / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    judgments = [{"item_id": i, "repeat": 0, "run": "run-1", "score": 1, "rationale": hostile(f"judge-{i}"),
                  "evidence_steps": [1], "trace": [{"tool": "overview", "arguments": {}, "result": hostile("trace")}]}
                 for i in AGREED]
    (tmp / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in judgments))
    with Store(db) as s:
        add_rubric(s, DEMO_RUBRIC)
        s.set_rater_role("lead", "lead")
        importing.import_items(s, tmp / "items.jsonl", SET)
        for i in AGREED:
            for rater in ("ana", "ben"):
                svc.submit_label(s, SET, RUBRIC, i, rater, 0, hostile(f"rationale-{rater}-{i}"))
        svc.submit_label(s, SET, RUBRIC, AGREED[0], "dora", 0, hostile("rationale-dora"))
        svc.submit_label(s, SET, RUBRIC, ADJ_ID, "ana", 1, hostile("rationale-ana-adj"))
        svc.submit_label(s, SET, RUBRIC, ADJ_ID, "ben", -1, hostile("rationale-ben-adj"))
        svc.set_aside(s, SET, RUBRIC, ADJ_ID, "chloe", "unsure", hostile("flag-note"))
        importing.import_judgments(s, tmp / "judgments.jsonl", SET, RUBRIC, JUDGE)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory, chromium_path):
    tmp = tmp_path_factory.mktemp("hostile")
    seed(tmp / "hostile.db", tmp)
    server = start_ui(tmp / "hostile.db", tmp / "ui.log")
    try:
        yield server
    finally:
        stop_ui(server.proc)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.requests = []  # type: ignore[attr-defined]
    page.on("request", lambda r: page.requests.append(r.url))
    yield page
    context.close()


def assert_nothing_loaded(page: Page) -> None:
    page.wait_for_load_state("networkidle")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    beacons = [u for u in page.requests if "beacon" in u or u.startswith(HOST)]
    assert beacons == [], f"the page requested {beacons}"
    assert page.locator("img[src*='beacon'], img[src*='127.0.0.1:9']").count() == 0
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    assert [h for h in links if "beacon" in h or "127.0.0.1:9" in h] == []


def test_the_label_page_shows_hostile_markdown_as_text(hostile_server, page):
    page.goto(f"{hostile_server.url}/label?rater=dora&golden_set={SET}&rubric={RUBRIC}")
    expect(page.locator("code", has_text="beacon-label-id").first).to_be_visible()
    assert LABEL_ID in page.locator("code", has_text="beacon-label-id").all_inner_texts()  # the id, intact
    expect(page.get_by_text("beacon-input-0-img.png", exact=False).first).to_be_visible()  # shown, as text
    expect(page.get_by_text("beacon-step-assistant-0-img.png", exact=False).first).to_be_attached()
    expect(page.get_by_text("beacon-rationale-dora-img.png", exact=False).first).to_be_visible()  # recent labels
    page.get_by_text("Reference", exact=True).click()
    expect(page.get_by_text("beacon-reference-0-img.png", exact=False).first).to_be_visible()
    assert_nothing_loaded(page)


def test_the_adjudicate_page_shows_hostile_markdown_as_text(hostile_server, page):
    page.goto(f"{hostile_server.url}/adjudicate?rater=lead&golden_set={SET}&rubric={RUBRIC}")
    expect(page.get_by_text("beacon-rationale-ana-adj-img.png", exact=False).first).to_be_visible()
    expect(page.get_by_text("beacon-rationale-ben-adj-img.png", exact=False).first).to_be_visible()
    expect(page.get_by_text("beacon-flag-note-img.png", exact=False).first).to_be_visible()
    expect(page.get_by_text("beacon-input-1-img.png", exact=False).first).to_be_visible()
    assert_nothing_loaded(page)
    # a final label's message names the id exactly, however many backticks it has
    page.get_by_text("0 competent pass", exact=True).click()
    page.get_by_placeholder("Why this is the final label").fill("Checked.")
    page.get_by_role("button", name="Save final label").click()
    expect(page.get_by_text("Final label of", exact=False)).to_be_visible()
    assert ADJ_ID in page.locator("[data-testid='stAlertContainer'] code").all_inner_texts()
    assert_nothing_loaded(page)


def test_the_disagreement_browser_shows_hostile_markdown_as_text(hostile_server, page):
    page.goto(f"{hostile_server.url}/calibration?rater=lead")
    page.get_by_role("tab", name="Disagreements").click()
    expect(page.get_by_text("beacon-judge-c", exact=False).first).to_be_visible()
    expect(page.get_by_text("beacon-rationale-ana-c", exact=False).first).to_be_visible()
    expect(page.get_by_text("beacon-input-", exact=False).first).to_be_visible()
    page.get_by_text("Agentic judge's tool transcript", exact=False).first.click()
    expect(page.get_by_text("beacon-trace-img.png", exact=False).first).to_be_visible()
    assert_nothing_loaded(page)
