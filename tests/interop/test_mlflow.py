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


# --------------------------------------------------------------------------- a store that grew since the last import

GROW = textwrap.dedent("""
    import sys
    import mlflow
    from mlflow.entities import AssessmentSource, AssessmentSourceType

    uri, phase = sys.argv[1], sys.argv[2]
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("qa")

    @mlflow.trace
    def answer(question):
        return f"It is {eval(question)}."

    def source(kind, who):
        return AssessmentSource(source_type=getattr(AssessmentSourceType, kind), source_id=who)

    judge = source("LLM_JUDGE", "openai:/gpt-4o-mini")
    new = range(4) if phase == "1" else range(4, 6)
    for n in new:
        answer(f"{n}+{n}")
        trace_id = mlflow.get_last_active_trace_id()
        right = n % 3 != 0
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=right, source=source("HUMAN", "alice"))
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value="yes" if n else "no", source=judge)
    if phase == "2":  # feedback that arrived later on a trace imported before: a second reviewer, a second verdict
        client = mlflow.MlflowClient()
        exp = client.get_experiment_by_name("qa")
        first = client.search_traces(locations=[exp.experiment_id], order_by=["timestamp_ms ASC"])[1]
        mlflow.log_feedback(trace_id=first.info.trace_id, name="correctness", value=True,
                            source=source("HUMAN", "bob@example.com"))
        mlflow.log_feedback(trace_id=first.info.trace_id, name="correctness", value="no", source=judge)
""")


def _log(uri: str, phase: str) -> None:
    subprocess.run([sys.executable, "-c", GROW, uri, phase], check=True, timeout=300,
                   env={**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"})


def _grown(kind: str, tmp_path) -> str:
    if kind == "sqlite":
        pytest.importorskip("sqlalchemy", reason="MLflow's SQL store needs SQLAlchemy and alembic")
        pytest.importorskip("alembic", reason="MLflow's SQL store needs SQLAlchemy and alembic")
    return (tmp_path / "mlruns").as_uri() if kind == "file" else f"sqlite:///{tmp_path / 'mlflow.db'}"


def _verdicts(store, judge: str) -> list[tuple]:
    from workbench.calibration.rubric_versions import get_rubric, judge_row

    row = judge_row(store, get_rubric(store, "qa").id, judge)
    return sorted((j["run_name"], j["item_id"], j["repeat"], j["score"], j["created_at"])
                  for j in store.judgments(store.golden_set("qa").id, row.pk))


JUDGE = "mlflow.correctness@gpt-4o-mini"


@pytest.mark.parametrize("kind", ["file", "sqlite"])
def test_a_store_that_grew_adds_its_new_traces_and_labels_and_again_nothing(kind, store, tmp_path):
    """Import, log more traces and feedback with MLflow's API (new traces, and a second reviewer on a trace
    imported before), import again: only the new traces and labels land; a third import adds nothing."""
    from workbench.features.interop.service import import_from

    tracking = _grown(kind, tmp_path)
    uri = f"{tracking}#experiment=qa"
    add_qa_rubric(store, tmp_path, MAPS)
    _log(tracking, "1")
    first = import_from(store, "mlflow", uri, "qa", "qa")
    assert (first.items_added, first.labels_added, first.judges[0].added) == (4, 4, 4)
    _log(tracking, "2")
    second = import_from(store, "mlflow", uri, "qa", "qa")
    assert (second.items_read, second.items_added) == (6, 2)
    assert (second.labels_read, second.labels_added) == (7, 3)  # alice on the two new traces, bob on an earlier one
    assert second.raters == ["alice", "bob@example.com"]
    after = _verdicts(store, JUDGE)
    third = import_from(store, "mlflow", uri, "qa", "qa")
    assert third.nothing_new and _verdicts(store, JUDGE) == after


def test_a_store_that_grew_adds_only_its_new_verdicts(store, tmp_path):
    """The judge's feedback on the new traces, and its second verdict on a trace imported before, are the only
    verdicts the second import adds; the earlier ones are unchanged; no trace is judged twice at one repeat."""
    from workbench.features.interop.service import import_from

    tracking = _grown("file", tmp_path)
    uri = f"{tracking}#experiment=qa"
    add_qa_rubric(store, tmp_path, MAPS)
    _log(tracking, "1")
    import_from(store, "mlflow", uri, "qa", "qa")
    before = _verdicts(store, JUDGE)
    _log(tracking, "2")
    second = import_from(store, "mlflow", uri, "qa", "qa")
    assert [(j.read, j.added) for j in second.judges] == [(7, 3)]  # q4, q5, and a second verdict on q1
    after = _verdicts(store, JUDGE)
    assert set(before) <= set(after) and len(after) == 7
    assert len({(item, repeat) for _, item, repeat, *_ in after}) == 7


EVALUATE = textwrap.dedent("""
    import sys
    import mlflow
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback
    from mlflow.genai.scorers import scorer

    uri, phase = sys.argv[1], sys.argv[2]
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("qa")

    @mlflow.trace
    def answer(question):
        return f"It is {eval(question)}."

    judge = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id="openai:/gpt-4o-mini")

    @scorer(name="correctness")
    def correctness(inputs, outputs):  # stands in for an LLM judge: says "no" to the sums of multiples of 3
        n = int(str(inputs).split("+")[0].strip("{}'\\" question:"))
        return Feedback(name="correctness", value="no" if n % 3 == 0 else "yes", source=judge, rationale="checked")

    new = range(4) if phase == "1" else range(4, 6)
    ids = []
    for n in new:
        answer(f"{n}+{n}")
        ids.append(mlflow.get_last_active_trace_id())
    traces = mlflow.search_traces(locations=[mlflow.get_experiment_by_name("qa").experiment_id])
    # the evaluation judges the traces this phase logged (given as search_traces' frame, they are judged in place)
    mlflow.genai.evaluate(data=traces[traces["trace_id"].isin(ids)], scorers=[correctness])
    for n, trace_id in zip(new, ids):  # then a reviewer labels them
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=n % 3 != 0,
                            source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="alice"))
""")


def test_a_store_that_grew_by_an_evaluation_adds_it_as_a_new_run(store, tmp_path):
    """Traces judged by mlflow.genai.evaluate (in a SQLite tracking store), imported; more traces judged by a second evaluation, imported
    again: the second evaluation is a new run of the judge holding only its verdicts, the first run unchanged, each
    (trace, repeat) once per run; a third import of the unchanged store adds nothing."""
    from mlflow.tracing.constant import AssessmentMetadataKey

    from workbench.features.interop.mlflow import SOURCE_RUN_ID
    from workbench.features.interop.service import import_from

    assert SOURCE_RUN_ID == AssessmentMetadataKey.SOURCE_RUN_ID  # the key the adapter reads is MLflow's
    # the SQL store: MLflow's file store cannot link traces to a run, so evaluate would judge copies of them
    tracking = _grown("sqlite", tmp_path)
    uri = f"{tracking}#experiment=qa"
    add_qa_rubric(store, tmp_path, MAPS)

    def evaluate(phase: str) -> None:
        subprocess.run([sys.executable, "-c", EVALUATE, tracking, phase], check=True, timeout=300,
                       env={**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true",
                            "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"})

    evaluate("1")
    first = import_from(store, "mlflow", uri, "qa", "qa")
    assert (first.items_added, first.labels_added, first.judges[0].added) == (4, 4, 4)
    before = _verdicts(store, JUDGE)
    evaluate("2")
    second = import_from(store, "mlflow", uri, "qa", "qa")
    assert (second.items_added, second.labels_added) == (2, 2)
    assert [(j.read, j.added) for j in second.judges] == [(6, 2)]
    after = _verdicts(store, JUDGE)
    assert set(before) <= set(after) and len(after) == 6
    runs = {run for run, *_ in after}
    assert len(runs) == 2
    new = sorted((item_id, repeat, score) for run, item_id, repeat, score, _ in after if run not in
                 {r for r, *_ in before})
    assert [(repeat, score) for _, repeat, score in new] == [(0, 0), (0, 0)]  # q4 and q5: "yes"

    report = calibrated(store, "qa", JUDGE, tmp_path)  # the latest run: the second evaluation
    assert report["n_items"] == 2 and report["metrics"]["exact_agreement"]["value"] == pytest.approx(1.0)
    third = import_from(store, "mlflow", uri, "qa", "qa")
    assert third.nothing_new and _verdicts(store, JUDGE) == after
