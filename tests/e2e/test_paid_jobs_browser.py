"""Paid jobs on a fresh demo in headless Chromium (issue 50 item 1): every page that starts work a provider bills
shows the estimate with its upper bound, keeps Start off while a key is missing (the button says which), offers one
key field per provider, asks before it starts with the same figures, and uses the key typed on the page.

The demo is seeded as `workbench demo --no-ui` seeds it (its boards too) in a private workspace; the server runs
with no *_API_KEY in its environment. ``noisy-llama`` (``openai-api/local/...``) talks to a loopback
OpenAI-compatible server in this process that refuses any request without the key the lead types (401); the other
paid judges (Anthropic, OpenAI) are only confirmed and cancelled, so nothing reaches the network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, free_port, stop_ui, wait_until_up
from tests.e2e.test_lead_jobs_browser import IDLE
from tests.judges.loopback_server import LoopbackServer
from workbench.features.probes import service as probes
from workbench.features.refine import service as refine
from workbench.store import Store

pytestmark = pytest.mark.browser

GS, RUBRIC = "demo", "demo-patch-quality"
LOCAL_KEY = "sk-local-typed-0123456789abcdefXYZ"  # the loopback server accepts only this key
FAKE_KEYS = {"ANTHROPIC_API_KEY": "sk-ant-typed-0123456789abcdefQRS", "OPENAI_API_KEY": "sk-openai-typed-0123456789abcdefUVW"}
CLI = [sys.executable, "-c", "from workbench.cli import main; main()"]


class Demo:
    def __init__(self, server: Server, loopback: LoopbackServer, root: Path, shots: Path):
        self.server, self.loopback, self.root, self.shots = server, loopback, root, shots


@pytest.fixture(scope="module")
def demo(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("paid")
    shots = tmp_path_factory.mktemp("paid-screenshots")
    db = root / "workbench.db"
    (root / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("WORKBENCH_")}
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"))
    subprocess.run([*CLI, "--db", str(db), "--project", str(root), "demo", "--no-ui"], check=True, cwd=root,
                   env=env, capture_output=True, timeout=600)
    with LoopbackServer(api_key=LOCAL_KEY, latency=0.0) as loopback:
        port = free_port()
        with (root / "ui.log").open("w") as out:
            proc = subprocess.Popen([*CLI, "--db", str(db), "--project", str(root), "ui", "--port", str(port)],
                                    env={**env, "LOCAL_BASE_URL": loopback.base_url}, cwd=root, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        server = Server(f"http://127.0.0.1:{port}", db, proc)
        try:
            wait_until_up(server.url, proc, root / "ui.log")
            yield Demo(server, loopback, root, shots)
        finally:
            stop_ui(proc)
            print(f"\nscreenshots of the paid jobs: {shots}")


def settle(page: Page) -> None:
    page.wait_for_function(IDLE, timeout=60_000)


def open_page(demo: Demo, page: Page, path: str, judge: str) -> None:
    page.goto(f"{demo.server.url}/{path}?rater=lead")
    settle(page)
    page.locator("[data-testid=stSelectbox]").filter(has=page.get_by_text("Judge", exact=True)).click()
    page.get_by_role("option", name=judge, exact=True).click()
    expect(page.get_by_role("combobox", name="Judge")).to_have_value(judge)
    time.sleep(0.3)  # the rerun the choice starts: let it begin before waiting for the page to be idle
    settle(page)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def estimate_of(page: Page) -> str:
    """What the estimate line says a job sends and costs ('1,200 judgments over 8 probes, unknown ...')."""
    text = page.locator("[data-testid=stMarkdown]").filter(has_text=re.compile(r"^Estimate: ")).last.inner_text()
    return text.removeprefix("Estimate: ").rstrip(".")


def confirmation_of(page: Page, label: str) -> str:
    text = page.locator("[data-testid=stAlert]").filter(has_text="Confirm before it starts").inner_text().strip()
    found = re.search(rf"{re.escape(label)} sends (.*)\.$", text)
    assert found, text
    return found.group(1)


def in_no_file(demo: Demo, key: str) -> None:
    """A key typed on a page (session only, not remembered) is in no file of the workspace: not the database, the
    server's log or anything the demo wrote."""
    files = [p for p in demo.root.rglob("*") if p.is_file()]
    assert any(p.name == "workbench.db" for p in files) and any(p.name == "ui.log" for p in files)
    assert [p for p in files if key.encode() in p.read_bytes() or key[-16:].encode() in p.read_bytes()] == []


def type_key(page: Page, variable: str, value: str) -> None:
    fields = page.get_by_label(re.compile(r"^API key"))
    expect(fields).to_have_count(1)  # one field per provider on the page
    page.get_by_label(f"API key ({variable})", exact=True).fill(value)
    page.get_by_role("button", name="Use this key").click()
    settle(page)
    expect(page.get_by_text(re.compile(rf"reads? (its|their) API key from .*{variable}"))).to_be_visible()


def test_probes_ask_first_and_run_with_the_key_typed_on_the_page(demo, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        open_page(demo, page, "calibration", "noisy-llama")
        page.get_by_role("tab", name="Robustness").click()
        settle(page)
        start = page.locator(".st-key-probes-start button").first
        # no key: Start is off and says what is missing; the page has the field for it
        expect(start).to_have_text("Run the stress probes: enter LOCAL_API_KEY first")
        expect(start).to_be_disabled()
        with Store(demo.server.db) as s:
            e = probes.estimate(s, GS, RUBRIC, "noisy-llama")
        assert estimate_of(page) == f"{e.n_to_run:,} judgments over {len(e.probes)} probes, unknown (no price " \
                                    "for this model)"
        page.screenshot(path=str(demo.shots / "probes-no-key.png"), full_page=True)
        type_key(page, "LOCAL_API_KEY", LOCAL_KEY)
        page.get_by_role("tab", name="Robustness").click()
        expect(start).to_have_text("Run the stress probes")
        start.click()
        settle(page)
        # a click only asks, with the estimate's own figures
        assert confirmation_of(page, "Run the stress probes") == estimate_of(page)
        page.screenshot(path=str(demo.shots / "probes-confirm.png"), full_page=True)
        time.sleep(1.5)  # a job started by that click would have sent its first requests by now
        assert demo.loopback.requests == 0
        page.get_by_role("button", name="Confirm: run the stress probes").click()
        expect(page.get_by_text(re.compile(r"Stress probes finished: \d+ probe runs"))).to_be_visible(
            timeout=120_000)
        # every request carried the key typed on the page (the loopback server refuses any other); a probe with a
        # follow-up question sends two requests a judgment
        assert demo.loopback.requests == sum(demo.loopback.answered.values()) >= e.n_to_run
        with Store(demo.server.db) as s:
            assert probes.estimate(s, GS, RUBRIC, "noisy-llama").n_to_run == 0
        expect(page.locator("[data-testid='stException']")).to_have_count(0)
    finally:
        context.close()
    in_no_file(demo, LOCAL_KEY)


def test_refine_with_an_optimizer_has_one_key_field_and_asks_with_the_estimates_figures(demo, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        open_page(demo, page, "refine", "lenient-mini")  # openai/gpt-4o-mini, optimizer openai/gpt-4o
        page.get_by_text("optimizer", exact=True).click()
        settle(page)
        expect(page.get_by_role("textbox", name="Optimizer model")).to_have_value("openai/gpt-4o")
        start = page.locator(".st-key-refine-start button").first
        expect(page.get_by_text("and 1 optimizer request", exact=False)).to_be_visible()
        expect(start).to_have_text("Start the round: enter OPENAI_API_KEY first")
        expect(start).to_be_disabled()
        figures = estimate_of(page)
        assert re.fullmatch(r"\d+ judge requests and 1 optimizer request, about \$[0-9.]+, at most \$[0-9.]+",
                            figures), figures
        type_key(page, "OPENAI_API_KEY", FAKE_KEYS["OPENAI_API_KEY"])  # the judge and the optimizer share it
        expect(start).to_have_text("Start the round")
        start.click()
        settle(page)
        assert confirmation_of(page, "Start the round") == figures == estimate_of(page)
        expect(page.get_by_role("button", name="Confirm: start the round")).to_be_visible()
        expect(page.get_by_role("button", name="Cancel")).to_be_visible()
        page.screenshot(path=str(demo.shots / "refine-confirm.png"), full_page=True)
        page.get_by_role("button", name="Cancel").click()
        settle(page)
        expect(page.get_by_text("Confirm before it starts", exact=False)).to_have_count(0)
        with Store(demo.server.db) as s:  # cancelled: no session, no round, nothing sent
            assert [h for h in refine.rounds_of(s, GS, RUBRIC) if h.session.judge_id == "lenient-mini"] == []
    finally:
        context.close()
    in_no_file(demo, FAKE_KEYS["OPENAI_API_KEY"])


def test_a_new_judge_run_asks_with_the_same_figures_as_its_cost_line(demo, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        open_page(demo, page, "judges", "careful-sonnet")  # anthropic/...: the demo's run holds every judgment
        page.locator(".st-key-judges-new label").click()
        settle(page)
        start = page.locator(".st-key-judges-start button").first
        expect(start).to_have_text("Start the new run: enter ANTHROPIC_API_KEY first")
        expect(start).to_be_disabled()
        cost_line = page.get_by_text(re.compile(r"^Cost of this run")).inner_text()
        figures = estimate_of(page)
        amounts = re.fullmatch(r"300 judgments, (about \$[0-9.,]+, at most \$[0-9.,]+)", figures)
        assert amounts and f": {amounts.group(1)} ·" in cost_line, (figures, cost_line)
        type_key(page, "ANTHROPIC_API_KEY", FAKE_KEYS["ANTHROPIC_API_KEY"])
        start.click()
        settle(page)
        assert confirmation_of(page, "Start the new run") == figures
        expect(page.get_by_role("button", name="Confirm: start the new run")).to_be_visible()
        page.get_by_role("button", name="Cancel").click()
        settle(page)
        with Store(demo.server.db) as s:
            from workbench.features.judging import service as judging
            assert [r["name"] for r in judging.run_status(s, GS, RUBRIC, "careful-sonnet")["runs"]] == ["run-1"]

        # a free judge's cost reads "free", never $0.0000
        open_page(demo, page, "judges", "test-results")
        expect(page.get_by_text(re.compile(r"^Cost of this run \(150 judgments\): free"))).to_be_visible()
        assert estimate_of(page) == "150 judgments, free"
        assert "$0.0000" not in page.evaluate("document.body.textContent")
    finally:
        context.close()
    in_no_file(demo, FAKE_KEYS["ANTHROPIC_API_KEY"])
