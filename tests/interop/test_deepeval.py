"""DeepEval: the test-run JSON that DeepEval's own evaluate() writes, graded by an offline model class, imported.

DeepEval pins an older click and brings pytest plugins, so it lives in its own venv (.ci/venv-deepeval, made by
.ci/run); the run happens there, in a child process with telemetry opted out, and the workbench reads its JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, write
from tests.interop.conftest import add_qa_rubric, calibrated

DEEPEVAL_PYTHON = Path(os.environ.get("WORKBENCH_DEEPEVAL_PYTHON", ROOT / ".ci" / "venv-deepeval" / "bin" / "python"))
MAP = """\
"Correctness [GEval]":
  cut_points: [0.5, 0.85]   # DeepEval scores 0 to 1: below 0.5 fail, 0.85 and up exceptional
  range: [0, 1]
"Helpfulness [Conversational GEval]":
  cut_points: [0.5, 0.85]
"""
# The offline judge gives 0.2 to case-0, errs on case-3 and gives 0.9 to the others (see deepeval_run.py).
LABELS = [("case-0", -1), ("case-1", 1), ("case-2", 0), ("case-3", -1), ("case-4", 1), ("case-5", 1)]


def _deepeval_run(out: Path, *args: str) -> list[Path]:
    """The test-run files DeepEval's evaluate() writes when deepeval_run.py runs in DeepEval's venv, offline."""
    if not DEEPEVAL_PYTHON.exists():
        pytest.skip(f"DeepEval's venv is missing: {DEEPEVAL_PYTHON} (.ci/run makes it: python -m venv "
                    ".ci/venv-deepeval && .ci/venv-deepeval/bin/pip install deepeval==4.3.1)")
    env = {**os.environ, "DEEPEVAL_RESULTS_FOLDER": str(out / "results"), "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
           "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0", "HOME": str(out)}
    subprocess.run([str(DEEPEVAL_PYTHON), str(Path(__file__).with_name("deepeval_run.py")), *args], cwd=out,
                   env=env, check=True, timeout=300, capture_output=True)
    return sorted((out / "results").glob("test_run_*.json"))  # DeepEval adds _1 to a name taken in that second


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    files = _deepeval_run(tmp_path_factory.mktemp("deepeval"))
    assert len(files) == 2  # one per evaluate() call: the single-turn cases, then the conversation
    return files


@pytest.fixture(scope="module")
def default_runs(tmp_path_factory) -> list[Path]:
    files = _deepeval_run(tmp_path_factory.mktemp("deepeval-defaults"), "default-names")
    assert len(files) == 2  # the same unnamed cases run twice
    return files


def test_a_deepeval_test_run_is_imported_with_errors_unscored_and_calibrates(runs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path)
    mapping = write(tmp_path / "deepeval-map.yaml", MAP)
    r = cli("import", "--from", "deepeval", runs[0], "-g", "qa", "-r", "qa", "--map", mapping)
    assert r.exit_code == 0, r.output
    assert "items: 6 read, 6 added" in r.output
    judge = "deepeval.Correctness-GEval@offline-judge"
    assert f"judgments of {judge} (imported/deepeval/offline-judge, added to the rubric): 6 read (1 unscored)" \
        in r.output
    r = cli("import", "--from", "deepeval", runs[1], "-g", "qa", "-r", "qa", "--map", mapping)
    assert r.exit_code == 0 and "items: 1 read, 1 added" in r.output
    assert "deepeval.Helpfulness-Conversational-GEval@offline-judge" in r.output

    labels = write(tmp_path / "labels.jsonl", "".join(
        f'{{"item_id": "{i}", "rater": "{rater}", "score": {s}}}\n' for i, s in LABELS for rater in ("ana", "ben")))
    assert cli("import", "labels", "--new-raters", labels, "-g", "qa", "-r", "qa").exit_code == 0
    report = calibrated(store, "qa", judge, tmp_path)
    assert report["n_unscored"] == 1  # case-3: DeepEval recorded the judge's error
    assert report["n_items"] == 5
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(4 / 5)  # only case-2 differs


def test_the_conversation_becomes_a_trajectory(runs, store, tmp_path):
    from workbench.calibration.golden_sets import load_items
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path)
    import_from(store, "deepeval", str(runs[1]), "chat", "qa", map_file=str(write(tmp_path / "m.yaml", MAP)))
    (item,) = load_items(store, "chat")
    assert item.id == "chat-1" and item.input == "I need the sum of 2 and 2."
    assert [s["role"] for s in item.trajectory] == ["user", "assistant"] and item.output == "It is 4. [correct]"


def test_a_score_outside_the_maps_range_names_the_record(runs, store, tmp_path):
    from workbench.core.errors import InputError
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path)
    narrow = write(tmp_path / "narrow.yaml", '"Correctness [GEval]": {cut_points: [0.5], levels: [-1, 0], '
                                             'range: [0, 0.5]}\n')
    with pytest.raises(InputError, match=r"^deepeval test_run_\w+\.json record 2: field metricsData\[0\]\.score: value 0\.9 of "
                                         r"'Correctness \[GEval\]' is not covered by its map in narrow\.yaml"):
        import_from(store, "deepeval", str(runs[0]), "qa", "qa", map_file=str(narrow))
    assert store.golden_sets() == []


# --------------------------------------------------------------------------- default case names, default threshold
# The offline judge gives 0.9 to the odd cases (DeepEval: success at its default threshold 0.5) and 0.2 to the even.
FIVE_POINT = """\
name: qa
title: Answers are correct
instructions: Grade the answer against the reference.
scale:
- {value: 1, label: wrong}
- {value: 2, label: poor}
- {value: 3, label: fair}
- {value: 4, label: good}
- {value: 5, label: excellent}
pass_threshold: 4
"""


def _verdicts(store, golden_set: str) -> dict[str, list]:
    """The imported judge's scores by item input, over all its runs."""
    from workbench.calibration.golden_sets import load_items

    gs = store.golden_set(golden_set).id
    inputs = {i.id: i.input for i in load_items(store, golden_set)}
    out: dict[str, list] = {}
    for run in store.runs(gs):
        for j in store.judgments(gs, run["judge_pk"], run["id"]):
            out.setdefault(inputs[j["item_id"]], []).append(j["score"])
    return out


def test_default_case_names_are_not_item_ids_and_a_second_run_adds_nothing(default_runs, cli, store, tmp_path):
    first = json.loads(default_runs[0].read_text())
    assert [c["name"] for c in first["testCases"]] == [f"test_case_{i}" for i in range(4)]
    assert {m["threshold"] for c in first["testCases"] for m in c["metricsData"]} == {0.5}
    add_qa_rubric(store, tmp_path)
    mapping = write(tmp_path / "m.yaml", MAP)
    r = cli("import", "--from", "deepeval", default_runs[0], "-g", "qa", "-r", "qa", "--map", mapping)
    assert r.exit_code == 0, r.output
    assert "items: 4 read, 4 added" in r.output and "4 read (0 unscored), 4 added" in r.output
    r = cli("import", "--from", "deepeval", default_runs[1], "-g", "qa", "-r", "qa", "--map", mapping)
    assert r.exit_code == 0 and "items: 4 read, 0 added" in r.output and "4 read (0 unscored), 0 added" in r.output
    from workbench.calibration.golden_sets import load_items
    items = load_items(store, "qa")
    assert not any("test_case" in json.dumps(i.metadata) or i.id.startswith("test_case") for i in items)


@pytest.mark.parametrize("rubric, passed, failed", [(None, 0, -1), (FIVE_POINT, 4, 3)])
def test_success_and_failure_at_the_threshold_land_on_the_pass_level_and_the_one_below(
        default_runs, store, tmp_path, rubric, passed, failed):
    from workbench.calibration.rubric_versions import add_rubric, get_rubric
    from workbench.features.interop.service import import_from

    if rubric is None:
        add_qa_rubric(store, tmp_path)
    else:
        add_rubric(store, write(tmp_path / "rubrics" / "qa.yaml", rubric))
    res = import_from(store, "deepeval", str(default_runs[0]), "qa", "qa",  # no --map, none in the rubric
                      adapter_options={"rubric": get_rubric(store, "qa").rubric})
    assert [(j.judge_id, j.read, j.added) for j in res.judges] == [("deepeval.Correctness-GEval@offline-judge", 4, 4)]
    assert _verdicts(store, "qa") == {f"What is {i}*{i}?": [passed if i % 2 else failed] for i in range(4)}


def test_the_pass_fail_map_yields_to_a_map_the_rubric_gives(default_runs, store, tmp_path):
    from workbench.calibration.rubric_versions import get_rubric
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, 'import_maps:\n  "Correctness [GEval]": {cut_points: [0.5, 0.85]}\n')
    import_from(store, "deepeval", str(default_runs[0]), "qa", "qa",
                adapter_options={"rubric": get_rubric(store, "qa").rubric})
    assert _verdicts(store, "qa") == {f"What is {i}*{i}?": [1 if i % 2 else -1] for i in range(4)}


def test_a_default_deepeval_run_imports_from_the_command_line_without_a_map(default_runs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path)
    r = cli("import", "--from", "deepeval", default_runs[0], "-g", "qa", "-r", "qa")
    assert r.exit_code == 0, r.output
    assert _verdicts(store, "qa") == {f"What is {i}*{i}?": [0 if i % 2 else -1] for i in range(4)}
