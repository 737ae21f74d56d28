"""Each decision is made once and every front end shows that result (issue 10 item 7).

The drift p-value of noisy-llama's second run was 3.4e-14 in the CLI, 0.0000 on the Calibration tab and 2.5e-13
on the Drift page; the gate called a judge lenient by |mean signed error| >= 0.1 while the page used the interval.
These tests fail if a front end computes either again instead of reading the shared rule.
"""

from __future__ import annotations

import json

import pytest

from workbench.calibration import gate, presentation
from workbench.calibration import insights
from workbench.calibration.calibrate import calibrate, policy_for
from workbench.calibration.presentation import card_sections
from workbench.calibration.report import Metric

G, R = "demo", "demo-patch-quality"


@pytest.fixture
def drifted(demo_store):
    return demo_store, calibrate(demo_store, G, R, "noisy-llama")


def test_drift_p_value_is_one_number_everywhere(drifted, cli):
    store, rep = drifted
    p = rep.drift.stuart_maxwell.p_value
    shown = gate.fmt_p(p)
    assert shown == "3.4e-14"
    # the drift timeline computes drift with the report's own function, on the same items
    rows = insights.drift_timeline(store, G, R, "noisy-llama")
    assert rows[-1]["stuart_maxwell_p"] == p
    # the gate's message, the card and the CLI table print the same formatted value
    check = next(c for c in rep.verdict.checks if c.id == "no_drift")
    assert f"p = {shown})" in check.message
    card = "\n".join(line for _, lines in card_sections(rep) for line in lines)
    assert f"Stuart-Maxwell p = {shown}" in card
    out = cli.runner.invoke(__import__("workbench.cli", fromlist=["main"]).main,
                            ["--db", store.path, "calibrate", "-g", G, "-r", R, "-j", "noisy-llama"]).output
    assert f"Stuart-Maxwell p = {shown}" in out


def test_drift_moved_is_decided_by_the_gate_rule(drifted):
    store, rep = drifted
    rows = insights.drift_timeline(store, G, R, "noisy-llama")
    check = next(c for c in rep.verdict.checks if c.id == "no_drift")
    assert rows[-1]["significant"] is (check.status == "failed") is True
    assert rows[-1]["drift"] == "; ".join(gate.drift_problems(rep.drift, policy_for_report(store, rep)))


def policy_for_report(store, rep):
    from workbench.calibration.rubric_versions import get_rubric
    return policy_for(get_rubric(store, rep.rubric.name, rep.rubric.version))


@pytest.mark.parametrize("judge", ["careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama"])
def test_lenient_or_harsh_is_one_rule(demo_store, judge):
    rep = calibrate(demo_store, G, R, judge)
    direction = gate.leniency(rep.metrics["mean_signed_error"])
    sentence = presentation.leniency_sentence(rep)
    agreement = next(c for c in rep.verdict.checks if c.id == "agreement")
    if direction is None:
        assert sentence is None and "lenient" not in agreement.message and "harsh" not in agreement.message
    else:
        assert f"**{direction}**" in sentence
        if agreement.status == "failed":
            assert f"({direction})" in agreement.message


def test_the_rule_reads_the_interval_not_the_size():
    # a small but certain lean is lenient; a large but uncertain one is not
    assert gate.leniency(Metric(0.05, 0.01, 0.09)) == "lenient"
    assert gate.leniency(Metric(0.3, -0.1, 0.7)) is None
    assert gate.leniency(Metric(-0.2, -0.3, -0.1)) == "harsh"


def test_p_values_read_as_people_write_them():
    assert [gate.fmt_p(p) for p in (3.4e-14, 0.0004, 0.012, 0.5, None, 0.0)] == \
        ["3.4e-14", "0.0004", "0.012", "0.5", "n/a", "< 1e-300"]


def test_json_and_text_show_the_same_denominators(demo_store, cli):
    from workbench.cli import main
    out = cli.runner.invoke(main, ["--db", demo_store.path, "calibrate", "-g", G, "-r", R, "-j", "lenient-mini"]).output
    rep = json.loads(cli.runner.invoke(main, ["--db", demo_store.path, "calibrate", "-g", G, "-r", R, "-j",
                                              "lenient-mini", "--json"]).output)
    for name in ("tpr", "tnr", "exact_agreement"):
        m = rep["metrics"][name]
        line = next(x for x in out.splitlines() if x.strip().startswith(name))
        assert line.split()[-1] == str(m["n"]) and f"{m['ci_low']:.3f} to {m['ci_high']:.3f}" in line
