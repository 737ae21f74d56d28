"""Do the plan's ranges hold on unseen data? `workbench plan`'s 80% ranges against real labeling campaigns.

For every undecided gate check, ``plan`` gives the labels to a decision in random order as a median and an 80%
range over simulated futures (``features.planning.forecast``). A campaign (``validation/plan_honesty.py``) reads
that range through the product from a random start of real labeled items, then labels the rest of the real pool
in a random order, with the real human labels, re-reading the gate after every batch, until the check is decided.
Over many campaigns a range that means what it says holds the labels really needed about 80% of the time.

Measured, per pool (SummEval, held out; Play Favorites, whose judges also produce items), over judges x starting
sizes (50, 100, 200 items) x starts x random continuations of each start:

* *coverage*: the share of campaigns whose labels really needed lie in the 80% range (target 75% or more);
* *width*: the range's high / low (target 8 or less), a range past the plan's simulated horizon counting as
  infinitely wide;
* *median within 2x*: the share of campaigns whose labels really needed are within a factor 2 of the range's
  median (target 60% or more).

A pool that runs out reads as the old comparison read "this pool cannot decide it": every count is capped at the
labels left in the pool (a campaign that ran out needed at least those; a range past the pool reaches them).

    python validation/plan_ranges.py [--pools summeval,play-favorites] [--seeds 4] [--orders 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from validation import plan_honesty as ph  # noqa: E402  (the campaigns' machinery)

TARGET_COVERAGE, TARGET_WIDTH, TARGET_2X = 0.75, 8.0, 0.60


@dataclass(frozen=True)
class Summary:
    """Campaigns of one group (a pool, a case or a check): how often and how well the ranges held."""

    n: int
    coverage: float
    width: float            # median high / low
    width_ok: float         # share with high / low <= 8
    within_2x: float
    ran_out: int            # campaigns whose pool ran out first

    @staticmethod
    def of(campaigns: list[ph.Campaign]) -> Summary:
        if not campaigns:
            return Summary(0, float("nan"), float("nan"), float("nan"), float("nan"), 0)
        widths = np.array([c.width for c in campaigns])
        return Summary(len(campaigns), float(np.mean([c.inside for c in campaigns])), float(np.median(widths)),
                       float(np.mean(widths <= TARGET_WIDTH)), float(np.mean([c.within_2x for c in campaigns])),
                       sum(c.needed is None for c in campaigns))

    def meets(self) -> bool:
        return self.coverage >= TARGET_COVERAGE and self.width <= TARGET_WIDTH and self.within_2x >= TARGET_2X


def _n(x: float | None) -> str:
    return "beyond" if x is None else f"{x:,.0f}"


def _w(x: float) -> str:
    return "inf" if not np.isfinite(x) else f"{x:.1f}"


def case_table(campaigns: list[ph.Campaign]) -> str:
    """One row per pool x judge x starting size x check."""
    lines = ["| pool | judge | starting items | check | campaigns | range, median over campaigns: low / median / "
             "high | labels really needed: median (pool ran out) | inside the 80% range | high / low (median) | "
             "within 2x |", "|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(c.pool, c.judge, c.size, c.check) for c in campaigns},
                  key=lambda k: (k[0], k[1], k[2], ph.LABEL_CHECKS.index(k[3]) if k[3] in ph.LABEL_CHECKS else 9))
    for pool, judge, size, check in keys:
        mine = [c for c in campaigns if (c.pool, c.judge, c.size, c.check) == (pool, judge, size, check)]
        s = Summary.of(mine)

        def med(xs):  # None (beyond the horizon, or the pool ran out) counts as more than any number
            q = float(np.quantile([np.inf if x is None else float(x) for x in xs], 0.5, method="inverted_cdf"))
            return q if np.isfinite(q) else None

        needed = [c.needed for c in mine]
        lines.append(f"| {pool} | {judge} | {size} | {check} | {s.n} | {_n(med([c.low for c in mine]))} / "
                     f"{_n(med([c.median for c in mine]))} / {_n(med([c.high for c in mine]))} | "
                     f"{_n(med(needed))} ({s.ran_out}) | {s.coverage:.0%} | {_w(s.width)} | {s.within_2x:.0%} |")
    return "\n".join(lines)


def pool_table(campaigns: list[ph.Campaign]) -> str:
    """One row per pool, and by starting size: the three targets."""
    lines = ["| pool | starting items | campaigns | inside the 80% range (target >= 75%) | high / low: median "
             "(share <= 8) | median within 2x (target >= 60%) | pool ran out |", "|---|---|---|---|---|---|---|"]
    for pool in sorted({c.pool for c in campaigns}):
        mine = [c for c in campaigns if c.pool == pool]
        for size in [None, *sorted({c.size for c in mine})]:
            group = [c for c in mine if size is None or c.size == size]
            s = Summary.of(group)
            lines.append(f"| {pool} | {'all' if size is None else size} | {s.n} | {s.coverage:.0%} | "
                         f"{_w(s.width)} ({s.width_ok:.0%}) | {s.within_2x:.0%} | {s.ran_out} |")
    return "\n".join(lines)


def spread_table(campaigns: list[ph.Campaign]) -> str:
    """How far apart the real needs of one start lie: for every start and check, the highest over the lowest of
    the labels its random continuations really needed (a pool that ran out counts as the labels left). Three
    draws of a distribution span its middle half on average, so where their high / low already passes 8 no
    honest 80% range can be 8 wide: the spread is the labels', not the plan's."""
    groups: dict[tuple, list[float]] = {}
    for c in campaigns:
        groups.setdefault((c.pool, c.check, c.size, c.judge, c.seed), []).append(c._capped(c.needed))
    lines = ["| pool | check | starts | real high / low over a start's continuations: median | share above 8 |",
             "|---|---|---|---|---|"]
    for pool, check in sorted({(k[0], k[1]) for k in groups}):
        ratios = np.array([max(v) / max(min(v), 1.0) for k, v in groups.items()
                           if (k[0], k[1]) == (pool, check) and len(v) > 1])
        if ratios.size:
            lines.append(f"| {pool} | {check} | {ratios.size} | {np.median(ratios):.1f} | "
                         f"{np.mean(ratios > TARGET_WIDTH):.0%} |")
    return "\n".join(lines)


def measure(pools: list[str], *, seeds: int, orders: int, jobs: int, sizes=ph.SIZES,
            work: Path | None = None) -> list[ph.Campaign]:
    """Every campaign of every pool (``work``: a folder for the pools' stores, else temporary ones)."""
    campaigns: list[ph.Campaign] = []
    for name in pools:
        make, path, judges = ph.POOLS[name]
        if not path.exists():
            print(f"skipped {name}: {path} is not present")
            continue
        campaigns += ph.run(make(), judges=judges, sizes=sizes, seeds=seeds, orders=orders, jobs=jobs,
                            work=None if work is None else work / name)
    return campaigns


DEMO_JUDGES = ("careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama", "test-results")


def demo_timing() -> list[tuple[str, float, int]]:
    """(judge, seconds, undecided checks) of `workbench plan` on the demo, each a whole process, as a lead runs it
    (the demo seeded in a temporary folder first; the report cache warm, as after `workbench calibrate`)."""
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="plan-demo-"))
    subprocess.run(["workbench", "demo", "--no-ui"], cwd=folder, check=True, capture_output=True)
    subprocess.run(["workbench", "judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "test-results"],
                   cwd=folder, check=True, capture_output=True)
    out = []
    for judge in DEMO_JUDGES:
        scope = ["-g", "demo", "-r", "demo-patch-quality", "-j", judge]
        subprocess.run(["workbench", "calibrate", *scope], cwd=folder, capture_output=True)
        t0 = time.perf_counter()
        done = subprocess.run(["workbench", "plan", *scope], cwd=folder, check=True, capture_output=True, text=True)
        out.append((judge, time.perf_counter() - t0, done.stdout.count("[UNDECIDED]")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", default="summeval,play-favorites", help="comma-separated: " + ", ".join(ph.POOLS))
    ap.add_argument("--seeds", type=int, default=4, help="random starts a judge x starting size")
    ap.add_argument("--orders", type=int, default=3, help="random continuations a start")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--save", type=Path, help="pickle the campaigns here (to re-read the tables)")
    ap.add_argument("--demo-timing", action="store_true", help="time `workbench plan` on the demo only")
    args = ap.parse_args()
    if args.demo_timing:
        print("| demo judge | `workbench plan`, whole process (s) | undecided checks |\n|---|---|---|")
        for judge, seconds, undecided in demo_timing():
            print(f"| {judge} | {seconds:.2f} | {undecided} |")
        return 0
    t0 = time.time()
    campaigns = measure(args.pools.split(","), seeds=args.seeds, orders=args.orders, jobs=args.jobs)
    if not campaigns:
        return 0
    print(pool_table(campaigns))
    print()
    print(case_table(campaigns))
    print()
    print(spread_table(campaigns))
    if args.save:
        import pickle

        args.save.write_bytes(pickle.dumps(campaigns))
    print(f"\n({time.time() - t0:.0f} s; {args.seeds} starts x {args.orders} orders a judge x starting size)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
