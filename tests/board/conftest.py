"""A database with two approved bundles (built once per session, copied per test) and run files of several models.

Bundles, both of the rubric ``board-rubric`` calibrated on golden set ``gold``:

* ``mech``: ``python/workbench.features.demo.graders:test_results``, the mechanical tier (reads the last test run);
* ``loop``: ``openai-api/loopback/loop-model`` (family anthropic), the judged tier: the loopback server answers
  each item's ``EXPECT-SCORE`` marker (a bundle's judge is a real provider: the scripted ``mock/`` is not one).

The golden set holds 60 items by models of four families, labeled by two raters; the mechanical judge is run
for real, the judged tier's judgments are imported with a few errors (a little lenient to the judge's own
family, not enough to fail the gate). Sixty items cannot decide the default bounds on self-preference (+/-0.1) and
the comparison with the reviewers, so the rubric's gate widens those two: the board is about grading with approved
bundles, and the gate's own tests hold the defaults.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from workbench.features.importing import service as importing
from workbench.features.judging import service as judging
from workbench.features.export.bundle import export_bundle
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

RUBRIC = """name: board-rubric
title: Patch quality
gate:
  max_self_preference: 0.4
  human_margin: 0.15
instructions: Judge the agent's patch. -1 fails, 0 is a competent pass, +1 is exceptional.
judges:
  - id: mech
    model: python/workbench.features.demo.graders:test_results
  - id: loop
    model: openai-api/loopback/loop-model
    family: anthropic
"""
GOLD_FAMILIES = [("claude-x", "anthropic"), ("gpt-x", "openai"), ("gemini-x", "google"), ("llama-x", "meta")]


def run_item(item_id: str, task: str, category: str, model: str, family: str, repeat: int, *, passes: bool,
             judged: int, added_test: bool = False) -> dict:
    """A run of a coding agent: the test run the mechanical grader reads, the judged verdict the fakes answer."""
    result = "12 passed in 0.4s" if passes else "3 failed, 9 passed in 0.4s"
    return {"id": item_id, "task_id": task, "category": category, "repeat": repeat,
            "input": f"Fix the bug of task {task}. ITEM-MARKER {item_id} EXPECT-SCORE {judged}",
            "trajectory": [{"role": "user", "content": f"Fix the bug of task {task}."},
                           {"role": "assistant", "content": "Running the tests.",
                            "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest -q"}}]
                            + ([{"name": "edit_file", "arguments": {"path": "tests/test_fix.py"}}] if added_test else [])},
                           {"role": "tool", "name": "bash", "content": result},
                           {"role": "assistant", "content": "Done."}],
            "output": "Done.", "reference": str(judged), "producer": {"model": model, "family": family}}


def _gold(tmp: Path) -> tuple[Path, Path, dict[str, Path]]:
    items, labels, judged = [], [], []
    for n in range(60):
        model, family = GOLD_FAMILIES[n % 4]
        passes = n % 3 != 0
        truth = -1 if not passes else (1 if n % 5 == 0 else 0)
        it = run_item(f"g{n}", f"gt{n}", f"gc{n % 3}", model, family, 0, passes=passes, judged=truth,
                      added_test=truth == 1)
        it.pop("repeat")
        items.append(it)
        labels += [{"item_id": f"g{n}", "rater": "ana", "score": truth},
                   {"item_id": f"g{n}", "rater": "ben", "score": 0 if n in (1, 11, 13, 23, 35, 50) else truth}]
        wrong = n in (7, 41) or (family == "anthropic" and n in (4, 28))  # a little lenient to its own
        judged.append({"item_id": f"g{n}", "score": min(1, truth + 1) if wrong else truth})
    files = {"items": items, "labels": labels, "loop": judged}
    return {k: write(tmp / f"{k}.jsonl", "".join(json.dumps(r) + "\n" for r in v)) for k, v in files.items()}


@pytest.fixture(scope="session")
def bundles_template(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("board-bundles")
    db = tmp / "w.db"
    files = _gold(tmp)
    with Store(db) as s:
        add_rubric(s, write(tmp / "board-rubric.yaml", RUBRIC))
        importing.import_items(s, files["items"], "gold")
        importing.import_labels(s, files["labels"], "gold", "board-rubric")
        importing.import_judgments(s, files["loop"], "gold", "board-rubric", "loop")
        judging.run(s, "gold", "board-rubric", "mech")
        out = {j: export_bundle(s, "gold", "board-rubric", j, out_dir=tmp / "approved").path.name
               for j in ("mech", "loop")}
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return tmp, out


@pytest.fixture
def workspace(bundles_template, tmp_path) -> dict:
    """A private copy: the database and the approved bundles next to it."""
    src, names = bundles_template
    shutil.copy(src / "w.db", tmp_path / "w.db")
    shutil.copytree(src / "approved", tmp_path / "approved")
    return {"db": tmp_path / "w.db", "dir": tmp_path,
            **{j: tmp_path / "approved" / name for j, name in names.items()}}


def write_runs(folder: Path, rows: list[dict]) -> list[Path]:
    """One run file per model, as a harness would write them."""
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["producer"]["model"], []).append(r)
    return [write(folder / f"run-{m}.jsonl", "".join(json.dumps(r) + "\n" for r in rs)) for m, rs in by_model.items()]


@pytest.fixture
def loopback():
    from tests.judges.loopback_server import LoopbackServer

    with LoopbackServer() as server:
        yield server
