"""Selective judging's guarantee on held-out real data: the rows of docs/benchmarks.md.

Play Favorites' logical-correctness ratings (../shared/data; a judge's confidence is the share of the eight other
LLM judges that give its rating, tests/selective/realdata.py). For each case, over S random calibration/test
splits: the threshold chosen on the calibration items (fixed-sequence testing, exact bounds), then on the test
items the realised agreement on the kept items (a split *fails* when it is below the target A) and the coverage
against an oracle's (the lowest threshold whose agreement on the test items themselves reaches A). The guarantee
holds when at most D of the splits fail, up to binomial noise; the slow test of tests/selective/
test_real_data_guarantee.py asserts the same numbers (at most D x S + 2.33 sd failures, coverage >= 0.8 of the
oracle's).

The second table times a cascade's joint choice (``stats.selective.choose_cascade``, what ``calibrate --selective
--cascade`` runs once its judgments are read): two and three Play Favorites judges, on the first 500, 1,000 and
5,000 of a seeded permutation of their common answers, median of five runs. The validation of its guarantee and
coverage is ``validation/cascade.py``.

Usage: python benchmarks/bench_selective.py [--splits 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.selective.test_real_data_guarantee import CASES, held_out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| judge | A | D | calibration items | splits below A | allowed | coverage / oracle's | time |")
    print("|---|---|---|---|---|---|---|---|")
    for judge, target, risk, n_cal in CASES:
        start = time.perf_counter()
        failures, ratio = held_out(judge, target, risk, n_cal, args.splits, seed=args.seed)
        allowed = math.floor(risk * args.splits + 2.33 * math.sqrt(args.splits * risk * (1 - risk)))
        print(f"| {judge} | {target} | {risk} | {n_cal:,} | {failures} of {args.splits} "
              f"({failures / args.splits:.2%}) | {allowed} | {ratio:.2f} | {time.perf_counter() - start:.1f} s |")
    print()
    cascade_times(args.seed)
    return 0


def cascade_times(seed: int) -> None:
    import numpy as np

    from validation.cascade import LLAMA_8B, SONNET_35, pool
    from workbench.stats.selective import choose_cascade

    print("| cascade | configurations | 500 items | 1,000 items | 5,000 items |")
    print("|---|---|---|---|---|")
    for judges in ((LLAMA_8B, "gpt-4o"), (LLAMA_8B, "mistral.mistral-7b-instruct-v0:2", SONNET_35)):
        p = pool("play_favorites", judges)
        order = np.random.default_rng(seed).permutation(len(p.confidence))
        cells, n_candidates = [], 0
        for n in (500, 1000, 5000):
            rows = order[:n]
            times = []
            for _ in range(5):
                start = time.perf_counter()
                r = choose_cascade(p.confidence[rows], p.agree[rows], target=0.9, risk=0.1)
                times.append(time.perf_counter() - start)
            n_candidates = r.n_candidates
            cells.append(f"{1000 * float(np.median(times)):.0f} ms")
        print(f"| {len(judges)} judges | {n_candidates:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
