"""`workbench report --format eee`: the calibration result as an Every Eval Ever record, valid against its schema."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from tests.interop_export.conftest import JUDGE
from workbench.cli import main
from workbench.core.errors import WorkbenchError
from workbench.calibration.calibrate import Options, calibrate
from workbench.features.export.eee import SCHEMA_FILE, validate_eee
from workbench.core.workspace import Workspace

RESAMPLES = 300


@pytest.fixture
def record(approved) -> tuple[dict, dict]:
    r = CliRunner().invoke(main, ["report", "-g", "demo", "-r", "demo-patch-quality", "-j", JUDGE, "--format", "eee",
                                  "--resamples", str(RESAMPLES), "--organization", "Acme evals", "--db", str(approved.db), "--project",
                                  str(approved.db.parent)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    path = approved.db.parent / "reports" / f"calibration-demo-patch-quality-v2-{JUDGE}.eee.json"
    assert "Every Eval Ever schema, validated" in r.stdout
    report = calibrate(approved.store, "demo", "demo-patch-quality", JUDGE, Options(resamples=RESAMPLES),
                       workspace=Workspace.resolve(str(approved.db.parent), str(approved.db)))
    return json.loads(path.read_text()), report.to_json()


def test_record_is_valid_against_the_every_eval_ever_schema(record):
    eee, _ = record
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["version"] == eee["schema_version"] == "0.3.0"
    assert list(jsonschema.Draft7Validator(schema).iter_errors(eee)) == []
    # what the package's validator also checks beyond the schema: finite numbers, scores within their bounds
    for res in eee["evaluation_results"]:
        cfg, score = res["metric_config"], res["score_details"]["score"]
        lo = -math.inf if cfg["min_score"] == "-Infinity" else cfg["min_score"]
        assert math.isfinite(score) and lo <= score <= cfg["max_score"], res["evaluation_result_id"]


def test_intervals_are_the_reports_in_the_uncertainty_fields(record):
    eee, report = record
    results = {r["evaluation_result_id"]: r for r in eee["evaluation_results"]}
    measured = {k for k, m in report["metrics"].items() if m["value"] is not None}
    assert measured <= set(results)
    for name in measured:
        m, u = report["metrics"][name], results[name]["score_details"]["uncertainty"]
        assert results[name]["score_details"]["score"] == m["value"]
        ci = u["confidence_interval"]
        assert (ci["lower"], ci["upper"], ci["confidence_level"]) == (m["ci_low"], m["ci_high"], 0.95)
        method = report["bootstrap"]["intervals"][name]
        if method == "wilson_jeffreys":  # a closed-form interval on n items: no resamples to report
            assert ci["method"] == "Wilson and Jeffreys score" and "num_bootstrap_samples" not in u
            assert u["num_samples"] == m["n"]
        else:
            assert ci["method"].startswith("BCa bootstrap") and u["num_bootstrap_samples"] == RESAMPLES
    sp = report["self_preference"]["same_family"]
    fam = results["self_preference_same_family"]["score_details"]
    assert (fam["score"], fam["uncertainty"]["confidence_interval"]["lower"]) == (sp["value"], sp["ci_low"])
    assert "self_preference_same_model" not in results  # not measurable on the demo: left out, never a zero


def test_record_names_the_judge_its_prompt_and_its_evidence(record):
    eee, report = record
    assert eee["model_info"]["id"] == "anthropic/claude-sonnet-4-5"
    assert eee["model_info"]["additional_details"]["model_versions_seen"] == "claude-sonnet-4-5-20250929"
    exact = next(r for r in eee["evaluation_results"] if r["evaluation_result_id"] == "exact_agreement")
    scoring = exact["metric_config"]["llm_scoring"]
    assert scoring["judges"][0]["temperature"] == 0.0
    assert scoring["input_prompt"].startswith("You are a careful, impartial grader.")
    assert scoring["expert_baseline"] == report["human_ceiling"]["human_pairwise_agreement"]
    assert exact["source_data"]["additional_details"]["golden_set_version_hash"] == \
        report["golden_set"]["version_hash"]
    assert exact["generation_config"]["generation_args"] == {"temperature": 0.0, "max_tokens": 800}
    assert eee["source_metadata"]["additional_details"]["calibrated"] == "yes"
    assert eee["source_metadata"]["source_organization_name"] == "Acme evals"


def test_an_invalid_record_is_refused_by_field(record):
    eee, _ = record
    del eee["evaluation_results"][0]["source_data"]
    with pytest.raises(WorkbenchError, match="breaks its schema at 'evaluation_results/0'"):
        validate_eee(eee)


def test_vendored_schema_is_the_packages_file():
    source = (Path(SCHEMA_FILE).parent / "SOURCE.md").read_text()
    recorded = re.search(r"file sha256 `([0-9a-f]{64})`", source).group(1)
    assert hashlib.sha256(Path(SCHEMA_FILE).read_bytes()).hexdigest() == recorded
