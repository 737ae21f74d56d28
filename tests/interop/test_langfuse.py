"""Langfuse: fixtures shaped exactly as the documented API responses.

- scores-1.json, scores-2.json: two pages of GET /api/public/v3/scores?fields=details,subject,annotation, as in
  the sample response of https://langfuse.com/docs/api-and-data-platform/features/scores-api (core fields, the
  details, subject and annotation groups, and meta.cursor on every page but the last);
- traces.json: GET /api/public/traces (Traces: data of TraceWithDetails, meta of page, limit, totalItems,
  totalPages), https://api.reference.langfuse.com/#tag/trace/GET/api/public/traces;
- observations.json: GET /api/public/v2/observations, https://api.reference.langfuse.com/#tag/observationsv2.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import write
from tests.interop.conftest import add_qa_rubric, calibrated
from workbench.errors import InputError
from workbench.services.interop import import_from

FIXTURES = Path(__file__).with_name("fixtures") / "langfuse"
MAPS = """\
import_maps:
  correctness:
    boolean: {true: 0, false: -1}      # the reviewers' annotations
    cut_points: [0.5]                   # the evaluator's 0-1 score
    levels: [-1, 0]
    range: [0, 1]
  groundedness: {cut_points: [0.5], levels: [-1, 0]}
  user-feedback: {boolean: {true: 0, false: -1}}
"""


def test_scores_with_their_traces_and_observations_are_imported_and_calibrate(cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "langfuse", FIXTURES, "-g", "qa", "-r", "qa")
    assert r.exit_code == 0, r.output
    assert "items: 7 read, 7 added" in r.output  # six traces and one observation
    assert "labels: 9 read, 9 added or changed (raters: user-ana, user-ben)" in r.output
    assert "judgments of langfuse.correctness (imported/langfuse/unknown, added to the rubric): 6 read" in r.output
    assert "judgments of langfuse.groundedness (imported/langfuse/unknown, added to the rubric): 1 read" in r.output
    assert "judgments of langfuse.user-feedback-api" in r.output  # an API score is a judgment too
    assert "skipped: 2 (" in r.output and "TEXT score (not a rating): 1" in r.output \
        and "score on a session: 1" in r.output

    report = calibrated(store, "qa", "langfuse.correctness", tmp_path)
    assert report["n_items"] == 6
    # the evaluator scores 0.7 where user-ana says false (trace-4); every other trace agrees
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(5 / 6)


def test_scores_alone_attach_to_traces_imported_before(store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    with pytest.raises(InputError, match=r"^langfuse record 1: field item_id: refers to item 'trace-1', which is "
                                         r"neither in this import nor in golden set 'qa'"):
        import_from(store, "langfuse", str(FIXTURES / "scores-1.json"), "qa", "qa")
    import_from(store, "langfuse", str(FIXTURES), "qa", "qa")
    res = import_from(store, "langfuse", str(FIXTURES / "scores-1.json"), "qa", "qa")
    assert res.judges[0].read == 6 and res.judges[0].added == 0  # the same verdicts, already there


def test_a_score_without_its_subject_says_which_fields_to_request(store, tmp_path):
    import json

    add_qa_rubric(store, tmp_path, MAPS)
    folder = tmp_path / "export"
    shutil.copytree(FIXTURES, folder)
    page = json.loads((folder / "scores-2.json").read_text())
    del page["data"][3]["subject"]
    write(folder / "scores-2.json", json.dumps(page))
    with pytest.raises(InputError, match=r"^langfuse scores-2\.json record 4: field subject: the score has no "
                                         r"subject; request the scores with fields=details,subject,annotation\.$"):
        import_from(store, "langfuse", str(folder), "qa", "qa")
    assert store.golden_sets() == []
