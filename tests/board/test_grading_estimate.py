"""The estimate the Board page shows before grading (``board.grading_estimate``): the grades ``grade_board`` will
record, per tier, and their cost; runs graded before with the same bundle count for nothing."""

from __future__ import annotations

import json
from importlib import resources

from workbench.core.workspace import Workspace
from workbench.features.board import service as board
from workbench.features.board.demo import seed_demo_boards
from workbench.features.demo.seed import board_run_files, seed_demo
from workbench.store import Store


def test_the_estimate_counts_the_grades_the_grading_records(tmp_path):
    db = tmp_path / "workbench.db"
    with Store(db) as s:
        seed_demo(s, Workspace(tmp_path, db), precompute=True, boards=seed_demo_boards)
        week = next(f for f in board_run_files() if f.name == "week-49.jsonl")
        rows = [json.loads(line) for line in week.read_text().splitlines()]
        more = tmp_path / "more.jsonl"
        more.write_text("".join(json.dumps({**r, "id": r["id"] + "-more", "repeat": r["repeat"] + 2}) + "\n"
                                for r in rows))
        [(tier, e)] = board.grading_estimate(s, "demo-week-49", [more])
        assert tier == "mechanical" and e.n_to_run == len(rows)
        assert (e.cost_usd, e.max_cost_usd) == (0.0, 0.0)  # the Python grader: nothing billed
        with resources.as_file(week) as graded:  # the week the demo graded already: nothing to send
            assert [x.n_to_run for _, x in board.grading_estimate(s, "demo-week-49", [graded])] == [0]
        summary = board.grade_board(s, "more", [more], [], like="demo-week-49")
        assert sum(t.n_recorded for t in summary.tiers) == e.n_to_run
        assert [x.n_to_run for _, x in board.grading_estimate(s, "demo-week-49", [more])] == [0]
