"""Labels to a verdict in random and active order, on synthetic pools and on ../shared/data (README table).

    python validation/active_queue_simulation.py [--runs 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.planning.pools import SHARED, demo_pool, mtbench_pool, play_favorites_pool  # noqa: E402
from workbench.stats.label_simulation import campaign, pool_decision, pool_values, summarize  # noqa: E402

POOLS = [
    ("demo, 10% fails", lambda: demo_pool(n_items=1000, fail_share=0.1, seed=11)),
    ("demo, 30% fails", lambda: demo_pool(n_items=3000, fail_share=0.3, seed=12)),
    ("demo, 50% fails", lambda: demo_pool(n_items=10000, fail_share=0.5, seed=13)),
    ("demo, 10% fails, self-preference 0.5", lambda: demo_pool(n_items=3000, fail_share=0.1, seed=14,
                                                               self_preference=0.5)),
    ("demo, 5% fails, judge family not in the pool", lambda: demo_pool(n_items=2000, fail_share=0.05, seed=3,
                                                                       judge_family="meta")),
    ("demo, 10% fails, error 0.15, judge family not in the pool",
     lambda: demo_pool(n_items=2000, fail_share=0.1, seed=3, error=0.15, judge_family="meta")),
    ("Play Favorites, gpt-4o", lambda: play_favorites_pool("gpt-4o")),
    ("mtbench, gpt-4o", lambda: mtbench_pool("gpt-4o")),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-labels", type=int, default=1500)
    args = ap.parse_args()
    print("| pool | items | full-pool verdict | random: mean labels (wrong) | active: mean labels (wrong) | saved |")
    print("|---|---|---|---|---|---|")
    for name, make in POOLS:
        if "Play" in name or "mtbench" in name:
            if not SHARED.exists():
                continue
        pool = make()
        truth = pool_decision(pool)
        out = {}
        for order in ("random", "active"):
            out[order] = summarize([campaign(pool, order, seed=s, truth=truth, max_labels=args.max_labels)
                                    for s in range(args.runs)])
        saved = 1 - out["active"]["mean_labels"] / out["random"]["mean_labels"]
        v = pool_values(pool)
        print(f"| {name} (alpha {v['krippendorff_alpha_ordinal']:.2f}, TNR {v['tnr']:.2f}) | {pool.size} | "
              f"{'calibrated' if truth else 'not calibrated'} | {out['random']['mean_labels']:.0f} "
              f"({out['random']['wrong_rate']:.0%}) | {out['active']['mean_labels']:.0f} "
              f"({out['active']['wrong_rate']:.0%}) | {saved:.0%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
