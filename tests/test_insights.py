"""Read models of the lead pages: disagreements, item evidence, the drift timeline."""

from __future__ import annotations

from tests.conftest import DEMO_DIR, DEMO_RUBRIC, write
from workbench.features.importing.service import import_judgments
from workbench.calibration.insights import disagreements, drift_timeline, item_evidence
from workbench.calibration.rubric_versions import add_rubric


def test_disagreements_are_the_items_where_judge_and_consensus_differ(demo_store):
    df = disagreements(demo_store, "demo", "demo-patch-quality", "lenient-mini")
    assert len(df) > 30 and (df["judge"] != df["consensus"]).all()
    assert (df["gap"] > 0).mean() > 0.9  # a lenient judge errs upwards
    assert list(df["abs_gap"]) == sorted(df["abs_gap"], reverse=True)


def test_item_evidence_has_labels_rationales_and_the_agentic_trace(demo_store):
    ev = item_evidence(demo_store, "demo", "demo-patch-quality", "careful-sonnet", "demo-0001")
    assert ev["item"].id == "demo-0001" and len(ev["labels"]) >= 2
    assert [j["repeat"] for j in ev["judgments"]] == [0, 1]
    assert ev["judgments"][0]["trace"][-1]["tool"] == "submit_verdict" and ev["judgments"][0]["evidence_steps"]


def test_drift_timeline_flags_the_drifting_run(demo_store):
    rows = drift_timeline(demo_store, "demo", "demo-patch-quality", "noisy-llama")
    assert [r["run"] for r in rows] == ["run-1", "run-2"]
    assert rows[1]["significant"] and rows[1]["alpha_change"] < -0.2 and rows[1]["stuart_maxwell_p"] < 0.01


def test_drift_timeline_spans_rubric_versions(demo_store, tmp_path):
    text = DEMO_RUBRIC.read_text().replace("Cite the steps", "Always cite the steps")
    assert add_rubric(demo_store, write(tmp_path / "v2.yaml", text)).version == 2
    import_judgments(demo_store, DEMO_DIR / "demo-patch-quality/judgments/lenient-mini.jsonl", "demo",
                     "demo-patch-quality", "lenient-mini")
    rows = drift_timeline(demo_store, "demo", "demo-patch-quality", "lenient-mini")
    assert [(r["run"], r["rubric_version"]) for r in rows] == [("v1 run-1", 1), (f"v2 {rows[1]['run'][3:]}", 2)]
    assert rows[0]["alpha"] == rows[1]["alpha"] and not rows[1]["significant"]  # same verdicts, no drift
