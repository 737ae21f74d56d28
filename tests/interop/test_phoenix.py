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
