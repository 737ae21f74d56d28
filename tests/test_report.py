"""The typed calibration report (workbench/calibration/report.py): its JSON is the report's JSON, exactly, both ways.

The demo's stored reports (tests/data/calibrate_demo_9af0fc0, written by an older commit, and the report cache of
today's code) are read and written back without a key or a number changing; a report built by ``calibrate`` is
the object ``calibrate --json`` prints; the golden-set version a read-only calibrate names is the one a freeze
records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.calibration.gate import FAILED, Verdict, evaluate
from workbench.calibration.report import CalibrationReport, Comparison, Metric, Record
from workbench.calibration import calibrate as calibration
from workbench.calibration.snapshots import freeze

REFERENCE = Path(__file__).parent / "data" / "calibrate_demo_9af0fc0"
G, R = "demo", "demo-patch-quality"


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE.glob("*.json") if p.stem != "compare_differences"))
def test_a_stored_report_reads_back_to_the_same_json(name):
    stored = json.loads((REFERENCE / name).read_text())
    report = CalibrationReport.from_json(stored)
    written = report.to_json()
    # the gate's policy is read as today's Policy: keys added to it since this report was written get their
    # defaults (the report cache never serves such a report: its key holds the report revision and the policy)
    added = {k: v for k, v in written["policy"].items() if k not in stored["policy"]}
    assert added == {"max_probe_shift": 0.1, "probe_check": "warn", "min_category_items": 10, "revalidate_after": 90}
    written["policy"] = {k: v for k, v in written["policy"].items() if k not in added}
    # likewise the verdict's fields added since (the three states, reasons and the headline) are derived or
    # defaulted: the stored ones read back unchanged
    derived = {"state", "headline", "summary"}
    assert derived <= set(written["verdict"])
    written["verdict"] = {k: v for k, v in written["verdict"].items() if k not in derived}
    for check in written["verdict"]["checks"]:
        assert check["reason"] == "" and check["state"] in ("passed", "failed", "warning", "not_applicable")
        for key in ("state", "blocking", "reason", "more_items"):
            del check[key]
    assert written == stored
    assert json.dumps(written, sort_keys=True) == json.dumps(stored, sort_keys=True)  # types too
    # typed all the way down where front ends read it
    assert isinstance(report.verdict, Verdict) and isinstance(report.metrics["tpr"], Metric)
    assert report.metrics["tpr"].n == report.denominators.n_pos
    assert [c.id for c in report.verdict.failed] == [c["id"] for c in stored["verdict"]["checks"]
                                                     if c["status"] == FAILED]
    assert report.verdict.calibrated is stored["verdict"]["calibrated"]


def test_the_report_cache_holds_the_json_calibrate_returns(demo_store):
    report = calibration.calibrate(demo_store, G, R, "noisy-llama")
    # the demo precomputes every judge's report (and its boards' grader's): this judge's rows are the ones to read
    rows = demo_store.conn.execute("SELECT r.report FROM reports r JOIN judges j ON j.pk = r.judge_pk "
                                   "WHERE r.kind = 'calibration' AND j.judge_id = ?", ("noisy-llama",)).fetchall()
    stored = [json.loads(report_json) for (report_json,) in rows]
    assert report.to_json() in stored
    assert all(CalibrationReport.from_json(s).to_json() == s for s in stored)
    again = calibration.calibrate(demo_store, G, R, "noisy-llama")  # read back from the cache
    assert again == report and again.to_json() == report.to_json()


def test_calibrate_json_is_the_typed_reports_json(demo_store, cli):
    out = cli.runner.invoke(__import__("workbench.cli", fromlist=["main"]).main,
                            ["--db", demo_store.path, "calibrate", "-g", G, "-r", R, "-j", "gpt4o-self", "--json"])
    printed = json.loads(out.output)
    assert printed == calibration.calibrate(demo_store, G, R, "gpt4o-self").to_json()
    # the ids the writers use, under their own key; everything else is DESIGN section 8's object
    assert set(printed["ids"]) == {"golden_set_id", "golden_set_version_id", "rubric_version_id", "judge_pk",
                                   "run_id"}


def test_the_verdict_is_the_gates_on_the_typed_report(demo_store):
    report = calibration.calibrate(demo_store, G, R, "lenient-mini")
    assert report.verdict == evaluate(report, report.policy)
    assert [c.name for c in report.verdict.failed] == ["as good as a human"]
    assert [c.name for c in report.verdict.undecided] == ["agreement", "no material self-preference"]


def test_compare_reads_back_exactly(demo_store):
    result = calibration.compare(demo_store, G, R, calibration.Options(resamples=200))
    assert Comparison.from_json(result.to_json()).to_json() == result.to_json()
    assert [d.baseline for d in result.differences] == [result.best] * 3


def test_a_read_only_calibrate_names_the_version_a_freeze_records(demo_store):
    report = calibration.calibrate(demo_store, G, R, "careful-sonnet")
    assert (report.golden_set.version, report.ids.golden_set_version_id) == (1, None)
    assert demo_store.golden_set_versions(report.ids.golden_set_id) == []  # calibrating wrote no version
    frozen = freeze(demo_store, G)
    assert (frozen["version"], frozen["hash"]) == (report.golden_set.version, report.golden_set.version_hash)
    cached = calibration.calibrate(demo_store, G, R, "careful-sonnet")  # the cached report learns the version id
    row = demo_store.golden_set_version_by_hash(report.ids.golden_set_id, report.golden_set.version_hash)
    assert cached.ids.golden_set_version_id == row["id"] and cached.golden_set.version == 1


# -- the codec, on shapes the demo does not produce -------------------------------------------------------------------

numbers = st.none() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False)
metric_json = st.fixed_dictionaries({}, optional={"value": numbers, "ci_low": numbers, "ci_high": numbers,
                                                  "n": st.none() | st.integers(0, 500),
                                                  "design_effect": numbers, "reason": st.none() | st.text(max_size=5),
                                                  "something_new": numbers})


@given(metrics=st.dictionaries(st.sampled_from(["tpr", "tnr", "spearman", "new_metric"]), metric_json),
       n_items=st.integers(0, 300), with_ids=st.booleans())
def test_any_report_shape_reads_back_to_the_same_json(metrics, n_items, with_ids):
    """Keys present with None stay, absent keys stay absent, unknown keys are kept, ints stay ints."""
    data = {"schema": "workbench.calibration/1", "n_items": n_items, "metrics": metrics, "alt_test": None,
            "self_preference": {"same_family": {"value": None, "reason": "no items"}}}
    if with_ids:
        data["ids"] = {"golden_set_id": 1, "golden_set_version_id": None}
    report = CalibrationReport.from_json(data)
    assert report.to_json() == data
    assert json.dumps(report.to_json(), sort_keys=True) == json.dumps(data, sort_keys=True)


def test_a_changed_field_is_written_even_when_the_original_lacked_it():
    report = CalibrationReport.from_json({"n_items": 3})
    assert report.to_json() == {"n_items": 3}
    assert report.but(alt_test_reason="no rater qualifies").to_json() == {"n_items": 3,
                                                                          "alt_test_reason": "no rater qualifies"}


def test_built_in_code_a_record_leaves_out_only_its_optional_none_fields():
    assert Metric(0.5, 0.4, 0.6).to_json() == {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}
    assert Metric(None).to_json() == {"value": None, "ci_low": None, "ci_high": None}
    assert Metric(0.5, 0.4, 0.6, n=10).to_json()["n"] == 10


def test_a_record_refuses_what_is_not_an_object():
    with pytest.raises(TypeError, match="Metric: expected a JSON object, got list"):
        Metric.from_json([1, 2])
    assert issubclass(CalibrationReport, Record)
