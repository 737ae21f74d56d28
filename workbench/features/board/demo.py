"""The demo's results boards: the README's board walkthrough, run by `workbench demo` on the demo's data.

The demo rubric's Python grader (``test-results``: no API key, no network) judges the golden set the demo hands
over (``demo-board``, a copy of the demo's, so the demo golden set keeps its own judges and numbers), its
calibration passes the gate and is exported as an approved bundle, and that bundle grades the two packaged weeks
of runs (``examples/board/week-48.jsonl`` and ``week-49.jsonl``: three models on 8 tasks, twice each) onto the
boards ``demo-week-48`` and ``demo-week-49``. Every number the Board page shows is computed by the functions
`workbench judge run`, `workbench export` and `workbench board grade` call.

The bundle file is written inside the workspace, in a folder of its golden set
(``rubrics/approved/demo-board/``, so exporting the same rubric and judge on the demo golden set never overwrites
it): the database records only paths the workspace holds, and the Export page can offer the file. ``workbench demo`` hands this to
the demo's seeding (the demo knows nothing of boards: it passes its run files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from workbench.core.workspace import Workspace
from workbench.features.board import service as board
from workbench.features.export.bundle import approved_dir, export_bundle
from workbench.features.judging import service as judging
from workbench.store import Store

BOARD_GRADER = "test-results"  # the demo rubric's Python grader: the mechanical tier
BOARD_PREFIX = "demo-"


@dataclass(frozen=True)
class SeededBoard:
    name: str
    items: int    # runs on the board
    graded: int   # grades recorded by this seeding (0 when the board was graded already)
    bundle: Path | None = None  # the approved bundle file it graded with (in the workspace)


def board_name(run_file: str | Path) -> str:
    """``demo-week-49`` for ``week-49.jsonl``."""
    return BOARD_PREFIX + Path(run_file).stem


def seed_demo_boards(store: Store, golden_set: str, rubric: str, run_files: Sequence[Path],
                     workspace: Workspace | None = None, actor: str | None = None) -> list[SeededBoard]:
    """Judge the golden set with the Python grader, export its approved bundle, grade each run file onto its board.

    Resumable and idempotent like the commands it runs: a judgment or grade already recorded is not made again.
    ``rubric`` is the demo rubric's name (its current version is judged, as `workbench judge run` does).
    """
    judging.run_summary(store, golden_set, rubric, BOARD_GRADER, concurrency=1)
    out = []
    bundle = export_bundle(store, golden_set, rubric, BOARD_GRADER, out_dir=approved_dir(workspace) / golden_set,
                           workspace=workspace, signing_key=None, actor=actor)
    for path in run_files:
        summary = board.grade_board(store, board_name(path), [path], [bundle.path], concurrency=1,
                                    workspace=workspace)
        out.append(SeededBoard(summary.board, summary.n_items, sum(t.n_recorded for t in summary.tiers),
                               bundle.path))
    return out
