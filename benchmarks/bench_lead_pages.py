"""Server time to render the Calibration and Compare pages on 10,000 items, 3 raters and 5 judges.

Builds the database through the import services (labels with realistic
disagreement, five judges of different quality and families), renders each page
once to compute and cache its reports, then times further renders with
Streamlit's AppTest (the script run on the server, no browser).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_ITEMS, RATERS = 10_000, ("ana", "ben", "chloe")
JUDGES = [("j-good", "anthropic/claude-sonnet-4-5", "anthropic", 0.9), ("j-mid", "openai/gpt-4o", "openai", 0.8),
          ("j-low", "openai/gpt-4o-mini", "openai", 0.65), ("j-meta", "openai-api/local/llama", "meta", 0.75),
          ("j-g", "openai-api/vertex/gemini", "google", 0.85)]


def build(tmp: Path) -> Path:
    from workbench.features.importing import service as importing
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.store import Store

    rng = random.Random(0)
    fams = [("claude", "anthropic"), ("gpt-4o", "openai"), ("gemini", "google")]
    truth = [rng.choice((-1, 0, 0, 1)) for _ in range(N_ITEMS)]
    with (tmp / "items.jsonl").open("w") as fh:
        for i in range(N_ITEMS):
            m, f = fams[i % 3]
            fh.write(json.dumps({"id": f"i{i}", "task_id": f"t{i // 2}", "category": "abcd"[i % 4], "input": f"task {i}",
                                 "output": "answer", "producer": {"model": m, "family": f}}) + "\n")

    def noisy(t: int, acc: float) -> int:
        return t if rng.random() < acc else max(-1, min(1, t + rng.choice((-1, 1))))

    with (tmp / "labels.jsonl").open("w") as fh:
        for i, t in enumerate(truth):
            for r in RATERS:
                fh.write(json.dumps({"item_id": f"i{i}", "rater": r, "score": noisy(t, 0.85)}) + "\n")
    rubric = {"name": "bench", "judges": [{"id": j, "model": m, "family": f} for j, m, f, _ in JUDGES]}
    (tmp / "bench.yaml").write_text(json.dumps(rubric))
    db = tmp / "bench.db"
    with Store(db) as s:
        add_rubric(s, tmp / "bench.yaml")
        importing.import_items(s, tmp / "items.jsonl", "g")
        importing.import_labels(s, tmp / "labels.jsonl", "g", "bench")
        for j, _, _, acc in JUDGES:
            with (tmp / f"{j}.jsonl").open("w") as fh:
                for i, t in enumerate(truth):
                    fh.write(json.dumps({"item_id": f"i{i}", "score": noisy(t, acc), "cost_usd": 0.001}) + "\n")
            importing.import_judgments(s, tmp / f"{j}.jsonl", "g", "bench", j)
        s.set_rater_role("lead", "lead")
    return db


def render_times(page: str, runs: int = 5) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "workbench/ui/app.py"), default_timeout=600)
    at.query_params["rater"] = "lead"
    at.run()
    t = time.perf_counter()
    at.switch_page(page).run()
    first = time.perf_counter() - t
    assert not at.exception, at.exception
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
    return first, statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        db = build(Path(d))
        os.environ["WORKBENCH_DB"] = str(db)
        cal_first, cal = render_times("views/calibration.py")
        cmp_first, cmp_ = render_times("views/compare.py")
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| render Calibration page, 10,000 items x 3 raters (first render computes: {cal_first:.1f} s) | "
          f"{cal * 1000:.0f} ms | < 1 s once computed |")
    print(f"| render Compare page, 5 judges (first render computes: {cmp_first:.1f} s) | {cmp_ * 1000:.0f} ms | "
          f"< 1 s once computed |")


if __name__ == "__main__":
    main()
