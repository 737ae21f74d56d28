"""A lead's campaign through the product, random queue against active queue, on several generated pools (README).

Each pool is 1,000 items from the demo generator's model (10% fails, a planted judge of the judge's own family
among the producers); two simulated reviewers label through the Label page's queue and the lead stops when
`workbench plan` has no undecided gate check (tests/planning/test_lead_campaign.py, which runs three of them).

    python validation/lead_campaign.py [--pools 10] [--items 1000] [--fails 0.1] [--judge-family openai]
                                       [--self-preference 0]
"""

from __future__ import annotations

import argparse
import string
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.planning.test_lead_campaign import OPTIONS, REVIEWERS, RUBRIC, _answer, _campaign, _jsonl, _pool, _verdict  # noqa: E402
from workbench.features.importing import service as importing  # noqa: E402
from workbench.calibration.calibrate import calibrate  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pools", type=int, default=10)
    ap.add_argument("--first", type=int, default=0, help="start at this pool (0: a) to extend an earlier run")
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--fails", type=float, default=0.1, help="share of items whose true score is a fail")
    ap.add_argument("--judge-family", default="openai", help="'meta': no producer shares the judge's family")
    ap.add_argument("--self-preference", type=float, default=0.0, help="the judge's planted lift on its family")
    args = ap.parse_args()
    kind = dict(n_items=args.items, fail_share=args.fails, judge_family=args.judge_family,
                self_preference=args.self_preference)
    tmp = Path(tempfile.mkdtemp(prefix="lead-campaign-"))
    print("| pool | whole pool's verdict | random queue: labels (verdict) | active queue: labels (verdict) | saved |")
    print("|---|---|---|---|---|")
    total = {"random": 0, "active": 0}
    for prefix in string.ascii_lowercase[args.first: args.first + args.pools]:
        store, truth = _pool(tmp, prefix, "whole", **kind)
        rows = [{"item_id": i, "rater": r.name, "score": _answer(r, i, t), "rationale": "read the patch"}
                for i, t in truth.items() for r in REVIEWERS]
        importing.import_labels(store, _jsonl(tmp / f"{prefix}-all.jsonl", rows), "pool", RUBRIC)
        whole = _verdict(store, calibrate(store, "pool", RUBRIC, "sim", OPTIONS))
        cells = []
        runs = {}
        for order in ("random", "active"):
            store, truth = _pool(tmp, prefix, order, **kind)
            runs[order] = _campaign(store, truth, order)
            total[order] += runs[order][0]
            given, verdict = runs[order]
            cells.append(f"{given} ({'calibrated' if verdict else 'not calibrated'}"
                         f"{'' if verdict == whole else ', WRONG'})")
        saved = 1 - runs["active"][0] / runs["random"][0]
        print(f"| {prefix} | {'calibrated' if whole else 'not calibrated'} | {cells[0]} | {cells[1]} | {saved:.0%} |",
              flush=True)
    print(f"| all | | {total['random']} | {total['active']} | {1 - total['active'] / total['random']:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
