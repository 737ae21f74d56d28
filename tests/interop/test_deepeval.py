"""DeepEval: the test-run JSON that DeepEval's own evaluate() writes, graded by an offline model class, imported.

DeepEval pins an older click and brings pytest plugins, so it lives in its own venv (.ci/venv-deepeval, made by
.ci/run); the run happens there, in a child process with telemetry opted out, and the workbench reads its JSON.
"""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    if not DEEPEVAL_PYTHON.exists():
        pytest.skip(f"DeepEval's venv is missing: {DEEPEVAL_PYTHON} (.ci/run makes it: python -m venv "
                    ".ci/venv-deepeval && .ci/venv-deepeval/bin/pip install deepeval==4.3.1)")
    out = tmp_path_factory.mktemp("deepeval")
    env = {**os.environ, "DEEPEVAL_RESULTS_FOLDER": str(out / "results"), "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
           "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0", "HOME": str(out)}
    subprocess.run([str(DEEPEVAL_PYTHON), str(Path(__file__).with_name("deepeval_run.py"))], cwd=out, env=env,
                   check=True, timeout=300, capture_output=True)
    files = sorted((out / "results").glob("test_run_*.json"))
    assert len(files) == 2  # one per evaluate() call: the single-turn cases, then the conversation
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
    assert cli("import", "labels", labels, "-g", "qa", "-r", "qa").exit_code == 0
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
    with pytest.raises(InputError, match=r"^deepeval record 2: field metricsData\[0\]\.score: value 0\.9 of "
                                         r"'Correctness \[GEval\]' is not covered by its map in narrow\.yaml"):
        import_from(store, "deepeval", str(runs[0]), "qa", "qa", map_file=str(narrow))
    assert store.golden_sets() == []
