"""`workbench export-labels`: every human label of a golden set written back once, as JSON Lines, as MLflow HUMAN
feedback (a real local tracking store, read back with MLflow's own API) or as Langfuse score-create events.

MLflow: traces with human feedback are logged by MLflow itself (in a child process, so its global tracking state
stays out of this one) into a SQLite store (when SQLAlchemy and Alembic, which MLflow's SQL store needs and
mlflow-skinny does not bring, are installed) and into MLflow's file store; the golden set is imported from that
store, so its labels must land on the traces they came from. Langfuse cannot run here: the items come from the
hand-written API responses of tests/interop/fixtures/langfuse (their README cites the documentation), and each
written event body is validated by the Langfuse SDK's own ``ScoreBody`` model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import write
from tests.interop.conftest import add_qa_rubric
from workbench.core.errors import InputError, NotFound
from workbench.features.interop.writeback import export_labels

FIXTURES = Path(__file__).with_name("fixtures") / "langfuse"
OTHER_RUBRIC = """\
name: tone
title: The tone is polite
instructions: Grade the tone.
"""


def _golden_set(cli, store, tmp_path: Path) -> None:
    """Three items; alice and bob label them under 'qa', alice one of them under 'tone' too."""
    add_qa_rubric(store, tmp_path)
    cli("rubric", "add", write(tmp_path / "rubrics" / "tone.yaml", OTHER_RUBRIC))
    items = write(tmp_path / "items.jsonl", "".join(
        json.dumps({"id": f"i{n}", "input": f"{n}+{n}", "output": str(2 * n)}) + "\n" for n in range(3)))
    assert cli("import", "items", items, "-g", "g").exit_code == 0
    _label(cli, tmp_path, "qa", [("i0", "alice", 0, "right"), ("i1", "alice", -1, None), ("i2", "alice", 1, "neat"),
                                 ("i0", "bob", 0, None), ("i1", "bob", 0, "close enough")])
    _label(cli, tmp_path, "tone", [("i2", "alice", -1, "curt")])


def _label(cli, tmp_path: Path, rubric: str, labels: list[tuple], golden_set: str = "g") -> None:
    f = write(tmp_path / f"labels-{rubric}.jsonl", "".join(
        json.dumps({"item_id": i, "rater": r, "score": s, "rationale": why}) + "\n" for i, r, s, why in labels))
    r = cli("import", "labels", "--new-raters", f, "-g", golden_set, "-r", rubric)
    assert r.exit_code == 0, r.output


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------- jsonl

def test_jsonl_holds_every_label_once_and_twice_the_same_file(cli, store, tmp_path):
    _golden_set(cli, store, tmp_path)
    out = tmp_path / "out" / "labels.jsonl"
    r = cli("export-labels", "--golden-set", "g", "--to", "jsonl", out)
    assert r.exit_code == 0, r.output
    assert "6 labels written to" in r.output
    rows = _lines(out)
    assert sorted((x["item_id"], x["rater"], x["rubric"], x["score"]) for x in rows) == sorted([
        ("i0", "alice", "qa", 0), ("i1", "alice", "qa", -1), ("i2", "alice", "qa", 1), ("i0", "bob", "qa", 0),
        ("i1", "bob", "qa", 0), ("i2", "alice", "tone", -1)])
    first = next(x for x in rows if (x["item_id"], x["rater"], x["rubric"]) == ("i1", "bob", "qa"))
    assert first["rationale"] == "close enough" and first["level"] == "competent pass" and first["rubric_version"] == 1
    before = out.read_bytes()
    assert cli("export-labels", "-g", "g", "--to", "jsonl", out).exit_code == 0
    assert out.read_bytes() == before


def test_a_label_changed_after_an_export_goes_out_with_its_latest_value(cli, store, tmp_path):
    _golden_set(cli, store, tmp_path)
    out = tmp_path / "labels.jsonl"
    export_labels(store, "g", "jsonl", str(out))
    _label(cli, tmp_path, "qa", [("i1", "alice", 0, "on second thought")])
    export_labels(store, "g", "jsonl", str(out))
    rows = [x for x in _lines(out) if (x["item_id"], x["rater"], x["rubric"]) == ("i1", "alice", "qa")]
    assert [(x["score"], x["rationale"]) for x in rows] == [(0, "on second thought")]
    assert len(_lines(out)) == 6


def test_rubric_selects_its_labels_and_unknown_names_are_refused(cli, store, tmp_path):
    _golden_set(cli, store, tmp_path)
    out = tmp_path / "tone.jsonl"
    assert export_labels(store, "g", "jsonl", str(out), rubric="tone").labels == 1
    assert [(x["item_id"], x["rubric"], x["level"]) for x in _lines(out)] == [("i2", "tone", "fail")]
    with pytest.raises(NotFound, match="no rubric 'nope'"):
        export_labels(store, "g", "jsonl", str(out), rubric="nope")
    r = cli("export-labels", "-g", "missing", "--to", "jsonl", out)
    assert r.exit_code == 1 and "missing" in r.output and "Traceback" not in r.output


def test_a_golden_set_without_labels_is_said_and_nothing_is_written(cli, store, tmp_path):
    add_qa_rubric(store, tmp_path)
    cli("import", "items", write(tmp_path / "items.jsonl", '{"id": "i0", "input": "x", "output": "y"}\n'), "-g", "g")
    out = tmp_path / "labels.jsonl"
    r = cli("export-labels", "-g", "g", "--to", "jsonl", out)
    assert r.exit_code == 1 and "golden set 'g' has no human labels" in r.output
    assert not out.exists()


# --------------------------------------------------------------------------- langfuse

def _from_langfuse(cli, store, tmp_path: Path) -> None:
    """The golden set of the Langfuse fixtures (user-ana and user-ben annotate traces), and a label of carol's on
    the one observation (obs-1 of trace-1)."""
    add_qa_rubric(store, tmp_path, "import_maps:\n  correctness: {boolean: {true: 0, false: -1}, cut_points: [0.5], "
                                   "levels: [-1, 0], range: [0, 1]}\n  groundedness: {cut_points: [0.5], "
                                   "levels: [-1, 0]}\n  user-feedback: {boolean: {true: 0, false: -1}}\n")
    r = cli("import", "--from", "langfuse", FIXTURES, "-g", "g", "-r", "qa")
    assert r.exit_code == 0, r.output
    _label(cli, tmp_path, "qa", [("obs-1", "carol", 1, "well grounded")])


def _score_bodies(path: Path) -> list:
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    from langfuse.api.scores.types.score_body import ScoreBody

    events = json.loads(path.read_text(encoding="utf-8"))["batch"]
    assert {e["type"] for e in events} == {"score-create"}
    assert len({e["id"] for e in events}) == len(events)  # event ids deduplicate: one per label
    return [parse_obj_as(ScoreBody, e["body"]) for e in events]


def test_langfuse_score_events_land_on_the_traces_the_labels_came_from(cli, store, tmp_path):
    _from_langfuse(cli, store, tmp_path)
    out = tmp_path / "scores.json"
    r = cli("export-labels", "-g", "g", "--to", "langfuse", out)
    assert r.exit_code == 0, r.output
    bodies = _score_bodies(out)
    got = sorted((b.trace_id, b.observation_id or "", b.authorUserId, b.value) for b in bodies)
    # user-ana's six annotations and user-ben's three (true -> 0, false -> -1), carol's on the observation
    assert got == sorted([("trace-1", "", "user-ana", 0), ("trace-2", "", "user-ana", -1),
                          ("trace-3", "", "user-ana", 0), ("trace-4", "", "user-ana", -1),
                          ("trace-5", "", "user-ana", -1), ("trace-6", "", "user-ana", 0),
                          ("trace-1", "", "user-ben", 0), ("trace-2", "", "user-ben", -1),
                          ("trace-3", "", "user-ben", 0), ("trace-1", "obs-1", "carol", 1)])
    for b in bodies:
        assert b.name == "qa" and b.source == "ANNOTATION" and b.data_type == "NUMERIC"
        assert b.metadata["item_id"] == (b.observation_id or b.trace_id) and b.metadata["rater"] == b.authorUserId
    assert next(b for b in bodies if b.authorUserId == "carol").comment == "well grounded"


def test_langfuse_categorical_scores_carry_the_levels_label_and_a_changed_label_keeps_its_score_id(
        cli, store, tmp_path):
    _from_langfuse(cli, store, tmp_path)
    out = tmp_path / "scores.json"
    export_labels(store, "g", "langfuse", str(out), data_type="categorical")
    before = out.read_bytes()
    bodies = _score_bodies(out)
    assert {b.data_type for b in bodies} == {"CATEGORICAL"}
    assert {(b.authorUserId, b.value) for b in bodies if b.trace_id == "trace-2"} == {("user-ana", "fail"),
                                                                                     ("user-ben", "fail")}
    export_labels(store, "g", "langfuse", str(out), data_type="categorical")
    assert out.read_bytes() == before  # the same labels: the same file

    _label(cli, tmp_path, "qa", [("trace-2", "user-ben", 0, "fine after all")])
    export_labels(store, "g", "langfuse", str(out), data_type="categorical")
    after = _score_bodies(out)
    ben = [b for b in after if (b.trace_id, b.authorUserId) == ("trace-2", "user-ben")]
    assert [(b.value, b.comment) for b in ben] == [("competent pass", "fine after all")]
    old = next(b for b in bodies if (b.trace_id, b.authorUserId) == ("trace-2", "user-ben"))
    assert ben[0].id == old.id  # Langfuse upserts on the score id: the changed label replaces the old score
    assert len(after) == len(bodies)


def test_a_label_of_an_item_not_from_langfuse_names_the_item_as_its_trace(cli, store, tmp_path):
    _golden_set(cli, store, tmp_path)
    out = tmp_path / "scores.json"
    export_labels(store, "g", "langfuse", str(out), rubric="tone")
    (body,) = _score_bodies(out)
    assert (body.trace_id, body.observation_id, body.name, body.value) == ("i2", None, "tone", -1)


# --------------------------------------------------------------------------- mlflow

LOG = textwrap.dedent("""
    import json, sys
    import mlflow
    from mlflow.entities import AssessmentSource, AssessmentSourceType

    uri = sys.argv[1]
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("qa")

    @mlflow.trace
    def answer(question):
        return f"It is {eval(question)}."

    ids = {}
    for n in range(3):
        answer(f"{n}+{n}")
        trace_id = mlflow.get_last_active_trace_id()
        ids[f"{n}+{n}"] = trace_id
        human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="alice")
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=n != 1, source=human)
    print(json.dumps(ids))
""")

STORES = ["sqlite", "file"]


def _store_uri(kind: str, tmp_path: Path) -> str:
    if kind == "sqlite":  # MLflow's SQLite store needs sqlalchemy and alembic: the test extra declares them
        return f"sqlite:///{tmp_path / 'mlflow.db'}"
    return (tmp_path / "mlruns").as_uri()


def _log_traces(uri: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", LOG, uri], check=True, timeout=300, capture_output=True, text=True,
                         env={**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true",
                              "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _feedback(uri: str, experiment: str = "qa") -> dict[tuple, list]:
    """The store's HUMAN feedback named after a rubric, read with MLflow's own API: (item id, rubric, rater) ->
    [(trace id, value, rationale)]."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    found: dict[tuple, list] = {}
    for trace in client.search_traces(locations=[exp.experiment_id]):
        full = client.get_trace(trace.info.trace_id, display=False)  # and each trace once more, by its id
        for a in full.info.assessments:
            if a.name in ("qa", "tone"):
                assert type(a).__name__ == "Feedback" and a.source.source_type == "HUMAN" and a.valid is not False
                found.setdefault((a.metadata["workbench.item_id"], a.name, a.source.source_id), []).append(
                    (trace.info.trace_id, a.value, a.rationale))
    return found


@pytest.fixture
def mlflow_store(monkeypatch):
    pytest.importorskip("mlflow", reason="pip install 'judge-workbench[mlflow]'")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")


@pytest.mark.slow
@pytest.mark.parametrize("kind", STORES)
def test_mlflow_feedback_lands_on_the_source_traces_once_and_a_changed_label_updates_it(
        kind, mlflow_store, cli, store, tmp_path):
    uri = _store_uri(kind, tmp_path)
    traces = _log_traces(uri)
    add_qa_rubric(store, tmp_path, "import_maps:\n  correctness: {boolean: {true: 0, false: -1}}\n")
    r = cli("import", "--from", "mlflow", f"{uri}#experiment=qa", "-g", "g", "-r", "qa")
    assert r.exit_code == 0, r.output
    item_of = {trace_id: trace_id for trace_id in traces.values()}  # an imported trace is an item of its id
    # a second reviewer, and an item that has no trace in the store
    cli("import", "items", write(tmp_path / "items.jsonl", '{"id": "extra", "input": "9+9", "output": "18"}\n'),
        "-g", "g")
    _label(cli, tmp_path, "qa", [(traces["1+1"], "bob@example.com", -1, "wrong sum"), ("extra", "bob@example.com", 1,
                                                                                        None)])

    before = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI", "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING")}
    r = cli("export-labels", "-g", "g", "--to", "mlflow", f"{uri}#experiment=qa")
    assert r.exit_code == 0, r.output
    assert {k: os.environ.get(k) for k in before} == before  # MLflow's global tracking URI is put back
    assert "5 labels to" in r.output and "5 added, 0 updated, 0 already there; 1 traces made" in r.output
    found = _feedback(uri)
    expected = {(t, "qa", "alice"): (0 if q != "1+1" else -1) for q, t in traces.items()}
    # the reviewer named by an email is one rater, 'bob' (with that email): the feedback's source is that rater
    expected[(traces["1+1"], "qa", "bob")] = -1
    expected[("extra", "qa", "bob")] = 1
    assert {k: [v for _, v, _ in found[k]] for k in found} == {k: [v] for k, v in expected.items()}
    for key, [(trace_id, _, _)] in found.items():  # imported items' labels are on the traces they came from
        assert trace_id == item_of.get(key[0], trace_id)
    made = found[("extra", "qa", "bob")][0][0]
    assert made not in traces.values()
    import mlflow

    tags = mlflow.MlflowClient(tracking_uri=uri).get_trace(made, display=False).info.tags
    assert tags["workbench.item_id"] == "extra" and tags["workbench.golden_set"] == "g"

    # again: nothing new; then a changed label is updated in place, still one assessment
    r = cli("export-labels", "-g", "g", "--to", "mlflow", f"{uri}#experiment=qa")
    assert "0 added, 0 updated, 5 already there; 0 traces made" in r.output, r.output
    assert _feedback(uri) == found
    _label(cli, tmp_path, "qa", [("extra", "bob@example.com", 0, "only competent")])
    result = export_labels(store, "g", "mlflow", f"{uri}#experiment=qa")
    assert (result.added, result.updated, result.unchanged, result.traces_made) == (0, 1, 4, 0)
    again = _feedback(uri)
    assert again[("extra", "qa", "bob")] == [(made, 0, "only competent")]
    assert len(again) == 5 and all(len(v) == 1 for v in again.values())
    # the feedback the labels were imported from is left as MLflow holds it
    client = mlflow.MlflowClient(tracking_uri=uri)
    original = [a for a in client.get_trace(traces["0+0"], display=False).info.assessments if a.name == "correctness"]
    assert [(a.source.source_id, a.value) for a in original] == [("alice", True)]


@pytest.mark.slow
def test_mlflow_without_an_experiment_uses_one_named_after_the_golden_set(mlflow_store, cli, store, tmp_path):
    _golden_set(cli, store, tmp_path)
    uri = (tmp_path / "mlruns").as_uri()
    result = export_labels(store, "g", "mlflow", uri, rubric="tone")
    assert (result.added, result.traces_made) == (1, 1)
    found = _feedback(uri, experiment="g")
    assert [(key, value, why) for key, [(_, value, why)] in found.items()] == [(("i2", "tone", "alice"), -1, "curt")]
    with pytest.raises(InputError, match="where an experiment belongs"):
        export_labels(store, "g", "mlflow", f"{uri}#exp=g")


def test_an_mlflow_uri_with_a_password_never_shows_it():
    from workbench.features.interop.writeback.mlflow import shown

    assert shown("https://me:s3cret@mlflow.example.com:5000#experiment=qa") == \
        "https://mlflow.example.com:5000#experiment=qa"
