"""The demo's results board: the README's board walkthrough, run by `workbench demo` on its own data.

The demo's Python grader (``test-results``, no API key, no network) judges the demo golden set, its calibration
passes the gate and is exported as an approved bundle, and that bundle grades the two packaged weeks of runs
(``examples/board/week-48.jsonl`` and ``week-49.jsonl``: three models on 8 tasks, twice each) onto the boards
``demo-week-48`` and ``demo-week-49``. Every number the Board page shows is computed by the same functions
`workbench judge run`, `workbench export` and `workbench board grade` call.

The bundle file is written to a temporary folder and gone once graded: the boards keep the bundle itself, and the
workspace holds only the demo's own files (`workbench export` writes the bundle where a lead wants it).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from importlib import resources

from workbench.core.workspace import Workspace
from workbench.store import Store

BOARD_GRADER = "test-results"  # the demo rubric's Python grader: the mechanical tier
BOARD_WEEKS = (48, 49)
BOARD_PREFIX = "demo-week-"


@dataclass(frozen=True)
class SeededBoard:
    name: str
    items: int    # runs on the board
    graded: int   # grades recorded by this seeding (0 when the board was graded already)


def board_name(week: int) -> str:
    return f"{BOARD_PREFIX}{week}"


def seed_boards(store: Store, golden_set: str, rubric: str, workspace: Workspace | None = None,
                actor: str | None = None) -> list[SeededBoard]:
    """Judge the golden set with the Python grader, export its approved bundle, grade both weeks onto boards.

    Resumable and idempotent like the commands it runs: a judgment or grade already recorded is not made again.
    ``rubric`` is the demo's rubric name (its current version is judged, as `workbench judge run` does).
    """
    from workbench.features.board import service as board
    from workbench.features.export.bundle import export_bundle
    from workbench.features.judging import service as judging

    judging.run_summary(store, golden_set, rubric, BOARD_GRADER, concurrency=1)
    runs = resources.files("workbench.features.demo").joinpath("data", "examples", "board")
    out = []
    with tempfile.TemporaryDirectory(prefix="workbench-demo-bundle-") as tmp:
        bundle = export_bundle(store, golden_set, rubric, BOARD_GRADER, out_dir=tmp, workspace=workspace,
                               signing_key=None, actor=actor)
        for week in BOARD_WEEKS:
            with resources.as_file(runs / f"week-{week}.jsonl") as path:
                summary = board.grade_board(store, board_name(week), [path], [bundle.path], concurrency=1,
                                            workspace=workspace)
            out.append(SeededBoard(summary.board, summary.n_items, sum(t.n_recorded for t in summary.tiers)))
    return out
