"""Phoenix: fixtures shaped exactly as the documented REST responses, and the frame phoenix.client makes of them.

- span_annotations.json: GET /v1/projects/{project_identifier}/span_annotations (SpanAnnotationsResponseBody:
  data of SpanAnnotation with name, annotator_kind LLM/CODE/HUMAN, span_id, result {label, score, explanation},
  metadata, identifier, id, created_at, updated_at, source API/APP, user_id; next_cursor);
- spans.json: GET /v1/projects/{project_identifier}/spans (SpansResponseBody: data of Span with name,
  context {trace_id, span_id}, span_kind, start_time, end_time, status_code, attributes; next_cursor);
both as typed in Phoenix's generated client, packages/phoenix-client/src/phoenix/client/__generated__/v1 of
Arize-ai/phoenix. The frame is made as client.spans.get_span_annotations_dataframe makes it (result flattened to
result.label / result.score / result.explanation, name renamed annotation_name, span_id as the index).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import write
from tests.interop.conftest import add_qa_rubric, calibrated
from workbench.features.interop.service import import_from

FIXTURES = Path(__file__).with_name("fixtures") / "phoenix"
MAPS = """\
import_maps:
  correctness: {categorical: {correct: 0, incorrect: -1}}
"""


def test_span_annotations_with_their_spans_are_imported_and_calibrate(cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "phoenix", FIXTURES, "-g", "qa", "-r", "qa")
    assert r.exit_code == 0, r.output
    assert "items: 5 read, 5 added" in r.output
    assert "labels: 7 read, 7 added or changed (raters: VXNlcjox, VXNlcjoy)" in r.output
    judge = "phoenix.correctness@gpt-4o-mini"
    assert f"judgments of {judge} (imported/phoenix/gpt-4o-mini, added to the rubric): 5 read (0 unscored)" \
        in r.output
    assert "CODE annotation (not a human or an LLM judge): 1" in r.output and "note (not a rating): 1" in r.output

    report = calibrated(store, "qa", judge, tmp_path)
    assert report["judge"]["family"] == "openai"
    assert report["n_items"] == 5
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(3 / 5)  # the judge misses spans 3 and 5


def test_the_client_dataframe_records_import_the_same(store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    import_from(store, "phoenix", str(FIXTURES), "qa", "qa")
    body = json.loads((FIXTURES / "span_annotations.json").read_text())
    frame = pd.DataFrame(body["data"])
    frame = pd.concat([frame.drop(columns="result"), pd.json_normalize(list(frame["result"])).add_prefix("result.")],
                      axis=1).rename(columns={"name": "annotation_name"}).set_index("span_id")
    records = write(tmp_path / "annotations.json", frame.reset_index().to_json(orient="records"))
    res = import_from(store, "phoenix", str(records), "qa", "qa")
    assert res.labels_read == 7 and res.labels_added == 0  # the same labels, already there
    assert [(j.judge_id, j.read, j.added) for j in res.judges] == [("phoenix.correctness@gpt-4o-mini", 5, 0)]


def test_spans_become_items_with_their_producer(store, tmp_path):
    from workbench.calibration.golden_sets import load_items

    add_qa_rubric(store, tmp_path, MAPS)
    import_from(store, "phoenix", str(FIXTURES), "qa", "qa")
    item = {i.id: i for i in load_items(store, "qa")}["5f1a0c2e9b3d4a04"]
    assert (item.input, item.output, item.category) == ("Capital of Japan?", "Tokyo", "ChatCompletion")
    assert (item.producer.model, item.producer.family) == ("gpt-4o", "openai")


# --------------------------------------------------------------------------- experiment downloads
EXPERIMENTS = FIXTURES / "experiments"  # GET /v1/experiments/{id}/json of two experiments (see ../README.md)


def _runs(store, golden_set: str) -> list[tuple[str, str, int]]:
    """(judge, run, judgments) of each run, as `golden-set show --json` lists them."""
    from workbench.calibration.golden_sets import golden_set_overview

    return sorted((r.judge, r.run, r.judgments) for r in golden_set_overview(store, golden_set).runs)


def test_a_folder_of_experiment_downloads_imports_one_run_per_experiment(cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "phoenix", EXPERIMENTS, "-g", "qa", "-r", "qa")
    assert r.exit_code == 0, r.output
    # 9 answered runs; Paris twice in experiment 1 and once in 2, and "4" twice in experiment 1, are one item each
    assert "items: 5 read, 5 added" in r.output
    judge = "phoenix.correctness@gpt-4o-mini"
    assert f"judgments of {judge} (imported/phoenix/gpt-4o-mini, added to the rubric): 9 read (1 unscored), " \
           "9 added" in r.output
    assert "CODE annotation (not a human or an LLM judge): 9" in r.output
    assert "HUMAN experiment annotation (the download names no rater): 1" in r.output
    assert "experiment run whose task failed (no output): 1" in r.output
    runs = _runs(store, "qa")
    assert {j for j, _, _ in runs} == {judge}
    assert sorted(n for *_, n in runs) == [3, 6]  # experiment 2 (3 answered runs), experiment 1 (6)

    again = cli("import", "--from", "phoenix", EXPERIMENTS, "-g", "qa", "-r", "qa")
    assert again.exit_code == 0 and "9 read (1 unscored), 0 added" in again.output
    assert _runs(store, "qa") == runs


def test_the_files_imported_one_after_the_other_land_the_same_runs(store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    import_from(store, "phoenix", str(EXPERIMENTS), "all", "qa")
    for f in sorted(EXPERIMENTS.glob("*.json")):
        import_from(store, "phoenix", str(f), "one-by-one", "qa")
    assert _runs(store, "one-by-one") == _runs(store, "all") and len(_runs(store, "all")) == 2
    for f in sorted(EXPERIMENTS.glob("*.json")):  # and again, in the other order: nothing new
        res = import_from(store, "phoenix", str(f), "one-by-one", "qa")
        assert res.items_added == 0 and [j.added for j in res.judges] == [0]
    res = import_from(store, "phoenix", str(EXPERIMENTS), "one-by-one", "qa")
    assert res.items_added == 0 and [j.added for j in res.judges] == [0]
    assert _runs(store, "one-by-one") == _runs(store, "all")


def test_a_repetition_with_the_same_output_is_a_repeat_and_an_evaluator_error_is_unscored(store, tmp_path):
    from workbench.calibration.golden_sets import load_items

    add_qa_rubric(store, tmp_path, MAPS)
    import_from(store, "phoenix", str(EXPERIMENTS / "RXhwZXJpbWVudDox.json"), "qa", "qa")
    items = {(i.input, i.output): i for i in load_items(store, "qa")}
    paris = items[("What is the capital of France?", "Paris")]
    assert paris.reference == "Paris" and paris.metadata == {"phoenix": {"example_id": "RGF0YXNldEV4YW1wbGU6MQ=="}}
    assert ("Which is the largest planet?", "Saturn") in items and ("Which is the largest planet?", "Jupiter") in items
    gs = store.golden_set("qa").id
    verdicts = {}
    for run in store.runs(gs):
        for j in store.judgments(gs, run["judge_pk"], run["id"]):
            verdicts[(j["item_id"], j["repeat"])] = (j["score"], j["unscored_reason"])
    # repetition 1 said correct, repetition 2 incorrect: the judge's noise on one item
    assert verdicts[(paris.id, 0)] == (0, None) and verdicts[(paris.id, 1)] == (-1, None)
    four = items[("What is 2 + 2?", "4")]
    assert verdicts[(four.id, 1)] == (None, "Phoenix evaluator error: openai.APITimeoutError: Request timed out.")
    assert len(verdicts) == 6


def test_a_bad_experiment_record_names_the_file_record_and_field(store, tmp_path):
    from workbench.core.errors import InputError

    add_qa_rubric(store, tmp_path, MAPS)
    runs = json.loads((EXPERIMENTS / "RXhwZXJpbWVudDoy.json").read_text())
    runs[1]["annotations"][0]["label"] = "partly"
    bad = write(tmp_path / "exp" / "RXhwZXJpbWVudDoy.json", json.dumps(runs))
    with pytest.raises(InputError, match=r"^phoenix RXhwZXJpbWVudDoy\.json record 2: field annotations\[0\]\.label: "
                                         r"value \"partly\" of 'correctness' is not covered"):
        import_from(store, "phoenix", str(bad.parent), "qa", "qa")
    del runs[1]["example_id"]
    write(bad, json.dumps(runs))
    with pytest.raises(InputError, match=r"^phoenix RXhwZXJpbWVudDoy\.json record 2: field example_id: the experiment "
                                         r"run has no example_id"):
        import_from(store, "phoenix", str(bad), "qa", "qa")
    assert store.golden_sets() == []


def test_each_experiment_calibrates_as_its_own_run_with_its_repeats_and_the_drift_between_them(store, tmp_path):
    from workbench.calibration.calibrate import Options, calibrate
    from workbench.calibration.golden_sets import load_items
    from workbench.core.workspace import Workspace
    from workbench.features.importing.service import import_labels

    add_qa_rubric(store, tmp_path, MAPS)
    for f in sorted(EXPERIMENTS.glob("*.json")):  # experiment 1, then experiment 2
        import_from(store, "phoenix", str(f), "qa", "qa")
    truth = {"Paris": 0, "4": 0, "5": -1, "Saturn": -1, "Jupiter": 0}
    labels = write(tmp_path / "labels.jsonl", "".join(
        json.dumps({"item_id": i.id, "rater": r, "score": truth[i.output]}) + "\n"
        for i in load_items(store, "qa") for r in ("ana", "ben")))
    import_labels(store, labels, "qa", "qa")
    first, second = [run for *_, run in sorted(
        (r["id"], r["name"]) for r in store.runs(store.golden_set("qa").id))]
    judge = "phoenix.correctness@gpt-4o-mini"

    def report(run: str) -> dict:
        return calibrate(store, "qa", "qa", judge, Options(resamples=200, run=run),
                         workspace=Workspace.resolve(str(tmp_path), None)).to_json()

    one = report(first)
    assert one["noise"]["repeats"] == 2 and one["noise"]["flip_rate"] == 1.0  # Paris: correct, then incorrect
    latest = report(second)
    assert latest["drift"]["baseline_run"] == first and latest["drift"]["n_items"] == 2  # Paris and Jupiter


def test_a_later_export_of_the_grown_project_lands_only_the_new_verdicts(store, tmp_path):
    """Issue 49 item 4, Phoenix: the project exported again after a new span was evaluated and one evaluation was
    run again (Phoenix updates an annotation in place: same id, a new updated_at and label). The later export holds
    every annotation; only the new span's verdict and the re-run one land (a run of their own), the four unchanged
    verdicts are held already by their annotation ids; where landing the export's verdicts again gave 11, 7."""
    from workbench.calibration.rubric_versions import get_rubric, judge_row

    add_qa_rubric(store, tmp_path, MAPS)
    import_from(store, "phoenix", str(FIXTURES), "qa", "qa")
    later = tmp_path / "later"
    later.mkdir()
    spans = json.loads((FIXTURES / "spans.json").read_text())
    new_span = json.loads(json.dumps(spans["data"][0]))
    new_span["context"]["span_id"] = "5f1a0c2e9b3d4a99"
    spans["data"].append(new_span)
    (later / "spans.json").write_text(json.dumps(spans))
    body = json.loads((FIXTURES / "span_annotations.json").read_text())
    llm = [a for a in body["data"] if a["annotator_kind"] == "LLM"]
    rerun = {**llm[1], "updated_at": "2026-07-01T10:00:00+00:00",
             "result": {**llm[1]["result"], "label": "incorrect", "score": 0.0}}
    body["data"] = [rerun if a["id"] == rerun["id"] else a for a in body["data"]]
    body["data"].append({**llm[0], "id": "U3BhbkFubm90YXRpb2499", "span_id": "5f1a0c2e9b3d4a99"})
    (later / "span_annotations.json").write_text(json.dumps(body))
    res = import_from(store, "phoenix", str(later), "qa", "qa")
    judge = "phoenix.correctness@gpt-4o-mini"
    assert [(j.judge_id, j.read, j.added, j.held) for j in res.judges] == [(judge, 6, 2, 4)]
    row = judge_row(store, get_rubric(store, "qa").id, judge)
    verdicts = store.judgments(store.golden_set("qa").id, row.pk)
    assert len(verdicts) == 7
    newest = [(j["item_id"], j["score"]) for j in verdicts if j["run_name"] == res.judges[0].run]
    assert sorted(newest) == sorted([(rerun["span_id"], -1), ("5f1a0c2e9b3d4a99", 0)])
    again = import_from(store, "phoenix", str(later), "qa", "qa")
    assert [(j.added, j.held) for j in again.judges] == [(0, 6)]
