"""A lead's jobs in headless Chromium on the demo workspace, with no shell: judge runs (money, the double-run guard,
an API key typed on the page), the label plan's budget slider, the stress probes and a refinement round.

Nothing reaches a real provider: the demo's Python grader (``test-results``) runs in the server, and the
``noisy-llama`` judge (``openai-api/local/...``) talks to a loopback OpenAI-compatible server in this process that
refuses any request without the key the lead types (401). Screenshots go to a temporary folder (printed).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, free_port, stop_ui, wait_until_up
from tests.judges.loopback_server import LoopbackServer
from workbench.calibration.golden_sets import consensus, load_items
from workbench.calibration.rubric_versions import get_rubric
from workbench.features.judging import service as judging
from workbench.features.probes import service as probes
from workbench.store import Store

pytestmark = pytest.mark.browser

GS, RUBRIC = "demo", "demo-patch-quality"
SECRET = "sk-lead-typed-0123456789abcdefXYZ"  # the key the lead types; the loopback server accepts only it
IDLE = """() => { const app = document.querySelector('[data-testid=stApp]');
  const shown = e => !!(e.offsetWidth || e.offsetHeight);
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && ![...document.querySelectorAll('[data-testid=stSkeleton], [data-testid=stSpinner]')].some(shown); }"""


class Jobs:
    def __init__(self, server: Server, loopback: LoopbackServer, tmp: Path, shots: Path):
        self.server, self.loopback, self.tmp, self.shots = server, loopback, tmp, shots
        self.log = tmp / "ui.log"
        self.keys_file = tmp / "config" / "workbench" / "keys.toml"


@pytest.fixture(scope="module")
def jobs_server(demo_db_template: Path, tmp_path_factory, chromium_path):
    """One `workbench ui` on a copy of the demo database, its HOME and config folder private, the URL of the
    loopback server set for `noisy-llama` but not its key (the lead types it)."""
    tmp = tmp_path_factory.mktemp("jobs")
    shots = tmp_path_factory.mktemp("jobs-screenshots")
    db = tmp / "jobs.db"
    shutil.copy(demo_db_template, db)
    (tmp / "home").mkdir()
    with LoopbackServer(api_key=SECRET, latency=0.1) as loopback:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(WORKBENCH_DB=str(db), HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "config"),
                   LOCAL_BASE_URL=loopback.base_url)
        port = free_port()
        cmd = [sys.executable, "-c", "from workbench.cli import main; main()", "--db", str(db), "ui", "--port",
               str(port)]
        with (tmp / "ui.log").open("w") as out:
            proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        server = Server(f"http://127.0.0.1:{port}", db, proc)
        try:
            wait_until_up(server.url, proc, tmp / "ui.log")
            yield Jobs(server, loopback, tmp, shots)
        finally:
            stop_ui(proc)
            print(f"\nscreenshots of the lead's jobs: {shots}")


def settle(page: Page) -> None:
    page.wait_for_function(IDLE, timeout=60_000)


def open_page(jobs: Jobs, page: Page, path: str, judge: str) -> None:
    page.goto(f"{jobs.server.url}/{path}?rater=lead")
    settle(page)
    box = page.locator("[data-testid=stSelectbox]").filter(has=page.get_by_text("Judge", exact=True))
    box.click()
    page.get_by_role("option", name=judge, exact=True).click()
    expect(page.get_by_role("combobox", name="Judge")).to_have_value(judge)
    time.sleep(0.3)  # the rerun the choice starts: let it begin before waiting for the page to be idle
    settle(page)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def runs(db: Path, judge: str) -> list[dict]:
    with Store(db) as s:
        return judging.run_status(s, GS, RUBRIC, judge)["runs"]


def wait_for(predicate, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)  # polling the database the job commits to
    raise AssertionError(f"{what} did not happen within {timeout} s")


def money(text: str, word: str) -> float:
    """The amount after 'about' or 'recorded' in the page's cost line."""
    found = re.search(rf"{word} \$([0-9,.]+)", text)
    assert found, f"no '{word} $' amount in: {text[:400]}"
    return float(found.group(1).replace(",", ""))


def test_the_approved_judge_is_exported_from_the_page_as_a_bundle_check_accepts(jobs_server, browser):
    """The last step of a lead's way without a shell: on the Export page the one passing pair's button writes the
    approved bundle into the workspace, and `workbench check` accepts it (unedited, same judge and golden set)."""
    jobs = jobs_server
    bundle = jobs.tmp / "rubrics" / "approved" / "demo-patch-quality@v1--careful-sonnet.yaml"
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        page.goto(f"{jobs.server.url}/export?rater=lead")
        settle(page)
        expect(page.get_by_text("Use careful-sonnet to grade demo-patch-quality: yes.")).to_be_visible()
        failing = page.locator(".st-key-export-lenient-mini button")  # a failing pair's button is off
        assert failing.count() >= 1 and failing.evaluate_all("bs => bs.every(b => b.disabled)")
        assert not bundle.exists()
        page.locator(".st-key-export-careful-sonnet button").click()
        expect(page.get_by_text(re.compile(r"Exported demo-patch-quality@v1--careful-sonnet\.yaml \(sha256 "))
               ).to_be_visible(timeout=60_000)
        settle(page)
        expect(page.get_by_text("demo-patch-quality@v1--careful-sonnet.yaml —", exact=False)).to_be_visible()
        page.screenshot(path=str(jobs.shots / "exported.png"), full_page=True)
    finally:
        context.close()
    assert bundle.is_file()
    checked = subprocess.run([sys.executable, "-c", "from workbench.cli import main; main()", "--db",
                              str(jobs.server.db), "check", str(bundle)], capture_output=True, text=True,
                             cwd=jobs.tmp, env={**os.environ, "HOME": str(jobs.tmp / "home")})
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_judge_runs_money_double_run_guard_and_api_key(jobs_server, browser):
    jobs = jobs_server
    db = jobs.server.db
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        # Money: the estimated cost for this run beside the recorded cost of the last run, from the database
        open_page(jobs, page, "judges", "lenient-mini")
        line = page.get_by_text(re.compile(r"^Cost of (this|a new) run")).first
        expect(line).to_be_visible()
        text = line.inner_text()
        assert "recorded $" in text and "run-1" in text
        with Store(db) as s:
            check = judging.cost_check(s, GS, RUBRIC, "lenient-mini")
            recorded = judging.run_status(s, GS, RUBRIC, "lenient-mini")["cost_usd"]
        assert money(text, "recorded") == pytest.approx(recorded, abs=1e-4)
        # an estimate over the same 150 judgments as the recorded run: within 25% of what it cost
        assert abs(check.estimated_usd / recorded - 1) <= 0.25
        expect(page.get_by_text(re.compile(r"Estimated for the same 150 judgments: .* within 25% of the recorded"))
               ).to_be_visible()
        page.screenshot(path=str(jobs.shots / "judges-money.png"), full_page=True)
        # an agentic judge's estimate is far from what it recorded: the page says so, and why
        open_page(jobs, page, "judges", "careful-sonnet")
        expect(page.get_by_text(re.compile(r"not within 25%: .*agentic judge calls its tools"))).to_be_visible()

        # A judge run started by a button, on the demo's Python grader (no key, no network)
        open_page(jobs, page, "judges", "test-results")
        expect(page.get_by_text("no run of this judge has judgments", exact=False)).to_be_visible()
        start = page.locator(".st-key-judges-start button").first  # (a second, hidden copy carries its tooltip)
        new_run = page.locator(".st-key-judges-new label")
        start.click()
        wait_for(lambda: runs(db, "test-results") and runs(db, "test-results")[-1]["status"] == "done",
                 "the test-results run")
        expect(page.get_by_text(re.compile(r"Run `?run-1`?: 150 judgments recorded"))).to_be_visible(timeout=30_000)

        # The double-run guard: on the finished run, Start is off until "new run" is ticked, and one click of Start
        # then only asks for a confirmation
        settle(page)
        expect(start).to_be_disabled()
        new_run.click()
        settle(page)
        expect(start).to_be_enabled()
        before = runs(db, "test-results")
        start.click()
        settle(page)
        expect(page.get_by_text("Confirm before it starts", exact=False)).to_be_visible()
        time.sleep(1.5)  # a run started by that click would have recorded its first judgments by now
        assert runs(db, "test-results") == before, "one click of Start on a finished run started a run"
        page.screenshot(path=str(jobs.shots / "judges-confirm.png"), full_page=True)
        page.get_by_role("button", name="Cancel").click()
        settle(page)
        assert runs(db, "test-results") == before

        # The API key field: noisy-llama's server needs LOCAL_API_KEY, which only the page is given
        open_page(jobs, page, "judges", "noisy-llama")
        expect(page.get_by_text("LOCAL_API_KEY", exact=False).first).to_be_visible()
        page.get_by_label("API key (LOCAL_API_KEY)", exact=True).fill(SECRET)
        page.locator(".st-key-apikey-remember-judges-LOCAL_API_KEY label").click()
        page.get_by_role("button", name="Use this key").click()
        settle(page)
        expect(page.get_by_text(re.compile(r"reads its API key from .*LOCAL_API_KEY"))).to_be_visible()
        assert SECRET not in page.evaluate("document.body.textContent")
        assert stat.S_IMODE(jobs.keys_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(jobs.keys_file.parent.stat().st_mode) == 0o700
        assert SECRET in jobs.keys_file.read_text()

        # A long run: progress shows, the lead leaves for another page and comes back to the same run
        new_run.click()
        settle(page)
        start.click()
        settle(page)
        page.get_by_role("button", name="Confirm: start the new run").click()
        expect(page.get_by_text(re.compile(r"^\d+ of 450 judgments · \$"))).to_be_visible(timeout=30_000)
        page.screenshot(path=str(jobs.shots / "judges-progress.png"), full_page=True)
        page.goto(f"{jobs.server.url}/overview?rater=lead")
        settle(page)
        open_page(jobs, page, "judges", "noisy-llama")
        expect(page.get_by_text(re.compile(r"^\d+ of 450 judgments · \$|Run `?run-3`?: 450 judgments recorded"))
               ).to_be_visible(timeout=30_000)
        wait_for(lambda: runs(db, "noisy-llama")[-1] == {"name": "run-3", "source": "run", "status": "done",
                                                          "judgments": 450}, "the noisy-llama run")
        expect(page.get_by_text(re.compile(r"Run `?run-3`?: 450 judgments recorded"))).to_be_visible(timeout=30_000)
        assert jobs.loopback.requests >= 450 and sum(jobs.loopback.answered.values()) == 450  # every one with the key
    finally:
        context.close()

    # The key is nowhere but the owner-only key file: not the database, the server's log, or an export
    export = jobs.tmp / "export"
    subprocess.run([sys.executable, "-c", "from workbench.cli import main; main()", "--db", str(db), "golden-set",
                    "export", GS, "--out", str(export)], check=True, capture_output=True, cwd=jobs.tmp,
                   env={**os.environ, "HOME": str(jobs.tmp / "home")})
    written = [p for p in [*db.parent.glob("jobs.db*"), jobs.log, *export.rglob("*")] if p.is_file()]
    assert len(written) >= 3
    holding = [p for p in written if SECRET.encode() in p.read_bytes() or SECRET[-16:].encode() in p.read_bytes()]
    assert holding == []


def test_plan_probes_and_a_refinement_round_accepted_and_rejected(jobs_server, browser):
    jobs = jobs_server
    db = jobs.server.db
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refine"))
    from scripted import ScriptedJudge, ScriptedOptimizer, fix_leniency

    from workbench.features.refine import service as refine

    def prepare() -> int:  # the judge the probes stress has a run; two rounds are proposed beforehand, scripted
        with Store(db) as s:
            if not judging.run_status(s, GS, RUBRIC, "test-results")["runs"]:
                judging.run(s, GS, RUBRIC, "test-results")
            for judge in ("lenient-mini", "gpt4o-self"):
                scripted = ScriptedJudge(load_items(s, GS), consensus(s, GS, RUBRIC).resolved)
                rounds = refine.refine(s, GS, RUBRIC, judge, optimizer="openai/gpt-4o", rounds=1, resamples=300,
                                       provider_options=scripted.options(),
                                       optimizer_options=ScriptedOptimizer(fix_leniency).options()).rounds
                assert [r.status for r in rounds] == ["proposed"]
            return get_rubric(s, RUBRIC).version

    with ThreadPoolExecutor(1) as pool:  # asyncio.run, beside Playwright's event loop in this thread
        versions = pool.submit(prepare).result()

    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    try:
        # The label plan with a budget slider: the widths that many labels would give, and which items, and why
        open_page(jobs, page, "calibration", "lenient-mini")
        expect(page.get_by_text("Labels to a decision.", exact=False)).to_be_visible(timeout=30_000)
        page.locator("label").filter(has_text="Plan a labeling budget").click()
        expect(page.get_by_role("switch", name=re.compile("Plan a labeling budget"))).to_be_checked()
        settle(page)
        expect(page.get_by_text(re.compile(r"With 40 more labels"))).to_be_visible(timeout=30_000)
        expect(page.get_by_text(re.compile(r"Which items: the active queue would serve these \d+ items"))
               ).to_be_visible()
        slider = page.get_by_role("slider")
        slider.focus()
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        settle(page)
        expect(page.get_by_text(re.compile(r"With 60 more labels"))).to_be_visible()
        page.screenshot(path=str(jobs.shots / "plan.png"), full_page=True)

        # The stress probes: started on the Robustness tab, they finish and the tab shows what they found
        open_page(jobs, page, "calibration", "test-results")
        page.get_by_role("tab", name="Robustness").click()
        settle(page)
        page.get_by_role("button", name="Run the stress probes").click()
        expect(page.get_by_text(re.compile(r"Stress probes finished: \d+ probe runs"))).to_be_visible(timeout=90_000)
        settle(page)
        expect(page.get_by_text("Each probe perturbs the items", exact=False)).to_be_visible()
        with Store(db) as s:
            assert probes.estimate(s, GS, RUBRIC, "test-results").n_to_run == 0
        page.screenshot(path=str(jobs.shots / "probes.png"), full_page=True)

        # A refinement round started from the page (few-shot on the Python grader: nothing to pay, no network)
        open_page(jobs, page, "refine", "test-results")
        page.get_by_role("button", name="Start the round").click()
        expect(page.get_by_text(re.compile(r"Session \d+: nothing spent; round 1 is"))).to_be_visible(timeout=90_000)
        with Store(db) as s:
            assert get_rubric(s, RUBRIC).version == versions  # a rejected or failed round adds no version

        # Accept: the proposed rubric becomes the rubric's next version
        open_page(jobs, page, "refine", "lenient-mini")
        page.get_by_role("button", name="Accept as the rubric's next version").click()
        expect(page.get_by_text(re.compile(rf"version {versions + 1} added"))).to_be_visible(timeout=30_000)
        with Store(db) as s:
            assert get_rubric(s, RUBRIC).version == versions + 1
        page.screenshot(path=str(jobs.shots / "refine-accepted.png"), full_page=True)

        # Reject: the decision is recorded, the rubric is unchanged
        open_page(jobs, page, "refine", "gpt4o-self")
        page.get_by_role("button", name="Reject (discard this round)").click()
        expect(page.get_by_text("Round discarded: the rubric is unchanged.")).to_be_visible(timeout=30_000)
        with Store(db) as s:
            assert get_rubric(s, RUBRIC).version == versions + 1
            [h] = [h for h in refine.rounds_of(s, GS, RUBRIC) if h.session.judge_id == "gpt4o-self"]
            assert [(r.status, r.decided_by) for r in h.rounds] == [("discarded", "lead")]
        expect(page.locator("[data-testid='stException']")).to_have_count(0)
    finally:
        context.close()
