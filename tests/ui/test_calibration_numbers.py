"""The lead pages show the numbers, denominators and sentences of the shared rows (presentation, gate), never
their own: the Calibration page, the Drift page, the Export page and the card agree with ``calibrate --json``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.ui.conftest import choose_judge, lead_page, markdown, open_tab
from workbench.calibration import gate, presentation
from workbench.calibration.report import CalibrationReport
from workbench.calibration import calibrate as calibration, insights
from workbench.store import Store

GS, RUBRIC = "demo", "demo-patch-quality"


def report_of(db, judge: str) -> CalibrationReport:
    with Store(db) as s:
        return calibration.calibrate(s, GS, RUBRIC, judge)


def table_with(at, column: str) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_metric_table_shows_each_proportion_with_its_denominator(demo_db):
    rep = report_of(demo_db, "noisy-llama")
    at = choose_judge(lead_page("calibration"), "noisy-llama")
    from workbench.ui.views.calibration import metric_label

    table = table_with(at, "measure").set_index("measure")  # plain words: 'fails caught (TNR)'
    d = rep.denominators
    assert table.loc["fails caught (TNR)", "n"] == d.n_neg == 46
    assert table.loc["passes caught (TPR)", "n"] == d.n_pos and table.loc["exact agreement", "n"] == d.n_items
    for row in presentation.metric_rows(rep):  # the CLI's and the card's rows, number for number
        assert table.loc[metric_label(row["metric"]), "value"] == pytest.approx(row["value"])
        assert table.loc[metric_label(row["metric"]), "95% low"] == pytest.approx(row["ci_low"])
    assert pd.isna(table.loc[metric_label("cohen_kappa"), "n"])  # not a proportion: no denominator, shown as "–"
    assert {df.proto.placeholder for df in at.dataframe} == {"–"}
    assert f"**{d.n_pos}** consensus passes" in markdown(at) and f"**{d.n_neg}** consensus fails" in markdown(at)
    assert presentation.interval_sentence(rep) in [c.value for c in at.caption]


def test_per_category_table_has_intervals_n_and_the_weak_flag(demo_db):
    rep = report_of(demo_db, "noisy-llama")
    at = choose_judge(lead_page("calibration"), "noisy-llama")
    table = table_with(at, "category").set_index("category")
    rows = presentation.category_rows(rep)
    assert list(table.index) == [r["category"] for r in rows] and len(rows) == 4
    for r in rows:
        assert table.loc[r["category"], "n"] == r["n"]
        assert table.loc[r["category"], "95% low"] == pytest.approx(r["ci_low"])
        assert table.loc[r["category"], "95% high"] == pytest.approx(r["ci_high"])
        assert table.loc[r["category"], "weaker than the rest"] == ("⚠️ yes, weaker" if r["weaker"] else "no")


def test_leniency_sentence_is_the_shared_one(demo_db):
    rep = report_of(demo_db, "lenient-mini")
    at = choose_judge(lead_page("calibration"), "lenient-mini")
    assert presentation.leniency_sentence(rep) in markdown(at)


def test_leniency_is_decided_by_the_gate_rule_not_by_the_page(demo_db, monkeypatch):
    # if the page decided "lenient" itself, flipping the gate's rule would not change what it says
    monkeypatch.setattr(presentation, "leniency", lambda m: "harsh")
    at = choose_judge(lead_page("calibration"), "lenient-mini")
    assert "the judge is **harsh**" in markdown(at) and "**lenient**" not in markdown(at)


def test_calibration_drift_p_value_is_the_gate_format(demo_db):
    rep = report_of(demo_db, "noisy-llama")
    p = rep.drift.stuart_maxwell.p_value
    at = open_tab(choose_judge(lead_page("calibration"), "noisy-llama"), "Noise & drift")
    text = markdown(at)
    assert gate.fmt_p(p) == "3.4e-14" and "Stuart-Maxwell p = 3.4e-14" in text
    assert "0.0000" not in text
    # pass^k names its k
    assert any(m.label == "Always right over 3 repeats (pass^k)" for m in at.metric)


def test_drift_page_opens_on_a_judge_with_two_runs_and_shows_the_same_p(demo_db):
    at = lead_page("drift")  # no judge chosen: the page picks one that has something to compare
    assert [s.value for s in at.selectbox if s.label == "Judge"] == ["noisy-llama"]
    with Store(demo_db) as s:
        rows = insights.drift_timeline(s, GS, RUBRIC, "noisy-llama")
    p = rows[1]["stuart_maxwell_p"]
    assert p == pytest.approx(report_of(demo_db, "noisy-llama").drift.stuart_maxwell.p_value)
    assert list(table_with(at, "run")["score mix changed (p)"].fillna("")) == ["", gate.fmt_p(p)] == ["", "3.4e-14"]
    assert any("Stuart-Maxwell p = 3.4e-14" in e.value for e in at.error)


def test_drift_page_says_why_it_is_empty(demo_db):
    at = choose_judge(lead_page("drift"), "careful-sonnet")
    info = " ".join(i.value for i in at.info)
    assert "has one run so far" in info and "run the judge again" in info
    assert "Judges with two or more runs: `noisy-llama`" in " ".join(c.value for c in at.caption)
    assert not at.get("arrow_vega_lite_chart")  # no one-point chart


def test_alternative_annotator_table_says_what_rejected_means(demo_db):
    rep = report_of(demo_db, "careful-sonnet")
    at = open_tab(choose_judge(lead_page("calibration"), "careful-sonnet"), "Humans")
    table = table_with(at, "rater")
    assert "rejected" not in table.columns
    assert list(table["judge at least as good as this rater"]) == ["yes"] * len(rep.alt_test.raters)
    assert list(table["p (one-sided)"]) == [gate.fmt_p(r.p_value) for r in rep.alt_test.raters]


def test_self_preference_table_formats_the_ols_p_and_explains_missing_effects(demo_db):
    rep = report_of(demo_db, "gpt4o-self")
    at = open_tab(choose_judge(lead_page("calibration"), "gpt4o-self"), "Self-preference")
    table = table_with(at, "effect").set_index("effect")
    assert table.loc["same family", "OLS p"] == gate.fmt_p(rep.self_preference.same_family.p_value)
    at = open_tab(choose_judge(at, "careful-sonnet"), "Self-preference")
    assert "no item was produced by the judge's own model" in markdown(at)


def test_export_page_lists_the_failed_checks_one_per_line(demo_db):
    rep = report_of(demo_db, "noisy-llama")
    at = lead_page("export")
    blocking = [c for c in rep.verdict.checks if c.blocking]  # failed, and not decided yet (TNR: below 0.5, not
    # yet beyond doubt)
    [block] = [m.value for m in at.markdown if "no drift" in m.value and m.value.startswith("- ")]
    items = [line for line in block.splitlines() if line.startswith("- ")]
    assert [line.split("**")[1] for line in items] == [c.name for c in blocking] and len(items) == 5
    assert [c.status for c in blocking].count("undecided") == 1
    assert "⏳ not decided yet — **passes and fails**" in block  # a mark never without its word
    assert "Stuart-Maxwell p = 3.4e-14" in block


def test_compare_cost_unknown_is_never_zero(demo_db):
    from workbench.features.export import charts
    from workbench.core.scale import fmt_usd

    assert fmt_usd(None) == "unknown" and fmt_usd(0.0) == "$0.00" and fmt_usd(2.114) == "$2.11"
    rows = [{"judge": "a", "alpha": 0.8, "cost per 100 items (USD)": None, "verdict": "calibrated"},
            {"judge": "b", "alpha": 0.7, "cost per 100 items (USD)": 1.5, "verdict": "not calibrated"}]
    data = charts.cost_vs_agreement(rows).to_dict()["datasets"]
    assert [r["judge"] for d in data.values() for r in d] == ["b"]  # the unknown one is not plotted at $0
    at = lead_page("compare")
    table = table_with(at, "judge")
    assert {"verdict", "cost / 100 items", "lean", "passes caught", "fails caught"} <= set(table.columns)
    assert "MSE" not in table.columns and "signed error" not in table.columns


def test_disagreement_browser_numbers_steps_like_the_label_page(demo_db):
    at = open_tab(choose_judge(lead_page("calibration"), "careful-sonnet"), "Disagreements")
    text = markdown(at)
    assert "**1** " in text and "step 0" not in text
    with Store(demo_db) as s:
        first = insights.disagreements(s, GS, RUBRIC, "careful-sonnet").iloc[0]["item_id"]
        ev = insights.item_evidence(s, GS, RUBRIC, "careful-sonnet", first)
    cited = sorted({n + 1 for j in ev["judgments"] for n in j["evidence_steps"] or []})
    assert "Evidence steps cited: " + ", ".join(f"**{n}**" for n in cited) in text
    marked = [int(m.value.split("**")[1]) for m in at.markdown if "cited by the judge" in m.value
              and m.value.startswith("**")]
    assert marked == cited
    # the same viewer: code in code blocks, tool calls as calls, not raw JSON dumps of the step
    assert "🔧 **call**" in text and not any(c.language == "json" and '"tool_calls"' in c.value for c in at.code)


def test_per_category_chart_names_every_category_in_full(demo_db):
    from workbench.features.export import charts

    rep = report_of(demo_db, "noisy-llama")
    spec = charts.per_category(rep).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert sorted(r["category"].split(" (n = ")[0] for r in rows) == sorted(rep.per_category)
    assert all(r["low"] is not None and r["high"] is not None for r in rows)
    for layer in spec["layer"]:
        axis = layer["encoding"]["y"]["axis"]
        assert axis["labelLimit"] == 0 and axis["labelOverlap"] is False
    assert spec["height"] == {"step": 28}
    forest = charts.metric_intervals(rep).to_dict()
    assert forest["layer"][0]["encoding"]["y"]["axis"]["labelLimit"] == 0  # "krippendorff_alpha_ordinal" in full
    assert json.dumps(charts.self_preference_forest(report_of(demo_db, "gpt4o-self")).to_dict()["height"]) \
        == '{"step": 48}'
