"""The gate: defaults of DESIGN section 6, overrides, boundaries, and the demo judges' planted problems."""

from __future__ import annotations

import pytest

from tests.conftest import write
from workbench.core.errors import InputError
from workbench.calibration.gate import (FAILED, NOT_APPLICABLE, NOT_MEASURABLE, PASSED, UNDECIDED, WARNING, Policy,
    evaluate, load_policy, policy_from_dict)
from workbench.calibration.report import CalibrationReport
from workbench.calibration.calibrate import calibrate


def report(**over) -> dict:
    """A report that passes every default check exactly at its threshold."""
    base = {
        "judge": {"family": "openai"},
        "evidence": {"n_items": 50, "n_multi_rated": 15},
        "n_items": 50, "n_scored": 980, "n_unscored": 20,
        "metrics": {"krippendorff_alpha_ordinal": {"value": 0.8, "ci_low": 0.667, "ci_high": 0.9},
                    "mean_signed_error": {"value": 0.0},
                    "tpr": {"value": 0.8, "ci_low": 0.5, "ci_high": 0.9, "n": 10},
                    "tnr": {"value": 0.8, "ci_low": 0.5, "ci_high": 0.9, "n": 10}},
        "denominators": {"n_items": 50, "n_pos": 10, "n_neg": 10},
        "alt_test": {"raters": [{}, {}, {}], "winning_rate": 0.5, "advantage_probability": 0.7, "passed": True,
                     "epsilon": 0.2},
        "human_ceiling": {"human_pairwise_agreement": 0.8, "judge_human_pairwise_agreement": 0.75},
        "self_preference": {"same_family": {"value": 0.0, "ci_low": -0.1, "ci_high": 0.1, "n": 20},
                            "same_model": {"value": 0.05, "ci_low": 0.0, "ci_high": 0.1, "n": 10}},
        "noise": {"flip_rate": 0.10},
        "drift": {"stuart_maxwell": {"p_value": 0.01}, "deltas": {"krippendorff_alpha_ordinal": {"value": -0.05}},
                  "baseline_run": "a", "run": "b"},
    }
    for k, v in over.items():
        base[k] = v
    return base


def typed(r: dict) -> CalibrationReport:
    """The report the gate reads, from the JSON shape the cases are written in (sections left out are absent)."""
    return CalibrationReport.from_json(r)


def statuses(r: dict, policy: Policy = Policy()) -> dict[str, str]:
    return {c.id: c.status for c in evaluate(typed(r), policy).checks}


def test_every_check_passes_exactly_at_its_threshold():
    v = evaluate(typed(report()), Policy())
    assert v.calibrated, [c.message for c in v.failed]
    assert [c.id for c in v.checks] == ["evidence", "agreement", "pass_fail", "as_good_as_human", "self_preference",
                                        "categories", "stable", "complete", "no_drift"]


@pytest.mark.parametrize("change,check", [
    ({"metrics": {**report()["metrics"], "krippendorff_alpha_ordinal": {"value": 0.5, "ci_low": 0.45,
                                                                        "ci_high": 0.55}}}, "agreement"),
    ({"alt_test": None, "human_ceiling": {"human_pairwise_agreement": 0.8, "judge_human_pairwise_agreement": 0.6,
                                          "judge_minus_human_se": 0.02, "n_items_pairwise": 40}}, "as_good_as_human"),
    ({"self_preference": {"same_family": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}}}, "self_preference"),
    ({"self_preference": {"same_family": {"value": -0.5, "ci_low": -0.6, "ci_high": -0.4}}}, "self_preference"),
    ({"self_preference": {"same_family": {"value": 0.0, "ci_low": -0.1, "ci_high": 0.1},
                          "same_model": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}}}, "self_preference"),
    ({"metrics": {**report()["metrics"], "tnr": {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3}}}, "pass_fail"),
    ({"metrics": {**report()["metrics"], "tpr": {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3}}}, "pass_fail"),
    ({"noise": {"flip_rate": 0.1001}}, "stable"),  # no item count (an old report): the point estimate decides
    ({"noise": {"flip_rate": 0.5, "n_items": 200}}, "stable"),
    ({"n_unscored": 21, "n_scored": 979}, "complete"),
    ({"drift": {"stuart_maxwell": {"p_value": 0.0099}, "deltas": {}}}, "no_drift"),
    ({"drift": {"stuart_maxwell": {"p_value": 0.5},
                "deltas": {"krippendorff_alpha_ordinal": {"value": -0.0501}}}}, "no_drift"),
])
def test_a_clearly_bad_judge_fails_that_check_alone(change, check):
    v = evaluate(typed(report(**change)), Policy())
    s = {c.id: c.status for c in v.checks}
    assert s[check] == FAILED and [k for k, x in s.items() if x in (FAILED, UNDECIDED)] == [check]
    assert v.state == FAILED and v.headline == "NOT CALIBRATED" and not v.calibrated


@pytest.mark.parametrize("change,check", [
    ({"evidence": {"n_items": 49, "n_multi_rated": 15}}, "evidence"),
    ({"evidence": {"n_items": 50, "n_multi_rated": 14}}, "evidence"),
    ({"metrics": {**report()["metrics"], "krippendorff_alpha_ordinal": {"value": 0.8, "ci_low": 0.6669,
                                                                        "ci_high": 0.9}}}, "agreement"),
    # below the bound at 95% but not at the interim boundary: read after every batch, that is not yet a failure
    ({"metrics": {**report()["metrics"], "krippendorff_alpha_ordinal": {"value": 0.62, "ci_low": 0.55,
                                                                        "ci_high": 0.66}}}, "agreement"),
    ({"alt_test": {"raters": [{}, {}, {}], "winning_rate": 0.33, "passed": False},
      "human_ceiling": {"human_pairwise_agreement": 0.8, "judge_human_pairwise_agreement": 0.75,
                        "judge_minus_human_se": 0.05, "n_items_pairwise": 40}}, "as_good_as_human"),
    ({"self_preference": {"same_family": {"value": 0.3, "ci_low": 0.1001, "ci_high": 0.5}}}, "self_preference"),
    ({"self_preference": {"same_family": {"value": 0.06, "ci_low": -0.02, "ci_high": 0.14, "n": 40}}},
     "self_preference"),
    ({"denominators": {"n_items": 50, "n_pos": 10, "n_neg": 9}}, "pass_fail"),
    ({"denominators": {"n_items": 50, "n_pos": 9, "n_neg": 10}}, "pass_fail"),
    ({"metrics": {**report()["metrics"], "tnr": {"value": 0.8, "ci_low": 0.4999, "ci_high": 0.9}}}, "pass_fail"),
    ({"noise": {"flip_rate": 0.08, "n_items": 100}}, "stable"),  # Wilson interval 0.04 to 0.15 straddles 0.10
])
def test_a_straddling_check_is_undecided_and_keeps_the_pair_from_calibrated(change, check):
    v = evaluate(typed(report(**change)), Policy())
    s = {c.id: c.status for c in v.checks}
    assert s[check] == UNDECIDED and [k for k, x in s.items() if x in (FAILED, UNDECIDED)] == [check]
    assert v.state == UNDECIDED and v.headline == "NOT DECIDED YET" and not v.calibrated
    [c] = v.undecided
    assert c.blocking and c.to_dict()["state"] == UNDECIDED and c.reason
    assert v.summary().startswith(f"Not decided yet: {c.name} (")


def test_reasons_carry_the_number_its_interval_and_the_bound():
    def reason(**change):
        return next(c for c in evaluate(typed(report(**change)), Policy()).checks if c.blocking).reason

    metrics = report()["metrics"]
    alpha = reason(metrics={**metrics, "krippendorff_alpha_ordinal": {"value": 0.71, "ci_low": 0.62,
                                                                      "ci_high": 0.79}})
    assert alpha.startswith("krippendorff_alpha_ordinal 0.71 [0.62, 0.79] does not yet clear 0.667 with 95% "
                            "confidence; about ")
    assert alpha.endswith(" more labeled items would decide it.")
    bad = reason(metrics={**metrics, "krippendorff_alpha_ordinal": {"value": 0.5, "ci_low": 0.45, "ci_high": 0.55}})
    assert bad.startswith("krippendorff_alpha_ordinal 0.50 [0.45, 0.55] is below 0.667 beyond doubt")
    tnr = reason(metrics={**metrics, "tnr": {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3}})
    assert "TNR (n = 10 consensus fails) 0.20 [0.10, 0.30] is below 0.5 beyond doubt" in tnr
    flips = reason(noise={"flip_rate": 0.5, "n_items": 200})
    assert flips.startswith("flip rate 0.50 [0.43, 0.57] on 200 items with repeats is above 0.1")
    sp = reason(self_preference={"same_family": {"value": 0.31, "ci_low": 0.18, "ci_high": 0.44, "n": 40}})
    assert "scores its own family (openai) 0.31 higher than humans do" in sp
    assert "(+0.31 [+0.18, +0.44], 40 items, bound +/-0.1)" in sp


def test_undecided_says_how_many_more_labels_decide_it():
    r = report(self_preference={"same_family": {"value": 0.06, "ci_low": -0.02, "ci_high": 0.14, "n": 40}})
    [sp] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "self_preference"]
    # half-width 0.08 (se 0.0408): the estimate is 0.98 se inside +0.1. Taken as the truth, the interval must shrink
    # to 0.04, four times the items (120 more); but an undecided estimate sits nearer the bound than its truth, whose
    # median-unbiased distance given that it is undecided is 1.31 se, and the estimate moving from 0.06 toward it
    # clears +0.1 at 109 items (gate._more_to_clear; benchmarks/plan_honesty.md measures it on real campaigns)
    assert sp.more_items == 69 and "about 69 more labeled same-family items would decide it." in sp.reason
    r = report(evidence={"n_items": 27, "n_multi_rated": 3})
    [ev] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "evidence"]
    assert ev.message.endswith("Label 23 more items to reach 50 with a consensus and a judge score and get 12 more "
                               "items labeled by 2 raters to reach 30%.")
    r = report(denominators={"n_items": 50, "n_pos": 49, "n_neg": 1})
    [pf] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "pass_fail"]
    assert pf.message.startswith("TNR cannot be judged yet: 1 item has a consensus fail (10 needed); label about 9 "
                                 "more items that humans would fail")


def test_as_good_as_human_falls_back_to_the_paired_interval_with_few_raters():
    r = report(alt_test={"raters": [{}, {}], "winning_rate": 1.0, "passed": True},
               human_ceiling={"human_pairwise_agreement": 0.8, "judge_human_pairwise_agreement": 0.8,
                              "judge_minus_human_se": 0.02, "n_items_pairwise": 60})
    assert statuses(r)["as_good_as_human"] == PASSED  # +0.05 [+0.01, +0.09] clears 0
    r["human_ceiling"]["judge_minus_human_se"] = 0.04
    assert statuses(r)["as_good_as_human"] == UNDECIDED  # +0.05 [-0.03, +0.13]
    r["human_ceiling"]["judge_human_pairwise_agreement"] = 0.55
    assert statuses(r)["as_good_as_human"] == FAILED  # -0.20, its 99.9% interval still below 0


def test_not_measurable_and_not_applicable_do_not_block_but_say_so():
    r = report(self_preference={"same_family": {"value": None, "reason": "no items produced by meta"}}, noise=None,
               drift=None)
    v = evaluate(typed(r), Policy())
    by_id = {c.id: c for c in v.checks}
    assert by_id["self_preference"].status == NOT_MEASURABLE and "not evidence of no bias" in by_id["self_preference"].message
    assert by_id["self_preference"].state == WARNING and not by_id["self_preference"].blocking
    assert by_id["stable"].status == NOT_APPLICABLE and by_id["no_drift"].status == NOT_APPLICABLE
    assert v.calibrated and v.headline == "CALIBRATED"
    assert v.summary() == "Calibrated: every deciding check passed (1 warning, which does not block: no material " \
                          "self-preference)."


def test_a_failure_outranks_an_undecided_check():
    r = report(evidence={"n_items": 49, "n_multi_rated": 15}, noise={"flip_rate": 0.5, "n_items": 200})
    v = evaluate(typed(r), Policy())
    assert v.state == FAILED and [c.id for c in v.undecided] == ["evidence"] and [c.id for c in v.failed] == ["stable"]


def test_a_weak_category_is_a_warning():
    cats = {"a": {"n_items": 40, "exact_agreement": {"value": 0.9}, "worse_than_rest": {"significant": False}},
            "b": {"n_items": 30, "exact_agreement": {"value": 0.4},
                  "worse_than_rest": {"significant": True, "difference": -0.5, "ci_low": -0.7, "ci_high": -0.3}}}
    v = evaluate(typed(report(per_category=cats)), Policy())
    [cat] = [c for c in v.checks if c.id == "categories"]
    assert cat.status == WARNING and v.calibrated and "'b' (exact agreement 0.40, n = 30, 0.50 below the rest " \
        "[-0.70, -0.30])" in cat.message


def test_policy_overrides_and_unknown_keys(tmp_path):
    f = write(tmp_path / "policy.yaml", "min_items: 80\nmax_flip_rate: 0.2\n")
    p = load_policy(f, {"min_items": 100})
    assert (p.min_items, p.max_flip_rate, p.min_agreement_lower) == (100, 0.2, 0.667)
    with pytest.raises(InputError, match="field 'min_itmes': unknown gate key 'min_itmes'; did you mean min_items"):
        policy_from_dict({"min_itmes": 3})
    with pytest.raises(InputError, match="field 'min_items': must be a whole number, got 'many'"):
        policy_from_dict({"min_items": "many"})
    assert statuses(report(), p)["evidence"] == UNDECIDED


def test_rubric_gate_overrides_reach_the_verdict(demo_store, tmp_path):
    from workbench.features.importing.service import import_judgments
    from workbench.calibration.rubric_versions import add_rubric
    from tests.conftest import DEMO_DIR, DEMO_RUBRIC
    text = DEMO_RUBRIC.read_text().replace("examples: []", "examples: []\ngate:\n  min_items: 500")
    assert add_rubric(demo_store, write(tmp_path / "r.yaml", text)).version == 2
    # until the judge has judgments under version 2, its version 1 evidence (and policy) is what counts
    assert calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet").policy.min_items == 50
    import_judgments(demo_store, DEMO_DIR / "demo-patch-quality/judgments/careful-sonnet.jsonl", "demo",
                     "demo-patch-quality", "careful-sonnet")
    rep = calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet")
    assert rep.rubric.version == 2 and rep.policy.min_items == 500
    [ev] = [c for c in rep.verdict.checks if c.id == "evidence"]
    assert ev.status == UNDECIDED and "Label 359 more items" in ev.message


EXPECTED = {
    "careful-sonnet": set(),
    "lenient-mini": {"as_good_as_human"},  # and its agreement is not shown to clear the bound (below)
    "gpt4o-self": {"self_preference"},
    "noisy-llama": {"stable", "no_drift"},
}


@pytest.mark.parametrize("judge", EXPECTED)
def test_demo_judges_fail_on_their_planted_problem(demo_store, judge):
    rep = calibrate(demo_store, "demo", "demo-patch-quality", judge)
    failed = {c.id for c in rep.verdict.failed}
    assert rep.verdict.calibrated is (not EXPECTED[judge])
    assert EXPECTED[judge] <= failed
    if judge == "lenient-mini":
        assert rep.metrics["mean_signed_error"].ci_low > 0  # lenient: judges higher than the humans
        assert {c.id: c.status for c in rep.verdict.checks}["agreement"] != PASSED
    if judge == "careful-sonnet":
        assert rep.self_preference.same_family.ci_low < 0.1
