"""Lead pages on the demo database: the planted problems are visible where a lead would look."""

from __future__ import annotations

import re

import pytest

from tests.ui.conftest import LEAD_PAGES, choose_judge, lead_page, markdown, open_app, open_tab, rendered_text
from workbench.store import Store


def test_calibration_shows_the_verdict_of_the_trustworthy_judge(demo_db):
    at = choose_judge(lead_page("calibration"), "careful-sonnet")
    assert at.success[0].value.startswith("**Use careful-sonnet to grade demo-patch-quality: yes.**")
    assert "Calibrated: every deciding check passed" in at.success[0].value
    assert "noise floor" in " ".join(i.value for i in at.info).lower()


def test_lenient_judge_shows_a_positive_signed_error(demo_db):
    at = choose_judge(lead_page("calibration"), "lenient-mini")
    assert at.error[0].value.startswith("**Use lenient-mini to grade demo-patch-quality: no — ")
    assert "Not calibrated: " in at.error[0].value and "agreement" in at.error[0].value
    assert "the judge is **lenient**" in markdown(at)


def test_self_preferring_judge_shows_its_family_effect(demo_db):
    at = open_tab(choose_judge(lead_page("calibration"), "gpt4o-self"), "Self-preference")
    text = markdown(at)
    assert "scores its own family (openai) 0.59 higher than humans do" in text
    sp = [df.value for df in at.dataframe if "effect" in df.value.columns][0]
    fam = sp[sp["effect"] == "same family"].iloc[0]
    assert fam["95% low"] > 0.1


def test_drifting_judge_second_run_is_flagged(demo_db):
    at = choose_judge(lead_page("drift"), "noisy-llama")
    assert any("run `run-2`" in e.value and "Recalibrate" in e.value for e in at.error)
    table = at.dataframe[0].value
    assert list(table["moved"].fillna("")) == ["", "yes"]
    assert table["model version"].iloc[1] == "llama-3.1-70b-instruct-q4-2025-03"


def test_compare_lists_every_judge_with_its_verdict(demo_db):
    at = lead_page("compare")
    table = at.dataframe[0].value
    verdicts = dict(zip(table["judge"], table["verdict"]))
    assert verdicts == {"careful-sonnet": "calibrated", "lenient-mini": "not calibrated",
                        "gpt4o-self": "not calibrated", "noisy-llama": "not calibrated"}
    # each verdict with the numbers behind it
    assert re.search(r"- `lenient-mini` \(`openai/gpt-4o-mini`, single, median latency [\d.]+ s\): Not calibrated: it "
                     r"fails as good as a human \(Judge-human agreement 0\.59 against human-human 0\.80 on 140 items",
                     markdown(at))
    diffs = at.dataframe[1].value
    assert set(diffs["significant"]) == {"yes"}


def test_disagreement_browser_opens_an_item_with_evidence(demo_db):
    at = open_tab(choose_judge(lead_page("calibration"), "careful-sonnet"), "Disagreements")
    text = rendered_text(at)
    assert "Agentic judge" in text and "cited by the judge" in text


def test_export_enabled_only_for_the_passing_pair(demo_db, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_APPROVED_DIR", str(tmp_path / "approved"))
    at = lead_page("export")
    buttons = {b.key: b for b in at.button if b.key and b.key.startswith("export-")}
    assert {k for k, b in buttons.items() if not b.disabled} == {"export-careful-sonnet"}
    buttons["export-careful-sonnet"].click().run(timeout=60)
    assert "Exported demo-patch-quality@v1--careful-sonnet.yaml" in at.success[0].value
    assert (tmp_path / "approved" / "demo-patch-quality@v1--careful-sonnet.yaml").exists()
    assert "Unsigned: run 'workbench keys init' once" in at.success[0].value  # the page says it, as the CLI does


def test_export_page_says_which_key_signed_the_bundle(demo_db, tmp_path, monkeypatch):
    from workbench.features.export.signing import generate_key_pair

    key = generate_key_pair(tmp_path / "keys" / "team.key")
    monkeypatch.setenv("WORKBENCH_SIGNING_KEY", (tmp_path / "keys" / "team.key").read_text())
    monkeypatch.setenv("WORKBENCH_APPROVED_DIR", str(tmp_path / "approved"))
    at = lead_page("export")
    at.button(key="export-careful-sonnet").click().run(timeout=60)
    assert f"signed with key {key.key_id}" in at.success[0].value
    assert "PRIVATE KEY" not in at.success[0].value


def test_judges_page_agrees_with_the_run_state(demo_db, monkeypatch):
    """An imported run that holds every judgment has nothing left to do: no estimate inviting a lead to pay twice."""
    at = lead_page("judges")  # careful-sonnet: run-1 imported, 300 judgments
    [done] = [s.value for s in at.success if "Nothing left to run" in s.value]
    assert "the current run `run-1` (imported) holds all 300 judgments" in done
    assert "To measure drift, tick “Start a new run”: 300 judgments, about \\$" in done
    assert not at.info and at.button(key="judges-start").disabled
    assert any("Current run `run-1`: 300 judgments" in c.value for c in at.caption)
    at.checkbox(key="judges-new").check().run(timeout=60)
    assert "(a new run): 300 of 300 judgments to run (0 already done)" in at.info[0].value
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at.run(timeout=60)
    start = at.button(key="judges-start")  # no key: the button is off and says what is missing
    assert start.disabled and start.label == "Start the new run: enter ANTHROPIC_API_KEY first"
    assert [t.label for t in at.text_input] == ["API key (ANTHROPIC_API_KEY)"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    at.run(timeout=60)
    assert not at.button(key="judges-start").disabled and at.button(key="judges-start").label == "Start the new run"


def test_judges_page_never_shows_an_unknown_cost_as_zero(demo_db):
    at = choose_judge(lead_page("judges"), "test-results")  # never run: the python grader
    assert "No runs yet." in [c.value for c in at.caption]
    from workbench.core.scale import fmt_usd

    assert fmt_usd(None) == "unknown" and fmt_usd(0.0) == "$0.00" and fmt_usd(1234.5) == "$1,234.50"
    with Store(demo_db) as s:  # judgments imported without a price
        s.conn.execute("UPDATE judgments SET cost_usd = NULL")
        s.conn.commit()
    at = choose_judge(lead_page("judges"), "lenient-mini")
    [line] = [c.value for c in at.caption if c.value.startswith("Current run")]
    assert "unknown (no price recorded) recorded cost" in line and "$0.00" not in line


@pytest.mark.parametrize("page", sorted(LEAD_PAGES))
def test_reviewers_cannot_reach_lead_pages(demo_db, page):
    at = open_app("ana")
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(LEAD_PAGES[page])


def test_home_shows_judge_counts_to_leads_only(demo_db):
    assert "judgments" not in open_app("ana").dataframe[0].value.columns
    assert "judgments" in open_app("lead").dataframe[0].value.columns
    assert "synthetic demo" in open_app("ana").warning[0].value


def test_a_policys_selective_section_is_judged_on_the_pages_and_carried_by_the_page_export(demo_db, tmp_path,
                                                                                           monkeypatch):
    """A rubric whose policy asks for a selective guarantee: the Export page's verdict holds the gate's selective
    check (as `workbench calibrate` shows it) and its Export writes the bundle's selective section, as
    `workbench export` does; a target the labels cannot show holds the export back."""
    import yaml

    from tests.conftest import write

    monkeypatch.setenv("WORKBENCH_PROJECT", str(tmp_path))
    monkeypatch.setenv("WORKBENCH_APPROVED_DIR", str(tmp_path / "approved"))
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.85, risk: 0.1}\n")
    at = lead_page("export")
    assert "selective guarantee" in rendered_text(at) or "Keeping items with confidence" in rendered_text(at)
    at.button(key="export-careful-sonnet").click().run(timeout=60)
    assert at.success, [e.value for e in at.error]
    assert "Exported demo-patch-quality@v1--careful-sonnet.yaml" in at.success[0].value
    bundle = yaml.safe_load((tmp_path / "approved" / "demo-patch-quality@v1--careful-sonnet.yaml").read_text())
    assert bundle["policy"]["selective"] == {"target_agreement": 0.85, "risk": 0.1}
    assert bundle["verdict"]["checks"][-1]["id"] == "selective" and bundle["selective"]["threshold"] is not None
    # a target beyond these labels: the check is undecided, so the page offers no export
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.99, risk: 0.1}\n")
    at = lead_page("export")
    assert at.button(key="export-careful-sonnet").disabled
    assert "selective guarantee" in rendered_text(at)


def test_reviewers_page_shows_the_raters_report_with_its_sentences_first(demo_db):
    """The page's rows and sentences are the raters report's (``workbench rater report``) on the demo."""
    from workbench.features.people.report import raters_report

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_reviewers_page, default_timeout=120)
    at.query_params["rater"] = "lead"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    with Store(demo_db) as s:
        gs = s.conn.execute("SELECT name FROM golden_sets ORDER BY name").fetchone()[0]
        rubric = s.conn.execute("SELECT name FROM rubrics ORDER BY name").fetchone()[0]
        report = raters_report(s, gs, rubric)
    table = at.dataframe[0].value
    assert list(table["reviewer"]) == [r.name for r in report.reviewers]
    assert list(table["labels"]) == [r.n_labels for r in report.reviewers]
    shown = [w.value for w in at.warning] + [x.value for x in at.success]
    assert len(shown) >= 1 and all(any(f[:60] in w for w in shown) for f in report.findings)
    assert "Gold items." in markdown(at) and "Assignments." in markdown(at)


def _reviewers_page() -> None:
    """The Reviewers page as app.py's router runs it (ROUTER_KEY set around it), for the rater of the URL."""
    import streamlit as st

    from workbench.ui import auth
    from workbench.ui.views import team

    st.session_state[auth.ROUTER_KEY] = True
    st.session_state[auth.RATER_KEY] = st.query_params.get("rater")
    team.render()
