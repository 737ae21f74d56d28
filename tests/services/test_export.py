"""Export of approved bundles and grading with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import DEMO_DIR, write
from workbench.features.export.bundle import BundleRefused, GateFailed, export_bundle, load_bundle, validate_bundle
from workbench.features.grading.service import grade

JUDGMENTS = DEMO_DIR / "demo-patch-quality" / "judgments" / "careful-sonnet.jsonl"


@pytest.fixture
def bundle(demo_store, tmp_path) -> Path:
    return export_bundle(demo_store, "demo", "demo-patch-quality", "careful-sonnet", out_dir=tmp_path / "approved").path


def test_export_writes_a_valid_bundle_once(demo_store, bundle, tmp_path):
    assert bundle.name == "demo-patch-quality@v1--careful-sonnet.yaml"
    first = bundle.read_bytes()
    data = yaml.safe_load(first)
    validate_bundle(data)
    assert data["verdict"]["calibrated"] is True
    assert data["golden_set"]["version_hash"] and data["calibration"]["confusion"]["labels"] == [-1, 0, 1]
    again = export_bundle(demo_store, "demo", "demo-patch-quality", "careful-sonnet", out_dir=tmp_path / "approved")
    assert again.path.read_bytes() == first  # same evidence, same file
    assert not list((tmp_path / "approved").glob("*.tmp"))


def test_failing_pair_writes_nothing(demo_store, tmp_path):
    with pytest.raises(GateFailed) as e:
        export_bundle(demo_store, "demo", "demo-patch-quality", "gpt4o-self", out_dir=tmp_path / "approved")
    assert "self_preference" in {c.id for c in e.value.failed}
    assert not (tmp_path / "approved").exists()
    assert demo_store.golden_set_versions(demo_store.golden_set("demo").id) == []  # refused: nothing frozen


def test_export_freezes_the_version_it_approves_and_records_the_report_ids(demo_store, bundle):
    [version] = demo_store.golden_set_versions(demo_store.golden_set("demo").id)
    data = yaml.safe_load(bundle.read_text())
    assert (version["version"], version["hash"]) == (data["golden_set"]["version"], data["golden_set"]["version_hash"])
    [recorded] = demo_store.exports()
    assert recorded["sha256"] == data["sha256"] and recorded["judge_id"] == "careful-sonnet"


def test_freezing_refuses_a_golden_set_changed_since_the_report(demo_store, monkeypatch):
    from workbench.core.errors import WorkbenchError
    from workbench.calibration import calibrate as calibration
    from workbench.calibration.golden_sets import adjudicate

    scope = calibration.resolve(demo_store, "demo", "demo-patch-quality", "careful-sonnet")
    report = calibration.calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet", scope=scope)
    monkeypatch.setattr(calibration, "_SNAPSHOTS", {})  # as in a process that read the report from the cache
    before = report.golden_set.version_hash
    item = next(i for i in report.evidence.unresolved_items)  # no consensus yet: the lead's label gives it one
    adjudicate(demo_store, "demo", "demo-patch-quality", item, 1, lead="lead")
    with pytest.raises(WorkbenchError, match="golden set 'demo' changed while the report was read"):
        calibration.freeze_version(demo_store, report, scope)
    assert demo_store.golden_set_versions(scope.golden_set.id) == []
    assert calibration.calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet").golden_set.version_hash \
        != before


def test_cli_export_exit_codes(cli, tmp_path):
    cli("demo", "--no-ui")
    r = cli("export", "-g", "demo", "-r", "demo-patch-quality", "-j", "lenient-mini", "--out", tmp_path / "a")
    assert r.exit_code == 3 and "[FAIL] as good as a human" in r.stderr and not (tmp_path / "a").exists()
    assert "[UNDECIDED] agreement: krippendorff_alpha_ordinal 0.64 [0.53, 0.73] is below 0.667" in r.stderr
    r = cli("export", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--out", tmp_path / "a")
    assert r.exit_code == 0 and (tmp_path / "a" / "demo-patch-quality@v1--careful-sonnet.yaml").exists()


def test_schema_rejects_a_bundle_missing_a_field(bundle):
    data = yaml.safe_load(bundle.read_text())
    del data["calibration"]["tpr"]
    with pytest.raises(BundleRefused, match="field 'calibration': 'tpr' is a required property"):
        validate_bundle(data)


@pytest.mark.parametrize("edit", [
    lambda b: b["policy"].__setitem__("min_agreement_lower", 0.1),
    lambda b: b["calibration"]["metrics"]["krippendorff_alpha_ordinal"].__setitem__("value", 0.99),
    lambda b: b["rubric"]["content"].__setitem__("instructions", "Be generous."),
])
def test_edited_bundle_is_refused(demo_store, bundle, tmp_path, edit):
    data = yaml.safe_load(bundle.read_text())
    edit(data)
    edited = write(tmp_path / "edited.yaml", yaml.safe_dump(data))
    with pytest.raises(BundleRefused, match="was edited after export"):
        load_bundle(demo_store, edited)


def test_hand_made_bundle_with_a_valid_hash_is_refused(demo_store, bundle, tmp_path):
    from workbench.core.hashing import sha256_hex
    data = yaml.safe_load(bundle.read_text())
    data["policy"]["min_agreement_lower"] = 0.1
    content = {k: v for k, v in data.items() if k != "sha256"}
    data["sha256"] = sha256_hex(content)
    forged = write(tmp_path / "forged.yaml", yaml.safe_dump(data))
    with pytest.raises(BundleRefused, match="did not come from an export of this workbench database"):
        load_bundle(demo_store, forged)


def test_grade_matches_a_hand_computation(demo_store, bundle, tmp_path):
    items = write(tmp_path / "new.jsonl", "".join((DEMO_DIR / "items.jsonl").read_text().splitlines(True)[:60]))
    ids = {json.loads(l)["id"] for l in items.read_text().splitlines()}
    rows = [json.loads(l) for l in JUDGMENTS.read_text().splitlines()]
    judged = write(tmp_path / "j.jsonl", "".join(json.dumps(r) + "\n" for r in rows
                                                 if r["item_id"] in ids and r["repeat"] == 0))
    out = tmp_path / "graded.jsonl"
    r = grade(demo_store, bundle, items, judgments_file=judged, out=out, resamples=500)

    # by hand: TPR/TNR from the bundle's confusion matrix (rows humans, columns judge, pass = score >= 0)
    m = yaml.safe_load(bundle.read_text())["calibration"]["confusion"]["matrix"]
    tp = sum(m[i][j] for i in (1, 2) for j in (1, 2))
    fn = sum(m[i][0] for i in (1, 2))
    tn, fp = m[0][0], m[0][1] + m[0][2]
    tpr, tnr = tp / (tp + fn), tn / (tn + fp)
    scores = [json.loads(l)["score"] for l in judged.read_text().splitlines()]
    p_obs = sum(s >= 0 for s in scores) / len(scores)
    expected = min(1.0, max(0.0, (p_obs + tnr - 1) / (tpr + tnr - 1)))
    assert r["raw_pass_rate"]["value"] == pytest.approx(p_obs)
    assert r["tpr"] == pytest.approx(tpr) and r["tnr"] == pytest.approx(tnr)
    assert r["corrected_pass_rate"]["value"] == pytest.approx(expected)
    assert r["corrected_pass_rate"]["ci_low"] <= expected <= r["corrected_pass_rate"]["ci_high"]
    assert len(out.read_text().splitlines()) == 60 and r["ppi"] is None


def test_grade_with_some_human_labels_adds_ppi(demo_store, bundle, tmp_path):
    items = write(tmp_path / "new.jsonl", "".join((DEMO_DIR / "items.jsonl").read_text().splitlines(True)[:60]))
    ids = {json.loads(l)["id"] for l in items.read_text().splitlines()}
    judged = write(tmp_path / "j.jsonl", "".join(l + "\n" for l in JUDGMENTS.read_text().splitlines()
                                                 if json.loads(l)["item_id"] in ids and json.loads(l)["repeat"] == 0))
    labels = [json.loads(l) for l in (DEMO_DIR / "demo-patch-quality/labels.jsonl").read_text().splitlines()]
    some = [l for l in labels if l["item_id"] in sorted(ids)[:20]]
    lab = write(tmp_path / "l.jsonl", "".join(json.dumps(l) + "\n" for l in some))
    r = grade(demo_store, bundle, items, judgments_file=judged, labels_file=lab, resamples=300)
    assert r["ppi"]["n_labeled"] >= 15 and 0 <= r["ppi"]["lambda"] <= 1
    assert r["ppi"]["ci_low"] < r["ppi"]["estimate"] < r["ppi"]["ci_high"]


def test_run_export_and_grade_live_with_a_python_judge(demo_store, tmp_path):
    """The whole path with a real judge run: judge the golden set, pass the gate, export, grade new items."""
    from workbench.features.judging import service as judging
    summary = judging.run(demo_store, "demo", "demo-patch-quality", "test-results")
    assert summary["n_recorded"] == 150 and summary["complete"]
    bundle = export_bundle(demo_store, "demo", "demo-patch-quality", "test-results", out_dir=tmp_path).path
    rows = [json.loads(l) for l in (DEMO_DIR / "items.jsonl").read_text().splitlines()[:30]]
    for r in rows:
        r["id"] = "new-" + r["id"]
    items = write(tmp_path / "new.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    r = grade(demo_store, bundle, items, out=tmp_path / "graded.jsonl", resamples=300)  # runs the grader itself
    graded = [json.loads(l) for l in (tmp_path / "graded.jsonl").read_text().splitlines()]
    assert r["n_scored"] == 30 and all(g["score"] in (-1, 0, 1) and g["rationale"] for g in graded)
    assert r["raw_pass_rate"]["value"] == pytest.approx(sum(g["pass"] for g in graded) / 30)
