"""The gate: defaults of DESIGN section 6, overrides, boundaries, and the demo judges' planted problems."""

from __future__ import annotations

import pytest

from tests.conftest import write
from workbench.errors import InputError
from workbench.gate import (
    FAILED,
    NOT_APPLICABLE,
    NOT_MEASURABLE,
    PASSED,
    WARNING,
    Policy,
    evaluate,
    load_policy,
    policy_from_dict,
)
from workbench.report import CalibrationReport
from workbench.services.calibration import calibrate


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
    ({"evidence": {"n_items": 49, "n_multi_rated": 15}}, "evidence"),
    ({"evidence": {"n_items": 50, "n_multi_rated": 14}}, "evidence"),
    ({"metrics": {**report()["metrics"], "krippendorff_alpha_ordinal": {"value": 0.8, "ci_low": 0.6669,
                                                                        "ci_high": 0.9}}}, "agreement"),
    ({"alt_test": {"raters": [{}, {}, {}], "winning_rate": 0.33, "passed": False}}, "as_good_as_human"),
    ({"self_preference": {"same_family": {"value": 0.3, "ci_low": 0.1001, "ci_high": 0.5}}}, "self_preference"),
    ({"self_preference": {"same_family": {"value": -0.3, "ci_low": -0.5, "ci_high": -0.1001}}}, "self_preference"),
    ({"self_preference": {"same_family": {"value": 0.0, "ci_low": -0.1, "ci_high": 0.1},
                          "same_model": {"value": 0.3, "ci_low": 0.1001, "ci_high": 0.5}}}, "self_preference"),
    ({"denominators": {"n_items": 50, "n_pos": 10, "n_neg": 9}}, "pass_fail"),
    ({"denominators": {"n_items": 50, "n_pos": 9, "n_neg": 10}}, "pass_fail"),
    ({"metrics": {**report()["metrics"], "tnr": {"value": 0.8, "ci_low": 0.4999, "ci_high": 0.9}}}, "pass_fail"),
    ({"metrics": {**report()["metrics"], "tpr": {"value": 0.8, "ci_low": 0.4999, "ci_high": 0.9}}}, "pass_fail"),
    ({"noise": {"flip_rate": 0.1001}}, "stable"),
    ({"n_unscored": 21, "n_scored": 979}, "complete"),
    ({"drift": {"stuart_maxwell": {"p_value": 0.0099}, "deltas": {}}}, "no_drift"),
    ({"drift": {"stuart_maxwell": {"p_value": 0.5},
                "deltas": {"krippendorff_alpha_ordinal": {"value": -0.0501}}}}, "no_drift"),
])
def test_each_check_fails_just_past_its_threshold(change, check):
    s = statuses(report(**change))
    assert s[check] == FAILED and [k for k, v in s.items() if v == FAILED] == [check]


def test_as_good_as_human_falls_back_to_pairwise_agreement_with_few_raters():
    r = report(alt_test={"raters": [{}, {}], "winning_rate": 1.0, "passed": True})
    assert statuses(r)["as_good_as_human"] == PASSED  # 0.75 >= 0.8 - 0.05
    r["human_ceiling"] = {"human_pairwise_agreement": 0.8, "judge_human_pairwise_agreement": 0.7499}
    assert statuses(r)["as_good_as_human"] == FAILED


def test_not_measurable_and_not_applicable_do_not_block_but_say_so():
    r = report(self_preference={"same_family": {"value": None, "reason": "no items produced by meta"}}, noise=None,
               drift=None)
    v = evaluate(typed(r), Policy())
    by_id = {c.id: c for c in v.checks}
    assert by_id["self_preference"].status == NOT_MEASURABLE and "not evidence of no bias" in by_id["self_preference"].message
    assert by_id["stable"].status == NOT_APPLICABLE and by_id["no_drift"].status == NOT_APPLICABLE
    assert v.calibrated


def test_messages_say_what_to_do():
    r = report(evidence={"n_items": 27, "n_multi_rated": 3})
    [ev] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "evidence"]
    assert ev.message == ("Not enough evidence: label 23 more items to reach 50 with a consensus and a judge score "
                          "and get 12 more items labeled by 2 raters to reach 30%.")
    r = report(self_preference={"same_family": {"value": 0.31, "ci_low": 0.18, "ci_high": 0.44, "n": 40}})
    [sp] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "self_preference"]
    assert "scores its own family (openai) 0.31 higher than humans do" in sp.message
    assert "(interval 0.18 to 0.44, 40 items)" in sp.message
    r = report(denominators={"n_items": 50, "n_pos": 49, "n_neg": 1})
    [pf] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "pass_fail"]
    assert pf.message.startswith("TNR cannot be judged yet: 1 item has a consensus fail; label about 9 more items "
                                 "that humans would fail.")


def test_inconclusive_self_preference_is_a_warning_that_says_what_would_settle_it():
    r = report(self_preference={"same_family": {"value": 0.06, "ci_low": -0.02, "ci_high": 0.14, "n": 40}})
    v = evaluate(typed(r), Policy())
    [sp] = [c for c in v.checks if c.id == "self_preference"]
    assert sp.status == WARNING and v.calibrated
    # half-width 0.08 must shrink to 0.04 (the distance to +0.1): four times the items
    assert "inconclusive, the interval crosses +0.1; about 120 more same-family items would settle it." in sp.message
    r = report(self_preference={"same_family": {"value": -0.2, "ci_low": -0.3, "ci_high": -0.05, "n": 30}})
    [sp] = [c for c in evaluate(typed(r), Policy()).checks if c.id == "self_preference"]
    assert sp.status == WARNING and "crosses -0.1" in sp.message


def test_a_weak_category_is_a_warning():
    cats = {"a": {"n_items": 40, "exact_agreement": {"value": 0.9}, "worse_than_rest": {"significant": False}},
            "b": {"n_items": 30, "exact_agreement": {"value": 0.4},
                  "worse_than_rest": {"significant": True, "difference": -0.5}}}
    v = evaluate(typed(report(per_category=cats)), Policy())
    [cat] = [c for c in v.checks if c.id == "categories"]
    assert cat.status == WARNING and v.calibrated and "'b' (exact agreement 0.40, n = 30, 0.50 below the rest)" \
        in cat.message


def test_policy_overrides_and_unknown_keys(tmp_path):
    f = write(tmp_path / "policy.yaml", "min_items: 80\nmax_flip_rate: 0.2\n")
    p = load_policy(f, {"min_items": 100})
    assert (p.min_items, p.max_flip_rate, p.min_agreement_lower) == (100, 0.2, 0.667)
    with pytest.raises(InputError, match="field 'min_itmes': unknown gate key 'min_itmes'; use one of min_items"):
        policy_from_dict({"min_itmes": 3})
    with pytest.raises(InputError, match="field 'min_items': must be a int, got 'many'"):
        policy_from_dict({"min_items": "many"})
    assert statuses(report(), p)["evidence"] == FAILED


def test_rubric_gate_overrides_reach_the_verdict(demo_store, tmp_path):
    from workbench.services.importing import import_judgments
    from workbench.services.rubrics import add_rubric
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
    assert ev.status == "failed" and "label 359 more items" in ev.message


EXPECTED = {
    "careful-sonnet": set(),
    "lenient-mini": {"agreement"},
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
    if judge == "careful-sonnet":
        assert rep.self_preference.same_family.ci_low < 0.1
