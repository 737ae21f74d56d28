"""promptfoo: the results file of a real `promptfoo eval -o results.json`, run from the npm package (installed by
.ci/run under .ci/node) with a local Python provider and a local Python llm-rubric grader, offline; then imported.

The human rating is added to the real file the way promptfoo's viewer adds one (its web app's rating code puts a
component {pass, score, reason: "Manual result (overrides all other grading results)", comment,
assertion: {type: "human"}} into gradingResult.componentResults), since no command line gives a rating.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, write
from tests.interop.conftest import add_qa_rubric, calibrated
from workbench.features.interop.promptfoo import item_id
from workbench.features.interop.service import import_from

# the real tool runs here (seconds of set-up): in CI and `-m ""`, not in the quick loop
pytestmark = pytest.mark.slow

PROMPTFOO = Path(os.environ.get("WORKBENCH_PROMPTFOO", ROOT / ".ci" / "node" / "node_modules" / ".bin" / "promptfoo"))
HERE = Path(__file__).with_name("promptfoo")
MAP = """\
llm-rubric: {cut_points: [0.5], levels: [-1, 0]}   # the grader's 0-1 score: below 0.5 fails
human: {categorical: {1: 0, 0: -1}}                # the viewer's thumbs up and down
"""
PROVIDER = "python:provider.py:default"  # the id promptfoo gives the file://provider.py of the config
# The grader passes 1+1 and 2+2, fails 3+3 (the provider answers 7) and errs on 5+5; the reviewers fail 2+2.
LABELS = [(item_id(0, 0, PROVIDER), 0), (item_id(1, 0, PROVIDER), -1), (item_id(2, 0, PROVIDER), -1),
          (item_id(3, 0, PROVIDER), 0)]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    if not PROMPTFOO.exists():
        pytest.skip(f"promptfoo is not installed at {PROMPTFOO} (.ci/run installs it: npm install --prefix .ci/node "
                    "--omit=optional promptfoo@0.121.20 @libsql/linux-x64-gnu@0.5.29)")
    work = tmp_path_factory.mktemp("promptfoo")
    for f in ("promptfooconfig.yaml", "provider.py", "grader.py"):
        shutil.copy(HERE / f, work / f)
    env = {**os.environ, "HOME": str(work), "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}
    subprocess.run([str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-cache",
                    "--no-progress-bar"], cwd=work, env=env, timeout=300, capture_output=True)  # exits 100: tests fail
    out = work / "results.json"
    assert out.exists(), "promptfoo wrote no results.json"
    return out


def test_a_promptfoo_results_file_is_imported_with_grader_errors_unscored_and_calibrates(results, cli, store,
                                                                                          tmp_path):
    add_qa_rubric(store, tmp_path)
    mapping = write(tmp_path / "promptfoo-map.yaml", MAP)
    r = cli("import", "--from", "promptfoo", results, "-g", "qa", "-r", "qa", "--map", mapping)
    assert r.exit_code == 0, r.output
    assert "items: 4 read, 4 added" in r.output
    judge = "promptfoo.llm-rubric@grader.py"  # defaultTest.options.provider, as promptfoo resolves the grader
    assert f"judgments of {judge} (imported/promptfoo/grader.py, added to the rubric): 4 read (1 unscored)" \
        in r.output
    assert "skipped: 1 (equals assertion (not an LLM judge): 1)" in r.output

    labels = write(tmp_path / "labels.jsonl", "".join(
        json.dumps({"item_id": i, "rater": rater, "score": s}) + "\n" for i, s in LABELS for rater in ("ana", "ben")))
    assert cli("import", "labels", "--new-raters", labels, "-g", "qa", "-r", "qa").exit_code == 0
    report = calibrated(store, "qa", judge, tmp_path)
    assert report["n_unscored"] == 1  # 5+5: the grader's reply was not JSON
    assert report["n_items"] == 3
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(2 / 3)  # 2+2: passed, the humans fail it


def test_a_rating_given_in_the_viewer_is_a_label_of_the_evals_author(results, store, tmp_path):
    out = json.loads(results.read_text())
    row = out["results"]["results"][2]
    row["gradingResult"]["componentResults"].append(
        {"pass": False, "score": 0, "reason": "Manual result (overrides all other grading results)",
         "comment": "7 is wrong", "assertion": {"type": "human"}})
    out["metadata"]["author"] = "lead@example.com"
    rated = write(tmp_path / "rated.json", json.dumps(out))
    add_qa_rubric(store, tmp_path)
    res = import_from(store, "promptfoo", str(rated), "qa", "qa", map_file=str(write(tmp_path / "m.yaml", MAP)))
    assert (res.labels_read, res.raters) == (1, ["lead@example.com"])
    from workbench.calibration.golden_sets import consensus
    assert consensus(store, "qa", "qa").labels == {item_id(2, 0, PROVIDER): -1}


def test_item_ids_name_no_producer_and_a_second_import_maps_to_the_same_items(results, store, tmp_path):
    """A reviewer reads the item id: it carries no provider (which names the producer), and a team's second import
    of the same results file, here with the provider renamed to a real model, finds the items of the first."""
    out = json.loads(results.read_text())
    for row in out["results"]["results"]:
        row["provider"] = {"id": "openai:gpt-4o-mini", "label": "GPT-4o mini"}
    named = write(tmp_path / "named.json", json.dumps(out))
    add_qa_rubric(store, tmp_path)
    mapping = str(write(tmp_path / "m.yaml", MAP))
    first = import_from(store, "promptfoo", str(named), "qa", "qa", map_file=mapping)
    gs = store.golden_set("qa")
    ids = sorted(i.id for i in store.items(gs.id))
    assert ids == sorted(item_id(t, 0, "openai:gpt-4o-mini") for t in range(4))
    assert not [i for i in ids if re.search(r"gpt|openai|mini|provider|python", i, re.I)]
    assert {i.producer.model for i in store.items(gs.id)} == {"gpt-4o-mini"}  # leads still know the producer
    again = import_from(store, "promptfoo", str(named), "qa", "qa", map_file=mapping)
    assert sorted(i.id for i in store.items(gs.id)) == ids
    assert (first.items_added, again.items_added) == (4, 0)
