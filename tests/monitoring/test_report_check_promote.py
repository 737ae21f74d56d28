"""`monitor report` (its JSON, no peeking ahead), `check` knowing production (expiry with the clock, an open
validity alarm, a labeled stream without one), and `monitor promote`."""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pytest
import yaml

from tests.monitoring import replay as rp
from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices
from tests.monitoring.helpers import cli, label_sampled
from workbench.features.monitoring.ingest import ingest
from workbench.features.monitoring.records import StreamBundle, parse_time


def _stream(approved, tmp_path, *, drift_day=None, drift_share=0.0, days=6, per_day=300, rate=0.15, name="prod"):
    traces, humans, _ = streams.stream_rows(days=days, per_day=per_day, seed=4, exclude=approval_indices(),
                                            drift_day=drift_day, drift_share=drift_share)
    path = streams.write_jsonl(tmp_path / f"{name}.jsonl", traces)
    ingest(approved.store, name, approved.bundle_json(), approved.bundle.name, "jsonl", path, label_rate=rate, seed=9)
    label_sampled(approved, name, humans, tmp_path)
    return humans


def test_report_json_has_the_issues_shape(approved, tmp_path):
    _stream(approved, tmp_path)
    r = cli(approved, "monitor", "report", "--stream", "prod", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert len(doc["windows"]) == 6
    w = doc["windows"][0]
    assert {"start", "n_items", "n_labeled", "raw_pass_rate", "corrected_pass_rate", "agreement", "alarms"} <= set(w)
    assert set(w["corrected_pass_rate"]) >= {"value", "ci_low", "ci_high"}
    assert set(w["agreement"]) >= {"value", "ci_low", "ci_high"}
    assert w["n_items"] == 300 and 25 <= w["n_labeled"] <= 70  # Bernoulli(0.15) of 300: 45 +- 4 sd
    assert all(x["alarms"] == [] for x in doc["windows"])  # no drift, no shift, not expired
    c = w["corrected_pass_rate"]
    assert c["ci_low"] <= c["value"] <= c["ci_high"]
    week = json.loads(cli(approved, "monitor", "report", "--stream", "prod", "--window", "week", "--json").output)
    assert [x["n_items"] for x in week["windows"]] == [1800]  # Tue 1 to Sun 6 Dec 2026: one ISO week
    assert week["windows"][0]["start"].startswith("2026-11-30")
    text = cli(approved, "monitor", "report", "--stream", "prod").output
    assert "No open alarm" in text and "2026-12-01" in text


def test_a_window_sees_nothing_after_its_end(approved_template):
    """No peeking ahead: the windows before the drift are the same whether or not the drifted days exist."""
    sb = StreamBundle.from_bundle(yaml.safe_load(approved_template[1].read_text()), "b.yaml")
    full = rp.replay(sb, seed=3, days=10, drift_day=6, drift_share=0.6)
    cut = [t for t in full.traces if t.ts < full.windows[6].start]
    again = rp.windows_report(cut, {k: v for k, v in full.labels.items()}, sb, rp.golden())
    assert [w.to_json() for w in again] == [w.to_json() for w in full.windows[:6]]
    assert any(a.kind == "validity" for w in full.windows[6:] for a in w.alarms)


def test_validity_alarm_is_raised_in_the_report_and_fails_check(approved, tmp_path):
    _stream(approved, tmp_path, drift_day=3, drift_share=0.5)
    doc = json.loads(cli(approved, "monitor", "report", "--stream", "prod", "--json").output)
    kinds = [[a["kind"] for a in w["alarms"]] for w in doc["windows"]]
    assert kinds[:3] == [[], [], []] and "validity" in kinds[-1]
    sentence = next(a["sentence"] for a in doc["windows"][-1]["alarms"] if a["kind"] == "validity")
    assert "below the bound 0.1" in sentence and "since the window of 2026-12-0" in sentence
    assert "monitor promote --stream prod" in sentence
    r = cli(approved, "check", approved.bundle, "--allow-unsigned", env={"WORKBENCH_NOW": "2026-12-07"})
    assert r.exit_code == 3 and "stream 'prod' has an open validity alarm" in r.output


def test_check_passes_with_a_labeled_stream_and_no_alarm(approved, tmp_path):
    _stream(approved, tmp_path)
    r = cli(approved, "check", approved.bundle, "--allow-unsigned", env={"WORKBENCH_NOW": "2026-12-07"})
    assert r.exit_code == 0, r.output
    assert "stream 'prod': no validity alarm (1800 traces" in r.output and "valid until" in r.output


def test_check_fails_on_expiry_by_the_clock(approved, tmp_path):
    approved_on = parse_time(approved.bundle_json()["created_at"])
    late = (approved_on + timedelta(days=91)).date().isoformat()
    early = (approved_on + timedelta(days=89)).date().isoformat()
    r = cli(approved, "check", approved.bundle, "--allow-unsigned", env={"WORKBENCH_NOW": late})
    assert r.exit_code == 3 and "the approval expired on" in r.output and "90 days after approval" in r.output
    assert cli(approved, "check", approved.bundle, "--allow-unsigned", env={"WORKBENCH_NOW": early}).exit_code == 0
    bad = cli(approved, "check", approved.bundle, "--allow-unsigned", env={"WORKBENCH_NOW": "June"})
    assert bad.exit_code == 1 and "WORKBENCH_NOW must be a date YYYY-MM-DD" in bad.output


def test_expiry_alarm_in_the_report_windows_past_revalidate_after(approved_template):
    sb = StreamBundle.from_bundle(yaml.safe_load(approved_template[1].read_text()), "b.yaml")
    late = StreamBundle(**{**{f: getattr(sb, f) for f in sb.__slots__}, "approved_at": "2026-09-01T00:00:00+00:00"})
    r = rp.replay(late, seed=1, days=3)
    assert [[a.kind for a in w.alarms] for w in r.windows] == [["expiry"]] * 3  # expired 2026-11-30
    assert "expired on 2026-11-30, 90 days after approval" in r.windows[0].alarms[0].sentence


def test_promote_adds_a_new_version_with_labels_and_verdicts(approved, tmp_path):
    _stream(approved, tmp_path, days=2, per_day=100, rate=0.2)
    s = approved.store
    gs = s.golden_set("approval")
    before = [(v["version"], v["hash"]) for v in s.golden_set_versions(gs.id)]
    n_before = len(s.item_index(gs.id))
    r = cli(approved, "monitor", "promote", "--stream", "prod", "--golden-set", "approval")
    assert r.exit_code == 0, r.output
    sampled = len(s.item_index(s.golden_set("prod").id))
    assert len(s.item_index(gs.id)) == n_before + sampled
    after = [(v["version"], v["hash"]) for v in s.golden_set_versions(gs.id)]
    assert after[:len(before)] == before and len(after) == len(before) + 1  # frozen versions untouched
    assert f"frozen as version {after[-1][0]}" in r.output
    labels = {row["item_id"] for row in s.labels(gs.id, "logic") if row["item_id"].startswith("d")}
    assert len(labels) == sampled
    runs = [run for run in s.runs(gs.id) if run["name"].startswith("promoted-prod-")]
    assert len(runs) == 1 and f"run '{runs[0]['name']}'" in r.output
    assert f"its {n_before} verdicts on the golden set's own items from run" in r.output
    again = cli(approved, "monitor", "promote", "--stream", "prod", "--golden-set", "approval")
    assert "(0 new)" in again.output
    assert [run["name"] for run in s.runs(gs.id) if run["name"].startswith("promoted-")] == [runs[0]["name"]]


def test_calibrate_after_promote_counts_the_old_items_and_the_promoted_ones(approved, tmp_path):
    """Issue 44 item 4, replayed on the shared data: after promotion the judge is calibrated on the n items the
    golden set had plus the n promoted (each with its labels and the judge's verdict), and the promoted part of the
    confusion matrix is the reviewers' labels against the production verdicts, counted here with scikit-learn."""
    from sklearn.metrics import confusion_matrix

    from workbench.calibration.calibrate import Options, calibrate

    traces, humans, _ = streams.stream_rows(days=3, per_day=200, seed=4, exclude=approval_indices())
    ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl",
           streams.write_jsonl(tmp_path / "prod.jsonl", traces), label_rate=0.2, seed=9)
    label_sampled(approved, "prod", humans, tmp_path)
    s = approved.store
    before = calibrate(s, "approval", "logic", "gpt4o", Options(resamples=200), use_cache=False)
    sampled = [r["item_id"] for r in s.item_index(s.golden_set("prod").id)]
    assert cli(approved, "monitor", "promote", "--stream", "prod", "--golden-set", "approval").exit_code == 0
    after = calibrate(s, "approval", "logic", "gpt4o", Options(resamples=200), use_cache=False)
    n_before = len(s.item_index(s.golden_set("approval").id)) - len(sampled)
    assert n_before == 400 and len(sampled) >= 80
    # the 400 items the golden set had (of which calibration leaves out the few whose reviewers tie) plus every
    # promoted one, each labeled by one reviewer and holding its production verdict
    assert before.n_items + before.n_unresolved == n_before
    assert (after.n_items, after.n_unresolved) == (before.n_items + len(sampled), before.n_unresolved)
    verdict = {t["id"]: t["score"] for t in traces}
    scale = after.confusion.labels
    promoted = confusion_matrix([humans[i] for i in sampled], [verdict[i] for i in sampled], labels=scale)
    assert before.confusion.labels == scale
    assert (np.array(after.confusion.matrix) == np.array(before.confusion.matrix) + promoted).all()


def test_a_new_bundle_starts_a_new_epoch(approved, tmp_path):
    """Re-approval (a new bundle) closes the alarm: the report counts from the new approval's traces only."""
    from tests.monitoring import realdata
    from tests.monitoring.conftest import RUBRIC_YAML
    from workbench.calibration.calibrate import Options
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.features.export.bundle import export_bundle, load_bundle
    from workbench.features.importing.service import import_judgments

    _stream(approved, tmp_path, drift_day=2, drift_share=0.5, days=4)
    assert any(a.kind == "validity" for a in rp_report(approved).open_alarms)
    # the judge re-approved under a revised rubric (version 2), on its own judgments of the approval set
    (tmp_path / "logic.yaml").write_text(RUBRIC_YAML.replace("pass_threshold: 1", "title: revised\npass_threshold: 1"))
    add_rubric(approved.store, tmp_path / "logic.yaml")
    rows = realdata.load()
    (tmp_path / "j2.jsonl").write_text("".join(json.dumps({"item_id": rows.key[i], "score": int(rows.judge[i])}) + "\n"
                                               for i in approval_indices()))
    import_judgments(approved.store, tmp_path / "j2.jsonl", "approval", "logic", "gpt4o")
    res = export_bundle(approved.store, "approval", "logic", "gpt4o", out_dir=tmp_path / "new",
                        options=Options(resamples=200), workspace=approved.workspace, signing_key=None)
    assert res.sha256 != approved.bundle_json()["sha256"]
    traces, _, _ = streams.stream_rows(days=2, per_day=100, seed=8, exclude=approval_indices())
    for t in traces:
        t["id"] = "new-" + t["id"]
    ingest(approved.store, "prod", load_bundle(approved.store, res.path, approved.workspace), res.path.name, "jsonl",
           streams.write_jsonl(tmp_path / "new.jsonl", traces), label_rate=0.1, seed=1)
    report = rp_report(approved)
    assert report.bundle == res.path.name and [w.n_items for w in report.windows] == [100, 100]
    assert not report.open_alarms


def rp_report(approved):
    from workbench.features.monitoring.report import monitor_report

    return monitor_report(approved.store, "prod")


def test_check_as_of_is_the_clock_of_an_audit(approved):
    approved_on = parse_time(approved.bundle_json()["created_at"])
    late = (approved_on + timedelta(days=91)).date().isoformat()
    early = (approved_on + timedelta(days=89)).date().isoformat()
    r = cli(approved, "check", approved.bundle, "--allow-unsigned", "--as-of", late)
    assert r.exit_code == 3 and "the approval expired on" in r.output
    # --as-of wins over the environment's clock
    assert cli(approved, "check", approved.bundle, "--allow-unsigned", "--as-of", early,
               env={"WORKBENCH_NOW": late}).exit_code == 0
    bad = cli(approved, "check", approved.bundle, "--allow-unsigned", "--as-of", "June")
    assert bad.exit_code == 1 and "--as-of must be a date YYYY-MM-DD" in bad.output


def test_revalidate_after_is_a_policy_key_the_bundle_carries(approved):
    from workbench.core.policy import Policy, policy_from_dict
    from workbench.core.errors import InputError

    assert Policy().revalidate_after == 90
    assert policy_from_dict({"revalidate_after": 30}).revalidate_after == 30
    with pytest.raises(InputError, match="revalidate_after"):
        policy_from_dict({"revalidate_after": 0})  # at least a day
    bundle = approved.bundle_json()
    assert bundle["policy"]["revalidate_after"] == 90  # the approval says how long it holds
    short = {**bundle, "policy": {**bundle["policy"], "revalidate_after": 30}}
    sb = StreamBundle.from_bundle(short, "b.yaml")
    assert (sb.expires_at - parse_time(bundle["created_at"])).days == 30
