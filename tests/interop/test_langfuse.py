"""Langfuse: fixtures shaped exactly as the documented API responses.

- scores-1.json, scores-2.json: two pages of GET /api/public/v3/scores?fields=details,subject,annotation, as in
  the sample response of https://langfuse.com/docs/api-and-data-platform/features/scores-api (core fields, the
  details, subject and annotation groups, and meta.cursor on every page but the last);
- traces.json: GET /api/public/traces (Traces: data of TraceWithDetails, meta of page, limit, totalItems,
  totalPages), https://api.reference.langfuse.com/#tag/trace/GET/api/public/traces;
- observations.json: GET /api/public/v2/observations?fields=core,basic,io,model (input and output as the raw strings
  v2 returns), https://api.reference.langfuse.com/#tag/observationsv2; the SDK test's mock server answers with these
  shapes, and the SDK's own models validate them.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import write
from tests.interop.conftest import add_qa_rubric, calibrated
from workbench.core.errors import ConfigError, InputError
from workbench.features.interop.service import import_from

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
    with pytest.raises(InputError, match=r"^langfuse scores-1\.json record 1: field item_id: refers to item 'trace-1', which is "
                                         r"neither in this import nor in golden set 'qa'"):
        import_from(store, "langfuse", str(FIXTURES / "scores-1.json"), "qa", "qa")
    import_from(store, "langfuse", str(FIXTURES), "qa", "qa")
    res = import_from(store, "langfuse", str(FIXTURES / "scores-1.json"), "qa", "qa")
    assert res.judges[0].read == 6 and res.judges[0].added == 0  # the same verdicts, already there


def test_a_score_without_its_subject_says_which_fields_to_request(store, tmp_path):
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


def _langfuse_api(requests: list, *, grown: bool = False):
    """Langfuse's public API over a mock transport: the fixtures' pages and traces, as the server sends them
    (``grown``: the project later, every score in one page, grown/scores-3.json, and the two new traces)."""
    import httpx

    pages = ({None: json.loads((FIXTURES / "grown" / "scores-3.json").read_text())} if grown else
             {None: json.loads((FIXTURES / "scores-1.json").read_text()),
              "eyJsYXN0VGltZXN0YW1wIjoiMjAyNi0wNi0xNlQwOTowNjowMFoiLCJsYXN0SWQiOiJzY29yZS02In0":
                  json.loads((FIXTURES / "scores-2.json").read_text())})
    traces = json.loads((FIXTURES / "traces.json").read_text())["data"]
    traces += json.loads((FIXTURES / "grown" / "traces-2.json").read_text())["data"] if grown else []
    # Observations API v2 with fields=core,basic,io,model: each trace's root observation (its input and output as
    # the raw strings v2 returns), and the generation of trace-1 that a score is attached to
    observations = {t["id"]: [{
        "id": f"root-{t['id']}", "traceId": t["id"], "startTime": t["timestamp"], "endTime": t["timestamp"],
        "projectId": "7a88fb47-b4e2-43b8-a06c-a5ce950dc53a", "parentObservationId": None, "type": "SPAN",
        "name": t["name"], "level": "DEFAULT", "statusMessage": None, "version": None, "environment": "default",
        "bookmarked": False, "public": False, "userId": t["userId"], "sessionId": t["sessionId"],
        "isRootObservation": True, "input": t["input"] if isinstance(t["input"], str) else json.dumps(t["input"]),
        "output": t["output"], "model": None, "internalModelId": None, "modelParameters": None}]
        for t in traces}
    generation = json.loads((FIXTURES / "observations.json").read_text())["data"][0]
    observations["trace-1"].append({**generation, "parentObservationId": "root-trace-1"})

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.headers.get("authorization") != "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode():
            return httpx.Response(401, json={"message": "Invalid credentials"})
        path = request.url.path
        if path == "/api/public/v3/scores":
            assert request.url.params["fields"] == "details,subject,annotation"
            return httpx.Response(200, json=pages[request.url.params.get("cursor")])
        if path == "/api/public/v2/observations":
            assert request.url.params["fields"] == "core,basic,io,model"
            return httpx.Response(200, json={"data": observations[request.url.params["traceId"]],
                                             "meta": {"cursor": None}})
        return httpx.Response(404, json={"message": "not found"})

    return httpx.Client(transport=httpx.MockTransport(handle))


def test_scores_pulled_with_the_sdk_import_as_the_saved_responses_do(store, tmp_path, monkeypatch):
    pytest.importorskip("langfuse", reason="pip install 'judge-workbench[langfuse]'")
    add_qa_rubric(store, tmp_path, MAPS)
    requests: list = []
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    res = import_from(store, "langfuse", "https://langfuse.test", "qa", "qa",
                      adapter_options={"http_client": _langfuse_api(requests)})
    assert res.items_read == 7 and res.labels_read == 9  # six traces, the scored generation; every annotation
    assert {j.judge_id: j.read for j in res.judges} == {"langfuse.correctness": 6, "langfuse.user-feedback-api": 1,
                                                        "langfuse.groundedness": 1}
    assert [r.url.path for r in requests][:2] == ["/api/public/v3/scores"] * 2  # both pages, by the cursor
    report = calibrated(store, "qa", "langfuse.correctness", tmp_path)
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(5 / 6)  # as from the saved responses


def test_wrong_keys_are_refused_without_showing_them(store, tmp_path, monkeypatch):
    pytest.importorskip("langfuse", reason="pip install 'judge-workbench[langfuse]'")
    add_qa_rubric(store, tmp_path, MAPS)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-WRONG-secret")
    with pytest.raises(InputError) as e:
        import_from(store, "langfuse", "https://langfuse.test", "qa", "qa",
                    adapter_options={"http_client": _langfuse_api([])})
    assert str(e.value).startswith("langfuse: https://langfuse.test answered 401: ")
    assert "WRONG" not in str(e.value)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")
    with pytest.raises(ConfigError, match="needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY"):
        import_from(store, "langfuse", "https://langfuse.test", "qa", "qa")


def test_pulling_without_the_sdk_says_what_to_install(store, tmp_path, monkeypatch):
    import sys

    add_qa_rubric(store, tmp_path, MAPS)
    monkeypatch.setitem(sys.modules, "langfuse", None)  # as if the SDK were not installed
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    with pytest.raises(ConfigError, match=r"importing from Langfuse needs its Python package; run: pip install "
                                          r"'judge-workbench\[langfuse\]'"):
        import_from(store, "langfuse", "https://langfuse.test", "qa", "qa")


def test_a_folder_that_grew_by_a_pull_imports_only_what_the_pull_brought(store, tmp_path):
    """The first pull (traces.json, scores-1.json and its next page scores-2.json) is imported; then the folder
    grows by a second pull (traces-2.json, and scores-3.json holding every score again, one annotation with a
    changed comment, plus the new ones: two new traces judged and annotated, the evaluator again on trace-4 and a
    second reviewer there). Importing the folder
    again adds only the new traces, labels and verdicts, the verdicts as a new run of the judge holding what the
    second pull brought; the first run is unchanged; a third import adds nothing."""
    from workbench.calibration.golden_sets import runs_of
    from workbench.calibration.rubric_versions import get_rubric, judge_row

    add_qa_rubric(store, tmp_path, MAPS)
    folder = tmp_path / "pulls"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("grown"))
    first = import_from(store, "langfuse", str(folder), "qa", "qa")
    judge = "langfuse.correctness"

    def runs() -> dict[str, list]:
        gs = store.golden_set("qa").id
        row = judge_row(store, get_rubric(store, "qa").id, judge)
        by_run: dict[str, list] = {}
        for j in store.judgments(gs, row.pk):
            by_run.setdefault(j["run_name"], []).append((j["item_id"], j["repeat"], j["score"]))
        assert [r.name for r in runs_of(store, gs, row.pk)] == list(by_run)
        return by_run

    before = runs()
    for f in (FIXTURES / "grown").iterdir():
        shutil.copy(f, folder / f.name)
    second = import_from(store, "langfuse", str(folder), "qa", "qa")
    assert (second.items_read, second.items_added) == (9, 2)
    assert (second.labels_read, second.labels_added) == (12, 4)  # three new, and user-ben's changed note
    assert second.raters == ["user-ana", "user-ben"]
    correctness = next(j for j in second.judges if j.judge_id == judge)
    assert (correctness.read, correctness.added) == (9, 3)
    assert second.skipped["score of an earlier pull"] == 19
    assert all(j.added == 0 for j in second.judges if j.judge_id != judge)
    after = runs()
    (old, run), (new, pulled) = list(after.items())
    assert {old: run} == before  # the first pull's run as it was
    assert sorted(pulled) == [("trace-4", 0, -1), ("trace-7", 0, 0), ("trace-8", 0, 0)]
    for verdicts in after.values():  # no trace judged twice at one repeat within a run
        assert len({(item, repeat) for item, repeat, _ in verdicts}) == len(verdicts)

    report = calibrated(store, "qa", judge, tmp_path)  # the latest run: what the second pull brought
    assert report["n_items"] == 3
    assert report["drift"]["baseline_run"] == old and report["drift"]["run"] == new
    assert report["drift"]["flip_rate"] == pytest.approx(1.0)  # trace-4: 0.7 (pass) then 0.3 (fail)

    third = import_from(store, "langfuse", str(folder), "qa", "qa")
    assert third.nothing_new and runs() == after
    notes = {(row["item_id"], row["rater"]): row["rationale"] for row in store.labels(store.golden_set("qa").id, "qa")}
    assert notes[("trace-1", "user-ben")] == "Paris, checked again"


def _verdicts(store, judge: str) -> list[tuple[str, str, int, int]]:
    from workbench.calibration.rubric_versions import get_rubric, judge_row

    row = judge_row(store, get_rubric(store, "qa").id, judge)
    return sorted((j["run_name"], j["item_id"], j["repeat"], j["score"])
                  for j in store.judgments(store.golden_set("qa").id, row.pk))


def test_a_fresh_export_of_the_grown_project_lands_only_the_new_verdicts(store, tmp_path):
    """Issue 49 item 4: the first pull saved in one folder, later a fresh export of the same project in another
    (every score again, in one page: grown/scores-3.json). Each of the project's verdicts is stored once, by its
    score id: the evaluator's 6 of the first pull and its 3 new ones (trace-7, trace-8 and a second verdict on
    trace-4, repeat 0 of the new run as a pull of only them would number it), 9 where landing every score of the
    export again gave 15; the other judges' verdicts are all held already and add nothing; labels and items are
    as before (the reviewers' new annotations land, one changed note is updated). A third import adds nothing."""
    add_qa_rubric(store, tmp_path, MAPS)
    first_pull = tmp_path / "first"
    shutil.copytree(FIXTURES, first_pull, ignore=shutil.ignore_patterns("grown"))
    import_from(store, "langfuse", str(first_pull), "qa", "qa")
    judge = "langfuse.correctness"
    before = _verdicts(store, judge)
    assert len(before) == 6
    later = tmp_path / "later"
    later.mkdir()
    shutil.copy(FIXTURES / "traces.json", later / "traces.json")
    shutil.copy(FIXTURES / "observations.json", later / "observations.json")
    for f in (FIXTURES / "grown").iterdir():
        shutil.copy(f, later / f.name)
    res = import_from(store, "langfuse", str(later), "qa", "qa")
    by_judge = {j.judge_id: j for j in res.judges}
    assert (by_judge[judge].read, by_judge[judge].added, by_judge[judge].held) == (9, 3, 6)
    assert all((j.added, j.held) == (0, j.read) for j in res.judges if j.judge_id != judge)
    assert "3 added, 6 held already (by langfuse's own ids)" in "\n".join(res.summary_lines())
    after = _verdicts(store, judge)
    assert len(after) == 9 and set(before) <= set(after)
    new = sorted((item, repeat, score) for run, item, repeat, score in set(after) - set(before))
    assert new == [("trace-4", 0, -1), ("trace-7", 0, 0), ("trace-8", 0, 0)]
    assert (res.items_added, res.labels_added) == (2, 4)
    again = import_from(store, "langfuse", str(later), "qa", "qa")
    assert again.nothing_new and _verdicts(store, judge) == after


def test_pulling_the_grown_project_again_lands_only_the_new_verdicts(store, tmp_path, monkeypatch):
    """The same with the SDK from the host: the first pull (two pages), later a pull of the grown project."""
    pytest.importorskip("langfuse", reason="pip install 'judge-workbench[langfuse]'")
    add_qa_rubric(store, tmp_path, MAPS)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    judge = "langfuse.correctness"
    import_from(store, "langfuse", "https://langfuse.test", "qa", "qa",
                adapter_options={"http_client": _langfuse_api([])})
    assert len(_verdicts(store, judge)) == 6
    res = import_from(store, "langfuse", "https://langfuse.test", "qa", "qa",
                      adapter_options={"http_client": _langfuse_api([], grown=True)})
    assert {j.judge_id: (j.added, j.held) for j in res.judges}[judge] == (3, 6)
    verdicts = _verdicts(store, judge)
    assert len(verdicts) == 9
    assert len({(item, score) for _, item, _, score in verdicts if item != "trace-4"}) == 7  # one verdict a trace
    again = import_from(store, "langfuse", "https://langfuse.test", "qa", "qa",
                        adapter_options={"http_client": _langfuse_api([], grown=True)})
    assert all(j.added == 0 for j in again.judges) and _verdicts(store, judge) == verdicts


def test_scores_of_one_judge_on_one_trace_are_repeats_by_time(store, tmp_path):
    """Two evaluator executions on one trace in one pull are repeats 0 and 1 (oldest first), not a duplicate."""
    add_qa_rubric(store, tmp_path, MAPS)
    folder = tmp_path / "pull"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("grown"))
    page = json.loads((folder / "scores-2.json").read_text())
    again = json.loads((FIXTURES / "grown" / "scores-3.json").read_text())["data"]
    page["data"].append(next(s for s in again if s["id"] == "score-22"))  # trace-4 again, later
    write(folder / "scores-2.json", json.dumps(page))
    res = import_from(store, "langfuse", str(folder), "qa", "qa")
    assert next(j for j in res.judges if j.judge_id == "langfuse.correctness").read == 7
    report = calibrated(store, "qa", "langfuse.correctness", tmp_path)
    assert report["noise"]["repeats"] == 2
