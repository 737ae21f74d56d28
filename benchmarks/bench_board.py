"""Time of the board's statistics (no database): outliers per task and per category for both tiers, where to look,
and the corrected rates of every model and category, on the synthetic board of tests/board/synthetic.py.

Sizes: the issue's board (30 tasks x 6 models x 3 repeats) and a large one (300 tasks x 10 models x 5 repeats).
Each is the median of several runs.

Usage: python benchmarks/bench_board.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.board.synthetic import synthetic_board  # noqa: E402
from workbench.features.board import stats as sb  # noqa: E402

GOLDEN_HUMAN = [True] * 60 + [False] * 40
GOLDEN_JUDGE = [True] * 57 + [False] * 3 + [True] * 4 + [False] * 36


def board_stats(s) -> None:
    outs, cats = {}, {}
    for tier in ("mechanical", "judged"):
        outs[tier] = sb.cell_outliers(s.tier(tier)).cells
        cats[tier] = sb.category_outliers(s.tier(tier)).cells
        sb.corrected_rates(s.tier(tier).assign(**{"pass": lambda d: d["score"] >= 0}),
                           golden_human_pass=GOLDEN_HUMAN, golden_judge_pass=GOLDEN_JUDGE)
    it = s.items.assign(item_id=s.items["task_id"] + s.items["model"] + s.items["repeat"].astype(str),
                        mechanical_pass=s.items["mechanical"] >= 0, judged_pass=s.items["judged"] >= 0,
                        judged_top=s.items["judged"] == 1)
    sb.where_to_look(it, outs, cats)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| benchmark | result | target |\n|---|---|---|")
    for tasks, models, repeats in ((30, 6, 3), (300, 10, 5)):
        s = synthetic_board(0, n_tasks=tasks, n_models=models, repeats=repeats)
        board_stats(s)  # imports and caches
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            board_stats(s)
            times.append(time.perf_counter() - t0)
        print(f"| board statistics, {tasks} tasks x {models} models x {repeats} repeats "
              f"({len(s.items):,} runs, 2 tiers) | {statistics.median(times):.2f} s | |")


if __name__ == "__main__":
    main()
