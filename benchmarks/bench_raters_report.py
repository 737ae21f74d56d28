"""The raters report's speed on a team's golden set: `workbench rater report` over 50 reviewers.

A golden set of ``--items`` items in tasks of 4, each labeled by ``--overlap`` of 50 reviewers (each reviewer's
labels: the item's true level, or a random one for a quarter of them; 5 of the reviewers at random on half), so
the report has real disagreement to measure; then `workbench rater report --json` as a whole process, start to
exit, the median of ``--runs`` (each reviewer: leave-one-out agreement and alpha with 2,000-resample cluster
intervals, fail share, skips and flags, the over-time test, gold). Target (issue 45 item 6): under 2 s for 50
reviewers x 10,000 labels.

Usage: python benchmarks/bench_raters_report.py [--items 100000] [--overlap 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.calibration.rubric_versions import add_rubric  # noqa: E402
from workbench.features.demo.generator import DATA_DIR  # noqa: E402
from workbench.features.importing.service import import_items, import_labels  # noqa: E402
from workbench.store import Store  # noqa: E402

RUBRIC = "demo-patch-quality"
REVIEWERS = 50


def build(folder: Path, n_items: int, overlap: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    db = folder / "workbench.db"
    (folder / "items.jsonl").write_text("".join(
        json.dumps({"id": f"i{k}", "task_id": f"t{k // 4}", "input": "task", "output": "answer"}) + "\n"
        for k in range(n_items)))
    truth = rng.integers(-1, 2, n_items)
    careless = set(rng.choice(REVIEWERS, 5, replace=False).tolist())
    with (folder / "labels.jsonl").open("w") as fh:
        for k in range(n_items):
            for r in rng.choice(REVIEWERS, overlap, replace=False):
                wrong = rng.random() < (0.5 if r in careless else 0.25)
                score = int(rng.integers(-1, 2)) if wrong else int(truth[k])
                fh.write(json.dumps({"item_id": f"i{k}", "rater": f"rev{r:02d}", "score": score,
                                     **({"rationale": "why"} if score != 0 else {})}) + "\n")
    with Store(db) as s:
        add_rubric(s, DATA_DIR / "rubrics" / f"{RUBRIC}.yaml")
        import_items(s, folder / "items.jsonl", "team")
        import_labels(s, folder / "labels.jsonl", "team", RUBRIC, new_raters=True)
    return db


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--overlap", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-raters-"))
    t0 = time.perf_counter()
    db = build(folder, a.items, a.overlap)
    built = time.perf_counter() - t0
    times = []
    for _ in range(a.runs):
        start = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "workbench", "--db", str(db), "--project", str(folder), "rater",
                            "report", "-g", "team", "-r", RUBRIC, "--json"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
        times.append(time.perf_counter() - start)
        assert r.returncode == 0, r.stderr
        n = len(json.loads(r.stdout)["reviewers"])
    labels = a.items * a.overlap
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| `workbench rater report --json`, {n} reviewers x {labels // REVIEWERS:,} labels each ({labels:,} labels on "
          f"{a.items:,} items), process start to exit, median of {a.runs} (load {os.getloadavg()[0]:.1f}; built in "
          f"{built:.0f} s) | {sorted(times)[len(times) // 2]:.2f} s | < 2 s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
