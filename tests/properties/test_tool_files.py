"""Files other eval tools write (promptfoo, DeepEval, Langfuse, Phoenix, Inspect AI, MLflow), generated in each
tool's shape (or, for Langfuse and Phoenix, the API responses of tests/interop/fixtures) and then mutated: each
``import --from`` lands whole or is refused naming the file and the record, with nothing written."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.properties.conftest import PROFILE
from tests.properties.harness import Workspace, damaged, dump, mutated, outcome
from workbench.calibration.rubric_versions import add_rubric
from workbench.features.interop.service import import_from
from workbench.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "interop" / "fixtures"
RUBRIC = """name: qa
import_maps:
  llm-rubric: {cut_points: [0.5], levels: [-1, 0], range: [0, 1]}
  human: {cut_points: [0.5], levels: [-1, 0], range: [0, 1]}
  Correctness: {cut_points: [0.5], levels: [-1, 0], range: [0, 1]}
  correctness:
    boolean: {true: 0, false: -1}
    cut_points: [0.5]
    levels: [-1, 0]
    range: [0, 1]
  groundedness: {cut_points: [0.5], levels: [-1, 0]}
  user-feedback: {boolean: {true: 0, false: -1}}
"""
PHOENIX_RUBRIC = """name: px
import_maps:
  correctness: {categorical: {correct: 0, incorrect: -1}}
"""

texts = st.text(max_size=20)
score01 = st.one_of(st.floats(0, 1), st.sampled_from([0, 1]))
models = st.sampled_from(["openai:gpt-4o", "openai:gpt-4o-mini", "anthropic:messages:claude-sonnet-4-5"])


@st.composite
def promptfoo_row(draw, idx: int):
    kind = draw(st.sampled_from(["llm-rubric", "human", "equals"]))
    assertion = {"type": kind, "value": draw(texts)}
    if kind == "llm-rubric" and draw(st.booleans()):
        assertion["provider"] = draw(models)
    component = {"pass": draw(st.booleans()), "score": draw(score01), "reason": draw(texts), "assertion": assertion}
    if kind == "human":
        component["comment"] = draw(texts)
    return {"testIdx": idx, "promptIdx": draw(st.integers(0, 1)), "testCase": {
        "vars": {"q": draw(texts)}, "assert": [assertion], "description": draw(st.sampled_from(["sum", "words"]))},
        "prompt": {"raw": draw(texts), "label": "p"}, "provider": {"id": draw(models)},
        "response": {"output": draw(texts)}, "success": component["pass"], "score": component["score"],
        "gradingResult": {"pass": component["pass"], "score": component["score"], "componentResults": [component]}}


@st.composite
def promptfoo_file(draw):
    n = draw(st.integers(1, 4))
    return {"evalId": "eval-1", "results": {"version": 3, "results": [draw(promptfoo_row(i)) for i in range(n)]},
            "metadata": {"author": draw(st.sampled_from(["ana@example.com", "ben"]))}}


@st.composite
def deepeval_file(draw):
    cases = []
    for n in range(draw(st.integers(1, 4))):
        metric = {"name": "Correctness", "score": draw(score01), "threshold": 0.5, "success": draw(st.booleans()),
                  "evaluationModel": draw(st.sampled_from(["gpt-4o", "gpt-4.1-mini"])), "reason": draw(texts)}
        cases.append({"name": f"case-{n}", "input": draw(texts), "actualOutput": draw(texts),
                      "expectedOutput": draw(texts), "metricsData": [metric], "success": metric["success"]})
    return {"testRunId": "run-1", "testCases": cases}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("properties-tools")
    (root / "qa.yaml").write_text(RUBRIC)
    (root / "px.yaml").write_text(PHOENIX_RUBRIC)
    with Store(root / "template.db") as s:
        add_rubric(s, root / "qa.yaml")
        add_rubric(s, root / "px.yaml")
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Workspace(root / "template.db", root)


def _import(workspace: Workspace, source: str, files: dict[str, bytes], uri_of, name: str, how: str, located: bool,
            rubric: str = "qa"):
    """``name``: the file (relative to the folder) that was changed, which a refusal must name."""
    """Write ``files`` (relative name -> bytes) into a fresh input folder and import ``uri_of(folder)``."""
    db, inputs = workspace.fresh()
    for rel, data in files.items():
        (inputs / rel).parent.mkdir(parents=True, exist_ok=True)
        (inputs / rel).write_bytes(data)
    with Store(db) as s:
        res = outcome(db, inputs, tuple(Path(f).name for f in files) if len(files) > 1 else name, lambda: import_from(s, source, str(uri_of(inputs)), "imported", rubric),
                      what=f"{source} {name} ({how}): {files[name][:400]!r}", record_level=located)
        if res is not None:  # whole: what was read is what is stored (the database was empty of it)
            def count(sql: str) -> int:
                return s.conn.execute(sql).fetchone()[0]
            assert count("SELECT count(*) FROM items") == res.items_added == res.items_read, how
            assert count("SELECT count(*) FROM labels") == res.labels_added, how
            assert count("SELECT count(*) FROM judgments") == sum(j.added for j in res.judges), how
    return res


def _in_a_record(path: tuple, records: tuple) -> bool:
    """Whether the change at ``path`` is inside one record of the list at ``records`` (a refusal names it)."""
    return path[:len(records)] == records and len(path) > len(records)


@st.composite
def one_file(draw, docs, records: tuple):
    """(bytes, how, located): a tool's document mutated in one place, its bytes perhaps damaged; ``records``: where
    its list of records is."""
    doc, change = draw(mutated(draw(docs)))
    data, damage = draw(damaged(dump(doc)))
    return data, f"{change}, {damage}", damage in ("whole", "bom") and _in_a_record(change.path, records)


@settings(settings.get_profile(PROFILE))
@given(one_file(promptfoo_file(), ("results", "results")))
def test_promptfoo_results_land_whole_or_are_refused_by_record(workspace, file):
    data, how, located = file
    _import(workspace, "promptfoo", {"results.json": data}, lambda d: d / "results.json", "results.json", how, located)


@settings(settings.get_profile(PROFILE))
@given(one_file(deepeval_file(), ("testCases",)))
def test_deepeval_runs_land_whole_or_are_refused_by_record(workspace, file):
    data, how, located = file
    _import(workspace, "deepeval", {"test_run_1.json": data}, lambda d: d / "test_run_1.json", "test_run_1.json",
            how, located)


def _fixture_folder(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*.json"))}


@st.composite
def one_of_a_folder(draw, folder: Path, records: tuple):
    """(files, the one changed, how, located): a tool's folder of API responses, one of them mutated."""
    files = _fixture_folder(folder)
    name = draw(st.sampled_from(sorted(files)))
    doc, change = draw(mutated(json.loads(files[name])))
    data, damage = draw(damaged(dump(doc)))
    out = {k: v.encode() for k, v in files.items()}
    out[name] = data
    doc = json.loads(files[name])
    at = records if isinstance(doc, dict) else ()  # a saved response's rows, or a file that is a list of records
    return out, name, f"{change}, {damage}", damage in ("whole", "bom") and _in_a_record(change.path, at)


@settings(settings.get_profile(PROFILE))
@given(one_of_a_folder(FIXTURES / "langfuse", ("data",)))
def test_langfuse_responses_land_whole_or_are_refused_by_record(workspace, folder):
    files, name, how, located = folder
    files = {k: v for k, v in files.items() if not k.startswith("grown/")}
    if name.startswith("grown/"):
        return
    _import(workspace, "langfuse", files, lambda d: d, name, how, located)


@settings(settings.get_profile(PROFILE))
@given(one_of_a_folder(FIXTURES / "phoenix", ("data",)))
def test_phoenix_responses_land_whole_or_are_refused_by_record(workspace, folder):
    files, name, how, located = folder
    _import(workspace, "phoenix", files, lambda d: d, name, how, located, rubric="px")


# --------------------------------------------------------------------------- what the properties found, kept

PROMPTFOO = {"results": {"results": [{"testIdx": 0, "promptIdx": 0, "testCase": {"assert": [{"type": "llm-rubric"}]},
                                      "prompt": {"raw": "Add 2 and 2"}, "provider": {"id": "openai:gpt-4o"},
                                      "response": {"output": "4"}, "gradingResult": {"componentResults": [
                                          {"pass": True, "score": 1.0, "assertion": {"type": "llm-rubric"}}]}}]}}
DEEPEVAL = {"testCases": [{"name": "sum", "input": "Add 2 and 2", "actualOutput": "4", "metricsData": [
    {"name": "Correctness", "score": 1.0, "threshold": 0.5, "success": True, "evaluationModel": "gpt-4o"}]}]}


def _refused(workspace: Workspace, source: str, files: dict[str, bytes | str], uri: str = "", rubric: str = "qa"):
    """The sentence an import of ``files`` is refused with (and nothing written)."""
    db, inputs = workspace.fresh()
    for rel, data in files.items():
        (inputs / rel).parent.mkdir(parents=True, exist_ok=True)
        (inputs / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
    with Store(db) as s:
        res = outcome(db, inputs, tuple(Path(f).name for f in files),
                      lambda: import_from(s, source, str(inputs / uri), "imported", rubric), what=source,
                      record_level=False)
    return res


def _message(workspace, source, files, uri="", rubric="qa") -> str:
    from workbench.core.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as e:
        db, inputs = workspace.fresh()
        for rel, data in files.items():
            (inputs / rel).parent.mkdir(parents=True, exist_ok=True)
            (inputs / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        with Store(db) as s:
            import_from(s, source, str(inputs / uri), "imported", rubric)
    assert _refused(workspace, source, files, uri, rubric) is None  # and nothing written, nothing left
    return str(e.value)


def test_a_json_file_with_a_byte_order_mark_imports(workspace):
    """Found: a results file saved with a UTF-8 BOM (as Windows tools write) was refused, 'Unexpected UTF-8 BOM'."""
    res = _refused(workspace, "promptfoo", {"results.json": b"\xef\xbb\xbf" + json.dumps(PROMPTFOO).encode()},
                   "results.json")
    assert res is not None and res.items_added == 1


def test_a_file_cut_inside_a_character_is_said_not_to_be_utf8(workspace):
    """Found: the codec's own words ('unexpected end of data') read as a crash; now the file is not UTF-8 text."""
    data = json.dumps({"testCases": [{**DEEPEVAL["testCases"][0], "input": "caf\u00e9"}]}, ensure_ascii=False).encode()
    cut = data[: data.index("\u00e9".encode()) + 1]
    message = _message(workspace, "deepeval", {"test_run_1.json": cut}, "test_run_1.json")
    assert message.startswith("deepeval: test_run_1.json is not UTF-8 text (byte 0xc3 at offset"), message


def test_a_refused_record_of_a_one_file_export_names_the_file(workspace):
    """Found: 'promptfoo record 1: field input: is empty' named no file (only a folder's records did)."""
    row = PROMPTFOO["results"]["results"][0]
    doc = {"results": {"results": [{**row, "prompt": {"raw": ""}}]}}
    message = _message(workspace, "promptfoo", {"results.json": json.dumps(doc)}, "results.json")
    assert message.startswith("promptfoo results.json record 1: field input: is empty"), message


@pytest.mark.parametrize("source, files, uri, rubric, needle", [
    # found: each an AttributeError or TypeError before the tool's shape was declared for these fields
    ("promptfoo", {"results.json": json.dumps({**PROMPTFOO, "metadata": True})}, "results.json", "qa",
     "promptfoo results.json: field metadata: found true, expected an object or null"),
    ("deepeval", {"test_run_1.json": json.dumps({"testCases": True})}, "test_run_1.json", "qa",
     "deepeval test_run_1.json: field testCases: found true, expected a list or null"),
    ("langfuse", {"scores-1.json": json.dumps({"data": [], "meta": True})}, "", "qa",
     "langfuse scores-1.json: field meta: found true, expected an object or null"),
    ("langfuse", {"scores-1.json": json.dumps({"data": [{"id": "s", "name": "correctness", "value": 0.5,
                                                        "source": "EVAL", "timestamp": True,
                                                        "subject": {"kind": "trace", "id": "t"}}]})}, "", "qa",
     "langfuse scores-1.json record 1: field timestamp: found true, expected a string or null"),
    ("phoenix", {"spans.json": json.dumps({"data": [{"context": {"span_id": "s1"}, "attributes": True}]}),
                 "span_annotations.json": json.dumps({"data": []})}, "", "px",
     "phoenix spans.json record 1: field attributes: found true, expected an object or null"),
    ("phoenix", {"span_annotations.json": json.dumps({"data": [{"span_id": "s1", "name": "correctness",
                                                                 "annotator_kind": "LLM", "result": {"label": "correct"},
                                                                 "metadata": {"model": []}}]})}, "span_annotations.json",
     "px", "phoenix span_annotations.json record 1: field metadata.model: found a list [], expected a string or null"),
], ids=["promptfoo-metadata", "deepeval-test-cases", "langfuse-meta", "langfuse-timestamp", "phoenix-attributes",
        "phoenix-model"])
def test_a_field_of_the_wrong_type_is_refused_by_its_shape(workspace, source, files, uri, rubric, needle):
    message = _message(workspace, source, files, uri, rubric)
    assert message.startswith(needle), message


# --------------------------------------------------------------------------- Inspect AI and MLflow: their file forms

INSPECT_MAPS = "model_graded_qa: {categorical: {C: 0, I: -1}}\n"
MLFLOW_MAPS = "correctness: {boolean: {true: 0, false: -1}}\n"


@pytest.fixture(scope="module")
def inspect_log() -> dict:
    """An Inspect log as ``write_eval_log`` writes its .json form: three samples graded by model_graded_qa."""
    pytest.importorskip("inspect_ai")
    import tempfile

    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    spec = EvalSpec(created="2026-11-20T09:00:00+00:00", task="arith", dataset=EvalDataset(name="arith", samples=3,
                                                                                sample_ids=["q0", "q1", "q2"]),
                    model="mockllm/model", config=EvalConfig())
    samples = [EvalSample(id=f"q{i}", epoch=1, input=f"What is {i}+{i}?", target=str(2 * i),
                          messages=[ChatMessageUser(content=f"What is {i}+{i}?"), ChatMessageAssistant(content="4")],
                          output=ModelOutput.from_content("mockllm/model", str(2 * i)),
                          scores={"model_graded_qa": Score(value="C" if i % 2 else "I", explanation="checked")})
               for i in range(3)]
    with tempfile.TemporaryDirectory() as tmp:
        write_eval_log(EvalLog(status="success", eval=spec, samples=samples), f"{tmp}/arith.json")
        return json.loads(Path(f"{tmp}/arith.json").read_text())


@pytest.fixture(scope="module")
def mlflow_traces() -> list:
    """MLflow traces as ``Trace.to_dict()`` writes them: three, each with a judge's and a reviewer's feedback."""
    pytest.importorskip("mlflow")
    from mlflow.entities import (
        AssessmentSource,
        AssessmentSourceType,
        Feedback,
        Span,
        Trace,
        TraceData,
        TraceInfo,
        TraceState,
    )
    from mlflow.entities.trace_location import TraceLocation

    traces = []
    for i in range(3):
        feedback = [Feedback(name="correctness", value=bool(i % 2), rationale="checked", trace_id=f"tr-{i}",
                             source=AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE,
                                                     source_id="openai:/gpt-4o")),
                    Feedback(name="correctness", value=True, trace_id=f"tr-{i}",
                             source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="ana"))]
        for n, f in enumerate(feedback):
            f.assessment_id = f"a-{i}-{n}"
        info = TraceInfo(trace_id=f"tr-{i}", trace_location=TraceLocation.from_experiment_id("1"),
                         request_time=1_700_000_000_000 + i, state=TraceState.OK,
                         request_preview=json.dumps({"question": f"{i}+{i}"}), response_preview=json.dumps(str(2 * i)),
                         assessments=feedback)
        root = Span.from_dict({  # the root span: the trace's request and response
            "trace_id": base64.b64encode(i.to_bytes(16, "big")).decode(), "parent_span_id": "",
            "span_id": base64.b64encode((i + 1).to_bytes(8, "big")).decode(), "name": "qa",
            "start_time_unix_nano": 1, "end_time_unix_nano": 2, "status": {"code": "STATUS_CODE_OK", "message": ""},
            "events": [], "attributes": {"mlflow.traceRequestId": json.dumps(f"tr-{i}"),
                                         "mlflow.spanType": json.dumps("CHAIN"),
                                         "mlflow.spanInputs": json.dumps({"question": f"{i}+{i}"}),
                                         "mlflow.spanOutputs": json.dumps(str(2 * i))}})
        traces.append(Trace(info=info, data=TraceData(spans=[root])).to_dict())
    return traces


def _with_map(workspace: Workspace, source: str, name: str, data: bytes, maps: str, how: str, located: bool):
    db, inputs = workspace.fresh()
    (inputs / name).write_bytes(data)
    (inputs.parent / "map.yaml").write_text(maps)
    with Store(db) as s:
        res = outcome(db, inputs, name, lambda: import_from(s, source, str(inputs / name), "imported", "qa",
                                                            map_file=str(inputs.parent / "map.yaml")),
                      what=f"{source} {name} ({how}): {data[:400]!r}", record_level=located)
        if res is not None:
            assert s.conn.execute("SELECT count(*) FROM items").fetchone()[0] == res.items_added == res.items_read
    return res


@settings(settings.get_profile(PROFILE))
@given(st.data())
def test_inspect_logs_land_whole_or_are_refused_by_record(workspace, inspect_log, data):
    raw, how, located = data.draw(one_file(st.just(inspect_log), ("samples",)))
    _with_map(workspace, "inspect", "arith.json", raw, INSPECT_MAPS, how, located)


@settings(settings.get_profile(PROFILE))
@given(st.data())
def test_mlflow_traces_land_whole_or_are_refused_by_record(workspace, mlflow_traces, data):
    raw, how, located = data.draw(one_file(st.just(mlflow_traces), ()))
    _with_map(workspace, "mlflow", "traces.json", raw, MLFLOW_MAPS, how, located)


def test_the_unmutated_inspect_and_mlflow_files_import(workspace, inspect_log, mlflow_traces):
    """What refuses a mutation is the mutation: the files as the tools write them import whole."""
    res = _with_map(workspace, "inspect", "arith.json", json.dumps(inspect_log).encode(), INSPECT_MAPS, "as written",
                    True)
    assert res is not None and res.items_added == 3 and sum(j.added for j in res.judges) == 3
    res = _with_map(workspace, "mlflow", "traces.json", json.dumps(mlflow_traces).encode(), MLFLOW_MAPS, "as written",
                    True)
    assert res is not None and res.items_added == 3 and res.labels_added == 3


def _mutated_copy(doc, path: tuple, value=None, *, drop: bool = False):
    doc = json.loads(json.dumps(doc))
    at = doc
    for p in path[:-1]:
        at = at[p]
    if drop:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return doc


def _message_with_map(workspace, source, name, doc, maps) -> str:
    from workbench.core.errors import WorkbenchError

    db, inputs = workspace.fresh()
    (inputs / name).write_text(json.dumps(doc))
    (inputs.parent / "map.yaml").write_text(maps)
    with Store(db) as s, pytest.raises(WorkbenchError) as e:
        import_from(s, source, str(inputs / name), "imported", "qa", map_file=str(inputs.parent / "map.yaml"))
    assert _with_map(workspace, source, name, json.dumps(doc).encode(), maps, "kept", True) is None
    return str(e.value)


def test_an_inspect_sample_inspect_cannot_read_is_refused_as_its_record(workspace, inspect_log):
    """Found: a log without eval.dataset.sample_ids (and a sample pydantic refuses) raised Inspect's RuntimeError
    (or ValidationError) through the import."""
    message = _message_with_map(workspace, "inspect", "arith.json",
                                _mutated_copy(inspect_log, ("eval", "dataset", "sample_ids"), drop=True), INSPECT_MAPS)
    assert message.startswith("inspect arith.json record 1: Inspect cannot read the log from this sample on "
                              "(RuntimeError: "), message
    message = _message_with_map(workspace, "inspect", "arith.json",
                                _mutated_copy(inspect_log, ("samples", 1, "scores"), True), INSPECT_MAPS)
    # a .json log is read whole: refused at its first sample, Inspect's words naming the second
    assert message.startswith("inspect arith.json record 1: Inspect cannot read the log from this sample on "
                              "(ValidationError: ") and "samples.1.scores" in message, message


@pytest.mark.parametrize("path, value, needle", [
    # found: AttributeError ('partition' of a grader id that is not text; 'mlflow_experiment' of no location)
    ((0, "info", "assessments", 0, "source", "source_id"), True,
     "mlflow traces.json record 1: field info.assessments[0].source.source_id: found true, expected a string"),
    ((0, "info", "trace_location"), None,
     "mlflow traces.json record 1: field info.trace_location: found null, expected an object"),
    # found: MLflow's parser refused a field it does not know as 'got an unexpected keyword argument'
    ((1, "info", "surplus"), 1, "mlflow traces.json record 2: has a field MLflow's TraceInfo does not have ('surplus')"),
], ids=["source-id-boolean", "location-null", "unknown-field"])
def test_an_mlflow_trace_of_the_wrong_shape_is_refused_by_its_record(workspace, mlflow_traces, path, value, needle):
    message = _message_with_map(workspace, "mlflow", "traces.json", _mutated_copy(mlflow_traces, path, value),
                                MLFLOW_MAPS)
    assert message.startswith(needle), message
