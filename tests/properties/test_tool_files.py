"""Files other eval tools write (promptfoo, DeepEval, Langfuse, Phoenix, Inspect AI, MLflow), generated in each
tool's shape (or, for Langfuse and Phoenix, the API responses of tests/interop/fixtures) and then mutated: each
``import --from`` lands whole or is refused naming the file and the record, with nothing written."""

from __future__ import annotations

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
