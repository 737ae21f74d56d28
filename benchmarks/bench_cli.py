"""End-to-end time of the command line, from process start to exit (issue 13's targets).

`workbench --help`, and `workbench calibrate --json` on 10,000 items x 3 raters x 2,000 resamples, first
computed and then read back from the report cache. Each is the median of several runs of a fresh process.
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

from benchmarks.bench_lead_pages import build  # noqa: E402  (the same 10,000-item database)


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
    exe = shutil.which("workbench") or sys.exit("workbench is not on PATH: pip install -e .")
    help_s = timed([exe, "--help"], 7)
    with tempfile.TemporaryDirectory() as d:
        db = build(Path(d))
        cmd = [exe, "--db", str(db), "calibrate", "-g", "g", "-r", "bench", "-j", "j-mid", "--json"]

        def drop_cache() -> None:
            import sqlite3
            with sqlite3.connect(db) as c:
                c.execute("DELETE FROM reports")

        first = timed(cmd, 3, before=drop_cache)
        cached = timed(cmd, 5)
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| `workbench --help`, process start to exit (median of 7) | {help_s:.2f} s | <= 0.4 s |")
    print(f"| `workbench calibrate --json`, 10,000 items x 3 raters, 2,000 resamples, computed (median of 3) "
          f"| {first:.2f} s | <= 1.2 s |")
    print(f"| the same, read back from the report cache (median of 5) | {cached:.2f} s | <= 0.5 s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
