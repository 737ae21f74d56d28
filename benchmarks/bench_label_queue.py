"""Label queue speed: the server's time to pick and reserve a reviewer's next item on a large golden set.

10,000 items, overlap 2, three reviewers taking turns (so items another reviewer started come first, as the Label
page serves them); each `next_item` is timed, then the label saved. Median and 95th percentile of 600 picks.

Usage: python benchmarks/bench_label_queue.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.features.demo.generator import DATA_DIR  # noqa: E402
from workbench.features.importing import service as importing
from workbench.features.labeling import service as labeling  # noqa: E402
from workbench.calibration.rubric_versions import add_rubric  # noqa: E402
from workbench.store import Store  # noqa: E402

RUBRIC = "demo-patch-quality"


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-queue-"))
    store = Store(tmp / "wb.db")
    add_rubric(store, DATA_DIR / "rubrics" / f"{RUBRIC}.yaml")
    (tmp / "items.jsonl").write_text("".join(
        json.dumps({"id": f"i{k}", "task_id": f"t{k}", "category": "c", "input": "task", "output": "answer"}) + "\n"
        for k in range(10_000)))
    importing.import_items(store, tmp / "items.jsonl", "big")
    times = []
    for _ in range(200):
        for rater in ("ana", "ben", "chloe"):
            start = time.perf_counter()
            item = labeling.next_item(store, "big", RUBRIC, rater)
            times.append(time.perf_counter() - start)
            labeling.submit_label(store, "big", RUBRIC, item.item_id, rater, 0)
    times.sort()
    median, p95 = times[len(times) // 2] * 1000, times[int(len(times) * 0.95)] * 1000
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| Label queue: next item for a reviewer, 10,000 items, 3 reviewers taking turns (600 picks) | "
          f"{median:.0f} ms median, {p95:.0f} ms p95 | < 300 ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
