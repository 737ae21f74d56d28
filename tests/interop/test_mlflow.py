"""MLflow 3: traces logged to a local tracking store (synchronously, before any feedback is attached), human and
LLM-judge feedback logged with mlflow.log_feedback, one judge verdict overridden and one judge call that failed
(feedback with an error); then imported from the store. (MLflow 3.18 marks an assessment invalid only when it is
overridden: ``log_assessment(Feedback(..., valid=False))`` is stored valid, so the adapter's skip of an invalid
assessment without its overrider cannot be produced by the tool here.)

The store is MLflow's file store (MLFLOW_ALLOW_FILE_STORE=true): the SQL store would need SQLAlchemy and its
migrations, which mlflow-skinny does not bring. MLflow runs in a child process so its global tracking state stays
out of the test process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import write
from tests.interop.conftest import add_qa_rubric, calibrated

# the real tool runs here (seconds of set-up): in CI and `-m ""`, not in the quick loop
pytestmark = pytest.mark.slow

pytest.importorskip("mlflow", reason="pip install 'judge-workbench[mlflow]'")

MAPS = """\
import_maps:
  correctness:
    boolean: {true: 0, false: -1}     # the reviewers' thumbs
    categorical: {"yes": 0, "no": -1}  # the LLM judge's answer
"""
# alice judges q0 and q3 wrong; bob agrees with her on q0 to q2; the judge says "no" only to q0 (so it misses q3),
# and its verdict on q5 ("no") is overridden by carol's True.
TRUTH = {f"q{i}": i % 3 != 0 for i in range(6)}

LOG = textwrap.dedent("""
    import json, sys
    import mlflow
    from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, SpanType

    uri, truth = sys.argv[1], json.loads(sys.argv[2])
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("qa")

    @mlflow.trace(span_type=SpanType.TOOL)
    def calculator(expression):
        return str(eval(expression))

    @mlflow.trace
    def answer(question):
        return f"It is {calculator(question)}."

    def source(kind, who):
        return AssessmentSource(source_type=getattr(AssessmentSourceType, kind), source_id=who)

    for q, right in truth.items():
        n = int(q[1:])
        answer(f"{n}+{n}")
        trace_id = mlflow.get_last_active_trace_id()
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=right, source=source("HUMAN", "alice"),
                            rationale="checked by hand")
        if n < 3:
            mlflow.log_feedback(trace_id=trace_id, name="correctness", value=right,
                                source=source("HUMAN", "bob@example.com"))
        judge = source("LLM_JUDGE", "openai:/gpt-4o-mini")
        if q == "q5":
            first = mlflow.log_feedback(trace_id=trace_id, name="correctness", value="no", source=judge)
            # a reviewer corrects the judge: the judge's verdict is overridden (and so not imported)
            mlflow.override_feedback(trace_id=trace_id, assessment_id=first.assessment_id, value=True,
                                     rationale="the sum is right", source=source("HUMAN", "carol"))
        else:
            mlflow.log_feedback(trace_id=trace_id, name="correctness", value="no" if q == "q0" else "yes",
                                source=judge, rationale="the judge's reasons")
        if q == "q4":
            # a second judge call that failed: an unscored repeat
            mlflow.log_feedback(trace_id=trace_id, name="correctness", source=judge,
                                error=AssessmentError(error_code="RATE_LIMIT_EXCEEDED", error_message="slow down"))
        if q == "q1":
            mlflow.log_feedback(trace_id=trace_id, name="length_ok", value=True, source=source("CODE", "len-check"))
            mlflow.log_expectation(trace_id=trace_id, name="expected_answer", value="2")
""")


@pytest.fixture(scope="module")
def store_uri(tmp_path_factory) -> str:
    uri = (tmp_path_factory.mktemp("mlflow") / "mlruns").as_uri()
    subprocess.run([sys.executable, "-c", LOG, uri, json.dumps(TRUTH)], check=True, timeout=300,
                   # traces are exported synchronously: each is in the store before feedback is attached to it
                   env={**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"})
    return uri


@pytest.fixture(autouse=True)
def file_store_allowed(monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")


def test_traces_and_feedback_from_a_tracking_store_are_imported_and_calibrate(store_uri, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "mlflow", f"{store_uri}#experiment=qa", "-g", "qa", "-r", "qa")
    assert r.exit_code == 0, r.output
    assert "items: 6 read, 6 added" in r.output
    assert "labels: 10 read, 10 added or changed (raters: alice, bob@example.com, carol)" in r.output
    judge = "mlflow.correctness@gpt-4o-mini"
    assert f"judgments of {judge} (imported/mlflow/gpt-4o-mini, added to the rubric): 6 read (1 unscored)" in r.output
    assert "skipped: 3 (" in r.output
    for why in ("overridden assessment: 1", "CODE feedback (not a human or an LLM judge): 1",
                "expectation (not a rating): 1"):
        assert why in r.output

    report = calibrated(store, "qa", judge, tmp_path)
    assert report["judge"]["family"] == "openai"
    assert report["n_items"] == 5  # q5's only verdict was overridden
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(4 / 5)  # q3 only: "yes" against alice


def test_spans_become_the_trajectory_and_an_exported_file_reads_the_same(store_uri, store, tmp_path):
    import mlflow

    from workbench.calibration.golden_sets import load_items
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    client = mlflow.MlflowClient(tracking_uri=store_uri)
    exp = client.get_experiment_by_name("qa")
    exported = write(tmp_path / "traces.json", json.dumps(
        [t.to_dict() for t in client.search_traces(locations=[exp.experiment_id])]))
    from_file = import_from(store, "mlflow", str(exported), "qa", "qa")
    from_store = import_from(store, "mlflow", f"{store_uri}#experiment=qa", "qa", "qa")
    assert from_file.items_read == 6 and from_store.items_added == 0  # the same items, already there
    item = next(i for i in load_items(store, "qa") if i.input == "2+2")
    assert item.output == "It is 4." and item.trajectory == [{"role": "tool", "content": "4", "name": "calculator"}]


def test_a_tracking_uri_without_an_experiment_is_refused(store, tmp_path):
    from workbench.core.errors import InputError
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    with pytest.raises(InputError, match="names no experiment; add it after '#'"):
        import_from(store, "mlflow", "sqlite:///mlflow.db", "qa", "qa")
