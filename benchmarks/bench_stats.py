"""Time a full calibration report of the stats package, and compare with one library call per resample.

Run from the repository root::

    python benchmarks/bench_stats.py [--items 10000] [--resamples 2000] [--loop-resamples 20]

The report is what ``calibrate`` computes from the statistics package: every
agreement metric with a 2,000-resample cluster-bootstrap interval, the human
ceiling, the alternative-annotator test and self-preference (also
bootstrapped). The baseline is the obvious way to get intervals: for each
resample, draw the task clusters, gather the items, and call
``krippendorff.alpha`` and ``sklearn.metrics.cohen_kappa_score`` once each
(just two of the ten metrics). It is timed on ``--loop-resamples`` resamples
and extrapolated linearly to ``--resamples``.

Prints a markdown table; targets: full report under 2 s, bootstrap at least
50x faster than the loop.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import krippendorff  # noqa: E402
from sklearn.metrics import cohen_kappa_score  # noqa: E402

from workbench.stats import (  # noqa: E402
    agreement_with_intervals, alternative_annotator_test, human_ceiling, self_preference)

SCALE = (-1, 0, 1)


def synthetic_golden_set(n_items: int, n_raters: int = 3, seed: int = 0) -> dict:
    """Items in tasks of 1-4, each labeled by every rater with realistic disagreement; one judge."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=n_items)
    tasks = np.repeat(np.arange(n_items), sizes)[:n_items]
    truth = rng.choice(3, size=n_items, p=[0.3, 0.5, 0.2]) - 1

    def noisy(p_keep):
        step = rng.choice([-1, 1], size=n_items)
        return np.where(rng.random(n_items) < p_keep, truth, np.clip(truth + step, -1, 1))

    rater_scores = np.stack([noisy(0.8) for _ in range(n_raters)])
    consensus = np.sign(rater_scores.sum(axis=0)).astype(int)  # majority of three on -1/0/+1
    judge = noisy(0.75)
    item_ids = np.array([f"item-{i}" for i in range(n_items)])
    labels = pd.DataFrame({
        "item_id": np.tile(item_ids, n_raters),
        "rater": np.repeat([f"reviewer-{r}" for r in range(n_raters)], n_items),
        "score": rater_scores.ravel(),
    })
    family = rng.choice(["anthropic", "openai", "google", "meta"], size=n_items)
    model = np.where(family == "anthropic", rng.choice(["claude-x", "claude-y"], size=n_items), family + "-model")
    return {
        "consensus": consensus, "judge": judge, "tasks": tasks, "labels": labels,
        "judge_map": pd.Series(judge, index=item_ids), "family": family, "model": model,
        "category": rng.choice(["bugfix", "feature", "refactor", "docs"], size=n_items),
    }


def full_report(data: dict, resamples: int) -> dict:
    return {
        "agreement": agreement_with_intervals(data["consensus"], data["judge"], data["tasks"], scale=SCALE,
                                              pass_threshold=0, resamples=resamples, seed=0),
        "human_ceiling": human_ceiling(data["labels"], data["judge_map"], scale=SCALE),
        "alt_test": alternative_annotator_test(data["labels"], data["judge_map"], scale=SCALE),
        "self_preference": self_preference(data["consensus"], data["judge"], scale=SCALE,
                                           producer_model=data["model"], producer_family=data["family"],
                                           judge_model="claude-x", judge_family="anthropic",
                                           category=data["category"], clusters=data["tasks"],
                                           resamples=resamples, seed=0),
    }


def library_loop(data: dict, resamples: int) -> float:
    """Seconds for ``resamples`` cluster resamples, each scored by krippendorff.alpha and cohen_kappa_score."""
    rng = np.random.default_rng(1)
    consensus, judge, tasks = data["consensus"], data["judge"], data["tasks"]
    clusters, groups = np.unique(tasks, return_inverse=True)
    members = np.split(np.argsort(groups, kind="stable"), np.cumsum(np.bincount(groups))[:-1])
    start = time.perf_counter()
    for _ in range(resamples):
        drawn = rng.integers(0, len(clusters), size=len(clusters))
        items = np.concatenate([members[g] for g in drawn])
        c, j = consensus[items], judge[items]
        krippendorff.alpha(reliability_data=[c, j], level_of_measurement="ordinal", value_domain=list(SCALE))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cohen_kappa_score(c, j, labels=list(SCALE))
    return time.perf_counter() - start


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--loop-resamples", type=int, default=20)
    args = parser.parse_args()

    data = synthetic_golden_set(args.items, args.raters)
    full_report(data, 50)  # warm up imports and caches
    r = args.resamples
    rows = [
        ("agreement_with_intervals (10 metrics)", best_of(lambda: agreement_with_intervals(
            data["consensus"], data["judge"], data["tasks"], scale=SCALE, pass_threshold=0, resamples=r, seed=0))),
        ("human_ceiling", best_of(lambda: human_ceiling(data["labels"], data["judge_map"], scale=SCALE))),
        ("alternative_annotator_test", best_of(lambda: alternative_annotator_test(
            data["labels"], data["judge_map"], scale=SCALE))),
        ("self_preference (2 effects, bootstrap + OLS)", best_of(lambda: self_preference(
            data["consensus"], data["judge"], scale=SCALE, producer_model=data["model"],
            producer_family=data["family"], judge_model="claude-x", judge_family="anthropic",
            category=data["category"], clusters=data["tasks"], resamples=r, seed=0))),
    ]
    full = best_of(lambda: full_report(data, r))
    loop = library_loop(data, args.loop_resamples) * r / args.loop_resamples
    agreement_time = rows[0][1]

    print(f"{args.items:,} items x {args.raters} raters, {len(np.unique(data['tasks'])):,} task clusters, "
          f"{r:,} resamples; Python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs; best of 3\n")
    print("| step | seconds |")
    print("|---|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} |")
    print(f"| **full report** (target < 2 s) | **{full:.3f}** |")
    print(f"| loop: krippendorff.alpha + cohen_kappa_score per resample "
          f"({args.loop_resamples} timed, x{r // args.loop_resamples}) | {loop:.1f} |")
    print(f"| speed-up of agreement_with_intervals over the loop (target >= 50x) | {loop / agreement_time:,.0f}x |")
    print(f"| speed-up of the full report over the loop | {loop / full:,.0f}x |")


if __name__ == "__main__":
    main()
