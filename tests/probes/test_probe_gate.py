"""The gate's optional probe check: a warning by default, part of the gate with `probe_check: fail`."""

from __future__ import annotations

import pytest

from workbench.core.errors import InputError
from workbench.calibration.gate import (FAILED, PASSED, UNDECIDED, WARNING, Policy, evaluate, policy_from_dict,
    probe_moves)
from workbench.calibration.report import CalibrationReport


def _report(*shifts: tuple[float, float, float]) -> CalibrationReport:
    """A calibration report carrying only probe results (value, ci_low, ci_high) per probe."""
    return CalibrationReport.from_json({"probes": {"baseline_run": "run-1", "probes": [
        {"probe": f"p{i}", "n_items": 40, "mean_shift": {"value": v, "ci_low": lo, "ci_high": hi}}
        for i, (v, lo, hi) in enumerate(shifts)]}})


def _check(report: CalibrationReport, **policy) -> dict | None:
    return next((c.to_dict() for c in evaluate(report, Policy(**policy)).checks if c.id == "probes"), None)


def test_a_shift_wholly_beyond_the_limit_warns_by_default_and_fails_when_the_policy_says_so():
    report = _report((0.02, -0.03, 0.06), (0.35, 0.2, 0.5))
    warn = _check(report)
    assert warn["status"] == WARNING and warn["passed"] and "p1 (+0.35 [+0.20, +0.50])" in warn["message"]
    fail = _check(report, probe_check="fail")
    assert fail["status"] == FAILED and not evaluate(report, Policy(probe_check="fail")).calibrated
    assert _check(_report((-0.4, -0.6, -0.2)), probe_check="fail")["status"] == FAILED  # either direction
    # crosses 0.25: not decided, which blocks where probes are part of the gate
    assert _check(report, probe_check="fail", max_probe_shift=0.25)["status"] == UNDECIDED


def test_intervals_within_the_limit_pass_and_crossing_it_is_inconclusive():
    assert _check(_report((0.0, -0.05, 0.05), (0.05, 0.0, 0.1)))["status"] == PASSED
    unsettled = _check(_report((0.08, 0.01, 0.2)), probe_check="fail")
    assert unsettled["status"] == UNDECIDED and "Not decided for p0 (+0.08 [+0.01, +0.20])" in unsettled["message"]
    assert _check(_report((0.08, 0.01, 0.2)))["status"] == WARNING  # by default a warning, which does not block


def test_without_probes_there_is_no_check_unless_the_policy_requires_them():
    empty = CalibrationReport.from_json({})
    assert _check(empty) is None and _check(CalibrationReport.from_json({"probes": None})) is None
    assert _check(empty, probe_check="fail")["status"] == UNDECIDED  # no probe run yet: nothing decided
    assert _check(_report((0.5, 0.4, 0.6)), probe_check="off") is None


def test_the_moves_rule_is_the_interval_excluding_zero():
    assert probe_moves({"mean_shift": {"value": 0.1, "ci_low": 0.01, "ci_high": 0.2}}) == "raises"
    assert probe_moves({"mean_shift": {"value": -0.1, "ci_low": -0.2, "ci_high": -0.01}}) == "lowers"
    assert probe_moves({"mean_shift": {"value": 0.1, "ci_low": 0.0, "ci_high": 0.2}}) is None
    assert probe_moves(None) is None


def test_an_unknown_probe_check_mode_is_refused_by_name():
    with pytest.raises(InputError, match="policy.yaml: field 'probe_check': must be one of warn, fail, off"):
        policy_from_dict({"probe_check": "strict"}, source="policy.yaml")
    assert policy_from_dict({"probe_check": "fail", "max_probe_shift": 0.2}).max_probe_shift == 0.2
