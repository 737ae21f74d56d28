"""`workbench demo` seeds the results boards (issue 33 item 3) by running the board walkthrough on the demo's data.

The boards' grades are the demo grader's verdicts on the packaged runs (counted here from the run files with the
grader itself), the demo's own numbers (items, labels, the four judges' recorded judgments and their calibration)
do not move, nothing but the demo's files lands in the workspace, and a second seed adds nothing.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from contextlib import ExitStack
from importlib import resources
from pathlib import Path

from workbench.calibration.calibrate import calibrate
from workbench.calibration.golden_sets import golden_set_overview
from workbench.core.workspace import Workspace
from workbench.features.board import service as board
from workbench.features.board.demo import BOARD_GRADER, seed_demo_boards
from workbench.features.demo import graders
from workbench.features.demo.seed import (
    BOARD_GOLDEN_SET,
    DEMO_GOLDEN_SET,
    board_run_files,
    demo_files,
    seed_demo,
)
from workbench.features.export.bundle import list_bundles
from workbench.store import Store

RUBRIC = "demo-patch-quality"
JUDGES = ("careful-sonnet", "gpt4o-self", "lenient-mini", "noisy-llama")


def shares(path: Path) -> dict[tuple[str, str], float]:
    """Each (task, model) cell's share of passing runs, by the demo grader applied to the run file directly."""
    passes: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for run in board.read_runs([path]):
        score, _ = graders.test_results(run.item, None)
        passes[(run.item.cluster, run.item.producer.model)].append(score >= 0)
    return {k: sum(v) / len(v) for k, v in passes.items()}


def golden_set_state(store: Store, name: str) -> dict:
    """What `workbench golden-set show --json` says of the golden set, without when its versions were frozen."""
    info = golden_set_overview(store, name).to_json()
    for v in info.get("versions", []):
        v.pop("created_at", None)
    return info


def numbers(report) -> dict:
    """A calibration report's numbers, without when and under which ids it was computed."""
    data = json.loads(json.dumps(report.to_json(), default=str))
    for key in ("computed_at", "ids", "golden_set", "cache"):
        data.pop(key, None)
    return data


def test_the_demo_seeds_two_graded_boards_without_moving_its_own_numbers(demo_db_template, tmp_path,
                                                                         tmp_path_factory):
    db = tmp_path / "workbench.db"
    ws = Workspace(tmp_path, db)
    # a copy of the tests' template: calibrate caches its reports in the database it reads, and the template is
    # shared by every test of this process
    plain_db = tmp_path_factory.mktemp("plain") / "demo.db"
    shutil.copy(demo_db_template, plain_db)
    with Store(db) as s:
        summary = seed_demo(s, ws, precompute=True, boards=seed_demo_boards)
        plain = Store(plain_db)
        try:
            # the demo's own numbers: the same as a seed without boards (the tests' template)
            assert (summary.items, summary.labels, summary.adjudications) == (150, 325, 9)
            assert sorted(summary.judgments) == sorted(JUDGES) and sum(summary.judgments.values()) == 1500
            for judge in JUDGES:
                assert numbers(calibrate(s, DEMO_GOLDEN_SET, RUBRIC, judge)) == \
                    numbers(calibrate(plain, DEMO_GOLDEN_SET, RUBRIC, judge)), judge
            # the demo golden set: the same runs and no frozen version; the grader was judged on the copy
            assert golden_set_state(s, DEMO_GOLDEN_SET) == golden_set_state(plain, DEMO_GOLDEN_SET)
            board_set = golden_set_state(s, BOARD_GOLDEN_SET)
            assert board_set["items"] == 150 and [r["judge"] for r in board_set["runs"]] == [BOARD_GRADER]
            assert [v["version"] for v in board_set["versions"]] == [1]  # frozen by the export
        finally:
            plain.close()

        # two boards, every run graded once by the approved grader's bundle, the grades the grader's verdicts
        assert [(b.name, b.items, b.graded) for b in summary.boards] == [("demo-week-48", 48, 48),
                                                                         ("demo-week-49", 48, 48)]
        with ExitStack() as files:
            runs = {f.name: files.enter_context(resources.as_file(f)) for f in board_run_files()}
            for name, week in (("demo-week-48", "week-48.jsonl"), ("demo-week-49", "week-49.jsonl")):
                rep = board.board_report(s, name)
                assert [t.judge for t in rep.tiers] == [BOARD_GRADER] and rep.n_ungraded == {"mechanical": 0}
                got = {(c.task_id, c.model): c.tiers["mechanical"].mean_at_k for c in rep.cells}
                assert got == shares(runs[week])
        # week 49's model-b2 fails most refactor tasks (as planted): it does not lead that week
        [lead] = board.board_leads(s, "demo-week-49")
        assert lead.leader != "model-b2" and lead.runner_up is not None

        # the approved bundle was exported once, into the workspace (a folder of its golden set): the database
        # records no path outside it, and the workspace holds the demo's files and that bundle
        exported = list_bundles(s)
        assert [(b.judge_id, b.golden_set) for b in exported] == [(BOARD_GRADER, BOARD_GOLDEN_SET)]
        bundle = Path(exported[0].path)
        assert bundle == tmp_path / "rubrics" / "approved" / BOARD_GOLDEN_SET / f"{RUBRIC}@v1--{BOARD_GRADER}.yaml"
        assert bundle.is_file()
        assert {t.golden_set for t in board.board_report(s, "demo-week-48").tiers} == {BOARD_GOLDEN_SET}
        on_disk = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")
                         if p.is_file() and not p.name.endswith(("-wal", "-shm", "-journal")))
        assert on_disk == sorted(["workbench.db", bundle.relative_to(tmp_path).as_posix(),
                                  *(str(rel) for rel, _ in demo_files())])
        assert [Path(r[0]) for r in s.conn.execute("SELECT path FROM exports")] == [bundle]
        assert {r[0] for r in s.conn.execute("SELECT path FROM board_bundles")} == {bundle.name}  # a name, no folder

        # a second seed adds nothing and grades nothing
        before = {b.name: (b.n_items, b.n_bundles) for b in board.list_boards(s)}
        grades_before = [board.board_fingerprint(s, n) for n in before]
        again = seed_demo(s, ws, precompute=True, boards=seed_demo_boards)
        assert not again.changed and again.boards == []
        assert {b.name: (b.n_items, b.n_bundles) for b in board.list_boards(s)} == before
        assert [board.board_fingerprint(s, n) for n in before] == grades_before
