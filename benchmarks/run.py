"""Run every benchmark in this folder and print their result tables.

Each ``bench_*.py`` is a standalone script that prints a markdown table
(``| benchmark | result | target |`` rows); this runner runs them one after
another in fresh processes so one's memory or threads cannot colour another's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    only = sys.argv[1:]
    print("| benchmark | result | target |\n|---|---|---|")
    failed = 0
    for script in sorted(here.glob("bench_*.py")):
        if only and script.stem not in only and script.stem.removeprefix("bench_") not in only:
            continue
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        rows = [l for l in proc.stdout.splitlines() if l.startswith("| ") and not l.startswith("| benchmark")
                and not l.startswith("|---")]
        if proc.returncode != 0:
            failed += 1
            print(f"| {script.stem} | FAILED: {proc.stderr.strip().splitlines()[-1:] } | |")
        for r in rows:
            print(r)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
