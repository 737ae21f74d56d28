"""The lead pages read in plain words, in headless Chromium on the demo workspace (issue 33, items 1, 2 and 6).

Each lead page's visible text is collected and checked: the verdict sentences are those built from
``workbench calibrate --json`` (run as a subprocess on a copy of the server's database), every statistical
abbreviation shown has a glossary entry that the Glossary page shows, no sentence of 30+ characters appears twice,
no mark stands without its word, and every number (st.metric) has a tooltip. Navigation: unknown addresses open
Home; no Deploy button or developer menu. Screenshots are kept in a temporary folder (its path is printed).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from workbench.calibration.presentation import unavailable_sentence, use_sentence
from workbench.calibration.report import CalibrationReport
from workbench.ui import glossary
from workbench.ui.components import STATUS_WORDS

pytestmark = pytest.mark.browser

GS, RUBRIC = "demo", "demo-patch-quality"
JUDGES = ("careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama", "test-results")
#: Statistical names a page might show, spelled as pages spell them; each one found on a page needs a glossary term.
KNOWN = ("BCa", "AC2", "Gwet", "Krippendorff", "alpha", "kappa", "pass^k", "TPR", "TNR", "Kish", "PPI", "MDE", "ICC",
         "CI", "Wilson", "Stuart-Maxwell", "Benjamini-Yekutieli", "OLS", "epsilon", "Clopper-Pearson", "p-value",
         "flip rate", "Spearman", "bootstrap", "design effect", "self-preference", "coverage", "winning rate")
#: Capitalised tokens that are not statistics (units, formats, model and product names in the demo).
NOT_STATISTICS = {"USD", "API", "JSON", "JSONL", "NDJSON", "CSV", "URL", "LLM", "AI", "CLI", "ID", "OK", "YAML", "I",
                  "FILE", "FILES", "NAME", "RUN_FILES", "BUNDLE", "KEY"}  # and a command's placeholders
#: The other lead pages (url path, title): read for names, marks and, where no item text is shown, repeats.
OTHER_PAGES = (("judges", "Judges"), ("refine", "Refine"), ("board", "Board"), ("monitoring", "Monitoring"),
               ("adjudicate", "Adjudicate"), ("import", "Import"), ("blind-review", "Blind review"))
SHOW_ITEMS = {"adjudicate", "blind-review"}  # item text (tasks, outputs) may repeat there: it is data, not words
FINISHED = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const shown = e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  return ![...document.querySelectorAll('[data-testid=stSkeleton], [data-testid=stSpinner]')].some(shown);
}"""
EMOJI = re.compile("[\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]\ufe0f?")


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plain-words")
    yield folder
    print(f"\nscreenshots of the lead pages in plain words: {folder}")


@pytest.fixture(scope="module")
def cli_reports(ui_server, tmp_path_factory):
    """``workbench calibrate --json`` of each judge on a copy of the server's database: (report or None, stderr)."""
    server, _ = ui_server
    copy = tmp_path_factory.mktemp("cli") / "copy.db"
    shutil.copy(server.db, copy)
    out = {}
    for judge in JUDGES:
        proc = subprocess.run([sys.executable, "-m", "workbench", "--db", str(copy), "calibrate", "-g", GS, "-r",
                               RUBRIC, "-j", judge, "--json"], capture_output=True, text=True, timeout=300)
        out[judge] = (CalibrationReport.from_json(json.loads(proc.stdout)) if proc.returncode == 0 else None,
                      proc.stderr)
    proc = subprocess.run([sys.executable, "-m", "workbench", "--db", str(copy), "calibrate", "-g", GS, "-r", RUBRIC,
                           "-j", "careful-sonnet", "--selective", "--target-agreement", "0.9", "--risk", "0.1",
                           "--json"], capture_output=True, text=True, timeout=300)
    out["selective"] = (json.loads(proc.stdout)["selective"], proc.stderr)
    return out


def settle(page) -> None:
    page.wait_for_function(FINISHED, timeout=120_000, polling=50)


def main_text(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line) if s.strip()]
    return out


def check_plain_words(name: str, text: str, glossary_text: str, *, repeats: bool = True) -> None:
    names = {n: t for t in glossary.TERMS for n in t.names}
    for word in KNOWN:  # (a) every statistical name shown has a glossary entry, and the Glossary page shows it
        if re.search(rf"(?<![\w^-]){re.escape(word)}(?![\w^-])", text):
            assert word in names, f"{name}: '{word}' is shown but has no glossary entry"
            assert names[word].label in glossary_text, f"the Glossary page lacks '{names[word].label}'"
    for token in set(re.findall(r"(?<![\w'-])[A-Z][A-Z0-9^]+(?![\w'-])", text)) - NOT_STATISTICS:
        assert token in names, f"{name}: the abbreviation '{token}' has no glossary entry"
    long = [s for s in sentences(text) if len(s) >= 30] if repeats else []  # (b) nothing said twice
    assert not [s for s in set(long) if long.count(s) > 1], f"{name} repeats a sentence"
    words = tuple(STATUS_WORDS.values()) + ("calibrated", "not calibrated", "yes", "no")
    for m in EMOJI.finditer(text):  # (c) a mark comes with its word
        after = text[m.end():].lstrip()
        assert re.match(r"[A-Za-z0-9]", after), f"{name}: '{m.group()}' stands alone ({after[:40]!r})"
        if m.group().rstrip("\ufe0f") in "✅❌⏳➖":
            assert after.lower().startswith(words), f"{name}: '{m.group()}' without its word ({after[:40]!r})"


def test_lead_pages_open_with_the_gates_verdict_in_plain_words(ui_server, browser, shots, cli_reports):
    server, _ = ui_server
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/glossary?rater=lead")
        expect(page.get_by_role("heading", name="Glossary")).to_be_visible(timeout=60_000)
        settle(page)
        glossary_text = main_text(page)
        for t in glossary.TERMS:  # every entry: its label and at least one full sentence
            assert t.label in glossary_text and re.search(r"[A-Z][^.]{20,}\.", t.meaning), t.key

        # (d) the sentences the pages open with are the gate's, built from `calibrate --json` on the same data
        expected = {}
        for judge in JUDGES:
            rep, _ = cli_reports[judge]
            expected[judge] = use_sentence(rep) if rep else None
        assert expected["careful-sonnet"] == f"Use careful-sonnet to grade {RUBRIC}: yes."
        assert expected["noisy-llama"].startswith(f"Use noisy-llama to grade {RUBRIC}: no — ")
        assert expected["test-results"] is None and "no judgments" in cli_reports["test-results"][1]
        pages = {}
        for path, heading in (("compare", "Compare judges"), ("export", "Export approved rubrics"),
                              ("calibration", "Calibration"), ("drift", "Drift"), ("overview", "Judge Workbench")):
            page.get_by_role("link", name={"overview": "Home"}.get(path, heading.split()[0])).first.click()
            expect(page.get_by_role("heading", name=heading).first).to_be_visible(timeout=60_000)
            settle(page)
            pages[path] = main_text(page)
            page.screenshot(path=str(shots / f"{path}.png"), full_page=True)
            expect(page.locator("[data-testid='stException']")).to_have_count(0)
        for path in ("compare", "export"):  # every judge's sentence, before any table
            text = pages[path]
            for judge in JUDGES:
                said = expected[judge] or unavailable_sentence(judge, RUBRIC, f"judge '{judge}' has no judgments on "
                                                                              f"golden set '{GS}'")
                assert said in text, (path, said)
                assert text.index(said) < text.index("Cost against agreement" if path == "compare" else "Export\n")
        assert pages["calibration"].index(expected["careful-sonnet"]) < pages["calibration"].index("Agreement")
        assert expected["noisy-llama"] in pages["drift"]  # the drift page opens on the judge with two runs

        # the Calibration page's tabs, one after the other (the Disagreements tab shows item text: not read here)
        texts = dict(pages)
        page.get_by_role("link", name="Calibration").first.click()
        for tab, marker in (("Humans", "How well the reviewers agree"), ("Self-preference", "Self-preference"),
                            ("Noise & drift", "Score changes between repeats"), ("Robustness", "probe"),
                            ("Confidence", "coverage against agreement")):
            page.get_by_role("tab", name=tab).click()
            expect(page.get_by_role("tabpanel").get_by_text(marker).first).to_be_visible(timeout=60_000)
            settle(page)
            texts[f"calibration/{tab}"] = main_text(page)
            page.screenshot(path=str(shots / f"calibration-{tab.replace(' ', '')}.png"), full_page=True)
            metrics = page.locator("[data-testid=stMetric]")
            assert page.locator("[data-testid=stMetric] [data-testid=stTooltipIcon]").count() == metrics.count()
        assert page.locator("[data-testid=stVegaLiteChart]").count() >= 1  # the coverage-agreement curve
        selective, _ = cli_reports["selective"]  # the guarantee's sentence is the CLI's (markdown shows >= as ≥)
        assert selective["sentence"].replace(">=", "≥") in texts["calibration/Confidence"]
        for path, title in OTHER_PAGES:
            page.get_by_role("link", name=title).first.click()
            expect(page.get_by_role("heading", name=title).first).to_be_visible(timeout=60_000)
            settle(page)
            texts[path] = main_text(page)
            page.screenshot(path=str(shots / f"{path}.png"), full_page=True)
        for name, text in texts.items():
            check_plain_words(name, text, glossary_text, repeats=name not in SHOW_ITEMS)
        assert "krippendorff_alpha_ordinal" not in texts["calibration"] + texts["drift"]  # the charts' words too

        # a judge without confidence says so in one sentence instead of drawing a curve
        page.get_by_role("link", name="Calibration").first.click()
        settle(page)
        page.get_by_role("tab", name="Confidence").click()
        page.get_by_label("Judge").first.click()
        page.get_by_role("option", name="lenient-mini").click()
        expect(page.get_by_text("gives no confidence with its grades")).to_be_visible(timeout=60_000)
        assert expected["lenient-mini"] in main_text(page)
    finally:
        context.close()


def test_unknown_addresses_open_home_and_users_get_no_developer_menu(ui_server, browser, shots):
    server, _ = ui_server
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        for path in ("overview", "no-such-page"):  # (a nested address, /a/b, is left to Streamlit: a blank page)
            page.goto(f"{server.url}/{path}?rater=lead")
            try:
                expect(page.get_by_role("heading", name="Judge Workbench")).to_be_visible(timeout=60_000)
            except AssertionError:
                page.screenshot(path=str(shots / f"failed-{path.replace('/', '-')}.png"))
                raise
            settle(page)
            expect(page.get_by_text("Page not found")).to_have_count(0)
            assert page.url.split("?")[0].rstrip("/") == server.url, page.url
            assert "rater=lead" in page.url  # the identity and the pickers' choices stay in the address
        page.goto(f"{server.url}/calibration?rater=lead")
        expect(page.get_by_role("heading", name="Calibration")).to_be_visible(timeout=60_000)
        settle(page)
        page.screenshot(path=str(shots / "toolbar.png"))
        for testid in ("stAppDeployButton", "stMainMenu", "stMainMenuButton"):
            expect(page.locator(f"[data-testid={testid}]")).to_have_count(0)
        expect(page.get_by_text("Deploy", exact=True)).to_have_count(0)
        # a page of another role is not run (an address is no way around the roles): home, told why
        page.goto(f"{server.url}/calibration?rater=dora")
        expect(page.get_by_text("The Calibration page is for leads and admins, and you are signed in as reviewer "
                                "'dora'")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Calibration")).to_have_count(0)
    finally:
        context.close()
