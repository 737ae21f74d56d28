"""`workbench calibrate` and `compare`: the report object of DESIGN section 8, caching, comparisons."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import DEMO_DIR, DEMO_RUBRIC, write
from workbench.calibration.calibrate import Options, calibrate, compare
from workbench.features.labeling.service import submit_label

DESIGN_KEYS = {"schema", "golden_set", "rubric", "judge", "n_items", "n_unresolved", "n_unscored", "bootstrap",
               "metrics", "confusion", "human_ceiling", "alt_test", "self_preference", "noise", "drift", "verdict"}
METRICS = {"exact_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
           "krippendorff_alpha_ordinal", "spearman", "mean_signed_error", "tpr", "tnr"}


def strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_calibrate_json_is_the_design_object(cli):
    cli("demo", "--no-ui")
    r = cli("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "noisy-llama", "--json", "--resamples", "300",
            "--seed", "7")
    rep = strict_json(r.output)
    assert DESIGN_KEYS <= set(rep)
    assert rep["schema"] == "workbench.calibration/1"
    assert set(rep["golden_set"]) >= {"name", "version_hash"} and set(rep["rubric"]) >= {"name", "version", "hash"}
    assert set(rep["judge"]) >= {"id", "model", "family", "config_hash"}
    intervals = rep["bootstrap"].pop("intervals")
    assert rep["bootstrap"] == {"resamples": 300, "seed": 7, "cluster": True, "level": 0.95}
    assert intervals["tnr"] == "wilson_jeffreys" and intervals["krippendorff_alpha_ordinal"] == "bca"
    assert METRICS <= set(rep["metrics"])
    for name, m in rep["metrics"].items():
        assert {"value", "ci_low", "ci_high"} <= set(m) and m["ci_low"] <= m["value"] <= m["ci_high"]
    # every proportion carries its denominator (issue 10)
    den = rep["denominators"]
    assert (rep["metrics"]["tpr"]["n"], rep["metrics"]["tnr"]["n"]) == (den["n_pos"], den["n_neg"])
    assert den["n_pos"] + den["n_neg"] == rep["n_items"] == rep["metrics"]["exact_agreement"]["n"]
    for cat in rep["per_category"].values():
        assert cat["exact_agreement"]["n"] == cat["n_items"] and "worse_than_rest" in cat
    assert rep["confusion"]["labels"] == [-1, 0, 1] and sum(map(sum, rep["confusion"]["matrix"])) == rep["n_items"]
    assert set(rep["alt_test"]) >= {"epsilon", "metric", "q", "winning_rate", "advantage_probability", "passed",
                                    "raters"}
    for effect in ("same_model", "same_family"):
        assert set(rep["self_preference"][effect]) >= {"value", "ci_low", "ci_high", "n", "p_value"}
    assert rep["noise"]["flip_rate"] > 0.1 and rep["drift"]["baseline_run"] == "run-1"
    assert rep["verdict"]["calibrated"] is False
    assert {c["id"] for c in rep["verdict"]["checks"]} >= {"evidence", "agreement", "stable", "no_drift"}


def test_same_model_effect_is_measured_from_the_bare_model_name(demo_store):
    rep = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=200))
    # openai/gpt-4o produced the demo's openai items: the same-model effect exists and equals the family's
    assert rep.self_preference.same_model.value == pytest.approx(0.585, abs=0.01)


def test_readable_table(cli):
    cli("demo", "--no-ui")
    out = cli("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet").output
    assert out.startswith("CALIBRATED: judge careful-sonnet") and "[PASS] agreement" in out


def test_reports_are_cached_by_their_inputs(demo_store):
    opts = Options(resamples=200)
    first = calibrate(demo_store, "demo", "demo-patch-quality", "lenient-mini", opts)
    count = lambda: demo_store.conn.execute("SELECT count(*) FROM reports").fetchone()[0]  # noqa: E731
    n = count()
    assert calibrate(demo_store, "demo", "demo-patch-quality", "lenient-mini", opts) == first
    assert count() == n  # read back, not recomputed
    submit_label(demo_store, "demo", "demo-patch-quality", "demo-0000", "dora", 1, "fixes it")  # new inputs
    calibrate(demo_store, "demo", "demo-patch-quality", "lenient-mini", opts)
    assert count() == n + 2  # the report under its data key and under the quick data-version key
    # a changed adjudication changes them, even one given an old created_at by its file
    from workbench.features.importing.service import import_adjudications
    from tests.conftest import write
    import tempfile
    from pathlib import Path
    f = write(Path(tempfile.mkdtemp()) / "adj.jsonl", '{"item_id": "demo-0001", "score": -1, "lead": "lead", '
              '"created_at": "2020-01-01T00:00:00+00:00"}\n')
    import_adjudications(demo_store, f, "demo", "demo-patch-quality")
    calibrate(demo_store, "demo", "demo-patch-quality", "lenient-mini", opts)
    assert count() == n + 4


def test_the_cache_fingerprint_tells_an_unscored_judgment_from_a_score():
    import pandas as pd
    from workbench.calibration.calibrate import _digest
    scored = pd.DataFrame({"item_id": ["a", "b"], "score": [1, 0]})
    unscored = pd.DataFrame({"item_id": ["a", "b"], "score": [1, None]})
    assert _digest(scored) != _digest(unscored) == _digest(unscored.copy())


def test_seed_makes_intervals_reproducible(demo_store):
    a = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=300, seed=3),
                  use_cache=False)
    b = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=300, seed=3),
                  use_cache=False)
    c = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=300, seed=4),
                  use_cache=False)
    assert a.metrics == b.metrics and a.metrics != c.metrics


def test_compare_finds_the_significant_differences(demo_store, cli):
    result = compare(demo_store, "demo", "demo-patch-quality", Options(resamples=500))
    assert result.best == "careful-sonnet"
    diffs = {d.judge: d for d in result.differences}
    assert set(diffs) == {"lenient-mini", "gpt4o-self", "noisy-llama"}
    assert all(d.significant and d.ci_high < 0 for d in diffs.values())
    cli("demo", "--no-ui")
    out = cli("compare", "-g", "demo", "-r", "demo-patch-quality", "--resamples", "300").output
    assert "careful-sonnet" in out and "calibrated" in out and "significant" in out
    header, *rows = out.splitlines()
    # the column is the mean *signed* error: named so, and printed with its sign (lenient-mini is +0.34)
    assert "MSE" not in header and "signed err" in header
    assert re.search(r"^lenient-mini .* \+0\.3\d ", next(r for r in rows if r.startswith("lenient-mini")))


def test_compare_says_unknown_for_a_judge_without_costs(cli, tmp_path):
    """Imported judgments that carry no cost: the table says 'unknown', never $0.00."""
    sub = DEMO_DIR / "demo-patch-quality"
    cli("rubric", "add", DEMO_RUBRIC)
    cli("import", "items", DEMO_DIR / "items.jsonl", "-g", "g")
    cli("import", "labels", "--new-raters", sub / "labels.jsonl", "-g", "g", "-r", "demo-patch-quality")
    rows = [json.loads(line) for line in (sub / "judgments/lenient-mini.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("cost_usd", None)
    path = write(tmp_path / "free.jsonl", "\n".join(json.dumps(r) for r in rows))
    assert cli("import", "judgments", path, "-g", "g", "-r", "demo-patch-quality", "-j", "lenient-mini").exit_code == 0
    out = cli("compare", "-g", "g", "-r", "demo-patch-quality", "--resamples", "200").output
    row = next(r for r in out.splitlines() if r.startswith("lenient-mini"))
    assert " unknown " in row and "$0.00" not in row


def test_unknown_judge_and_missing_judgments(demo_store):
    from workbench.core.errors import NotFound
    with pytest.raises(NotFound, match="declares no judge 'nobody'"):
        calibrate(demo_store, "demo", "demo-patch-quality", "nobody")


def test_noise_floor_answers_how_many_more_labels(demo_store):
    wide = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=400, target_width=0.2))
    narrow = calibrate(demo_store, "demo", "demo-patch-quality", "gpt4o-self", Options(resamples=400, target_width=0.05))
    a_wide = wide.noise_floor.metrics["krippendorff_alpha_ordinal"]
    a_narrow = narrow.noise_floor.metrics["krippendorff_alpha_ordinal"]
    alpha = wide.metric("krippendorff_alpha_ordinal")
    width_now = alpha.ci_high - alpha.ci_low
    assert width_now < 0.2 and a_wide.additional_items == 0  # already narrower than asked
    # the interval narrows as 1/sqrt(n): width w needs about n * (current width / w)^2 items
    expected = wide.n_items * (width_now / 0.05) ** 2
    assert 0.75 * expected < a_narrow.items_needed < 1.25 * expected
    assert a_narrow.additional_items == a_narrow.items_needed - wide.n_items
    assert 0 < a_wide.min_detectable_difference < 0.5
