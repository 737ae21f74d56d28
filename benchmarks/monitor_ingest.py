"""`workbench monitor ingest` of 100,000 traces from one jsonl file, as a whole process (start to exit), on the
approved workspace of tests/monitoring (Play Favorites rows, ../shared/data), 5% sampled for labeling; then
`monitor report --json` on the 100,000 traces. Target (issue 31): the ingest under 60 s on 2 cores.

Usage: python benchmarks/monitor_ingest.py [--traces 100000] [--label-rate 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.monitoring import realdata  # noqa: E402
from tests.monitoring.conftest import build_approved  # noqa: E402


def write_traces(path: Path, n: int) -> None:
    rows = realdata.load()
    start = datetime(2026, 12, 1, tzinfo=timezone.utc)
    with path.open("w") as fh:
        for k in range(n):
            i = k % len(rows.key)
            fh.write(json.dumps({"id": f"t{k}", "timestamp": (start + timedelta(seconds=26 * k)).isoformat(),
                                 "category": str(rows.category[i]), "input": "Q" * int(rows.length[i]) * 2,
                                 "output": "A" * int(rows.length[i]), "score": int(rows.judge[i]),
                                 "metadata": {"region": "eu"}}) + "\n")


def run(db: Path, root: Path, *args: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "workbench.cli", *args, "--db", str(db), "--project", str(root)],
                   check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=100_000)
    ap.add_argument("--label-rate", type=float, default=0.05)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db, bundle = build_approved(root)
        traces = root / "traces.jsonl"
        write_traces(traces, a.traces)
        size = traces.stat().st_size / 1e6
        ingest = run(db, root, "monitor", "ingest", "--stream", "prod", "--bundle", str(bundle), "--from", "jsonl",
                     str(traces), "--label-rate", str(a.label_rate), "--seed", "1")
        again = run(db, root, "monitor", "ingest", "--stream", "prod", "--bundle", str(bundle), "--from", "jsonl",
                    str(traces), "--label-rate", str(a.label_rate))
        report = run(db, root, "monitor", "report", "--stream", "prod", "--json")
        print(f"ingest {a.traces:,} traces ({size:.0f} MB, {a.label_rate:g} sampled): {ingest:.1f} s "
              f"({a.traces / ingest:,.0f} traces/s); the same file again (adds nothing): {again:.1f} s; "
              f"monitor report --json: {report:.1f} s; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
