"""End-to-end time of the command line, from process start to exit (issue 13's targets).

`workbench --help`, and `workbench calibrate --json` on 10,000 items x 3 raters x 2,000 resamples, first
computed and then read back from the report cache. Each is the median of several runs of a fresh process.

For scale, the naive way to get the same intervals: one library call per bootstrap resample (krippendorff.alpha
and cohen_kappa_score, two of the ten metrics, on a 10,000-item set: ``bench_stats.library_loop``), timed on
``--loop-resamples`` resamples and extrapolated to 2,000; the ratio is that loop's time over the whole command's.

Usage: python benchmarks/bench_cli.py [--runs 3] [--loop-resamples 20]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_lead_pages import N_ITEMS, build  # noqa: E402  (the same 10,000-item database)
from benchmarks.bench_stats import library_loop, synthetic_golden_set  # noqa: E402

RESAMPLES = 2000


def timed(args: list[str], runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before:
            before()
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per computed report (default 3)")
    parser.add_argument("--loop-resamples", type=int, default=20, help="resamples of the naive loop (default 20)")
    args = parser.parse_args()
    exe = shutil.which("workbench") or sys.exit("workbench is not on PATH: pip install -e .")
    help_s = timed([exe, "--help"], 7)
    with tempfile.TemporaryDirectory() as d:
        db = build(Path(d))
        cmd = [exe, "--db", str(db), "calibrate", "-g", "g", "-r", "bench", "-j", "j-mid", "--json"]

        def drop_cache() -> None:
            import sqlite3
            with sqlite3.connect(db) as c:
                c.execute("DELETE FROM reports")

        first = timed(cmd, args.runs, before=drop_cache)
        cached = timed(cmd, 5)
    loop = library_loop(synthetic_golden_set(N_ITEMS), args.loop_resamples) * RESAMPLES / args.loop_resamples
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| `workbench --help`, process start to exit (median of 7) | {help_s:.2f} s | <= 0.4 s |")
    print(f"| `workbench calibrate --json`, 10,000 items x 3 raters, 2,000 resamples, computed (median of "
          f"{args.runs}) | {first:.2f} s | <= 1.2 s |")
    print(f"| the same, read back from the report cache (median of 5) | {cached:.2f} s | <= 0.5 s |")
    print(f"| naive loop, one krippendorff.alpha + cohen_kappa_score call per resample, 2,000 resamples "
          f"(extrapolated from {args.loop_resamples}) against the whole computed command | {loop:.1f} s: "
          f"{loop / first:.0f}x the command's time | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
