"""`export --selective` carries the threshold in the bundle (under its sha256); `grade` with such a bundle grades
the kept items, abstains on the rest, and `--queue G2` puts exactly the abstained items into G2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.conftest import DEMO_DIR, write

RUBRIC = "demo-patch-quality"
BUNDLE = "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml"


def _judgments(tmp_path, confidence):
    """The first 40 demo items' recorded careful-sonnet verdicts (repeat 0), with a planted confidence each."""
    lines = [json.loads(l) for l in (DEMO_DIR / RUBRIC / "judgments" / "careful-sonnet.jsonl").read_text().splitlines()
             if json.loads(l).get("repeat", 0) == 0][:40]
    rows = []
    for n, d in enumerate(lines):
        c = confidence(n)
        if c is not None:
            d["confidence"] = c
        rows.append(d)
    items = [json.loads(l) for l in (DEMO_DIR / "items.jsonl").read_text().splitlines()[:40]]
    return (write(tmp_path / "new_items.jsonl", "".join(json.dumps(i) + "\n" for i in items)),
            write(tmp_path / "nj.jsonl", "".join(json.dumps(r) + "\n" for r in rows)), [r["item_id"] for r in rows])


def test_selective_bundle_grades_kept_items_and_queues_the_rest(cli, tmp_path):
    cli("demo", "--no-ui")
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement", "0.85",
            "--risk", "0.1", "--resamples", "200")
    assert r.exit_code == 0, r.output
    bundle = yaml.safe_load((tmp_path / BUNDLE).read_text())
    sel = bundle["selective"]
    # the same numbers calibrate --selective gives (two repeats an item: confidence 0.5 or 1)
    c = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective",
                       "--target-agreement", "0.85", "--risk", "0.1", "--json", "--resamples", "200").output)["selective"]
    assert {k: sel[k] for k in ("threshold", "target", "risk", "coverage")} == \
           {k: c[k] for k in ("threshold", "target", "risk", "coverage")}
    assert cli("check", tmp_path / BUNDLE).exit_code == 0  # the sha256 covers the section
    # the confusion on the kept items: as many as coverage says, agreeing on the diagonal as agreement says
    matrix = np.array(sel["confusion"]["matrix"])
    assert matrix.sum() == round(sel["coverage"] * sel["n_calibration"])
    assert np.trace(matrix) / matrix.sum() == pytest.approx(sel["agreement"])
    # planted: every fourth item below the threshold, one with no confidence at all
    items, judgments, ids = _judgments(tmp_path, lambda n: None if n == 1 else (0.0 if n % 4 == 0 else 1.0))
    r = cli("grade", "--bundle", tmp_path / BUNDLE, "--items", items, "--judgments", judgments, "--json",
            "--queue", "review-me")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.split("\nPer-item results")[0])
    expected = [i for n, i in enumerate(ids) if n == 1 or n % 4 == 0]
    assert out["abstained_ids"] == expected and out["n_abstained"] == 11
    assert out["share_abstained"] == 11 / 40 and out["n_items"] == 40
    assert out["n_scored"] + out["n_unscored"] == 40 - 11
    graded = [json.loads(l) for l in (tmp_path / "reports" / "new_items.graded.jsonl").read_text().splitlines()]
    assert {g["item_id"] for g in graded} == set(ids) - set(expected)
    assert out["selective"]["corrected_with"] == "confusion on kept items"
    from workbench.stats import golden_pass_arrays
    human, judge = golden_pass_arrays(matrix, scale=[-1, 0, 1], pass_threshold=0)
    assert out["tpr"] == pytest.approx(judge[human].mean()) and out["tnr"] == pytest.approx((~judge[~human]).mean())
    raw = out["raw_pass_rate"]["value"]
    assert raw == sum(g["pass"] for g in graded if g["score"] is not None) / out["n_scored"]
    assert "review-me\t11 items" in cli("golden-set", "list").output
    from workbench.calibration.golden_sets import load_items
    from workbench.store import Store
    with Store(cli.db) as s:
        assert sorted(i.id for i in load_items(s, "review-me")) == sorted(expected)  # exactly the abstained ones
    # grading again adds nothing twice to the queue
    cli("grade", "--bundle", tmp_path / BUNDLE, "--items", items, "--judgments", judgments, "--queue", "review-me")
    assert "review-me\t11 items" in cli("golden-set", "list").output


def test_selective_export_refused_when_no_threshold_qualifies(cli, tmp_path):
    cli("demo", "--no-ui")
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement", "0.99",
            "--risk", "0.1", "--resamples", "200")
    assert r.exit_code == 3  # refused like the gate: the selective check blocks the export
    assert ("[UNDECIDED] selective guarantee: No confidence threshold of judge 'careful-sonnet' reaches 99% agreement"
            in r.output)
    assert "workbench plan" not in r.output  # plan knows the whole-set checks, not this one
    # nothing written: the only approved bundle is the demo's own board grader, in its own folder
    approved = tmp_path / "rubrics" / "approved"
    assert not (tmp_path / BUNDLE).exists()
    assert [p.relative_to(approved).parts[0] for p in approved.rglob("*") if p.is_file()] == ["demo-board"]


def test_a_plain_bundle_grades_as_before(cli, tmp_path):
    cli("demo", "--no-ui")
    assert cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200").exit_code == 0
    assert "selective" not in yaml.safe_load((tmp_path / BUNDLE).read_text())
    items, judgments, _ = _judgments(tmp_path, lambda n: 0.0)
    out = json.loads(cli("grade", "--bundle", tmp_path / BUNDLE, "--items", items, "--judgments", judgments,
                         "--json").output.split("\nPer-item results")[0])
    assert "n_abstained" not in out and out["n_scored"] + out["n_unscored"] == 40
