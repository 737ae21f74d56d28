"""Labels to a verdict in random and active order, on synthetic pools and on ../shared/data (README table).

Active order either from the first label, or after the first 50 labels in random order (the gate's minimum
evidence; what a lead does who switches the queue once some labels are in), re-planning whenever the set of
undecided checks changes. Two references: the same switch with every design computed from the pool's true
labels (Neyman allocation over the same strata as if every label were known, which no queue can know), and the
most any order can save when the gate takes no decision before its 50 items (``1 - 50 / random``, a bound).

    python validation/active_queue_simulation.py [--runs 20] [--first-seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.planning.pools import SHARED, demo_pool, mtbench_pool, play_favorites_pool  # noqa: E402
from workbench.stats.label_simulation import GateRule, campaign, pool_decision, pool_values, summarize  # noqa: E402

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
    ap.add_argument("--first-seed", type=int, default=0, help="campaign seeds start here (run-to-run spread)")
    ap.add_argument("--step", type=int, default=10, help="items between two looks at the gate after the first 50")
    args = ap.parse_args()
    rule = GateRule()
    print("| pool | items | full-pool verdict | random: items (wrong) | active from the start (wrong) | saved "
          "| random 50, then active (wrong) | saved | random 50, then true-label allocation (wrong) | saved "
          f"| most any order saves (stop at {rule.min_items}) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, make in POOLS:
        if ("Play" in name or "mtbench" in name) and not SHARED.exists():
            continue
        pool = make()
        truth = pool_decision(pool)
        out = {}
        seeds = range(args.first_seed, args.first_seed + args.runs)
        for key, order, warmup, oracle in (("random", "random", False, False), ("active", "active", False, False),
                                           ("warmup", "active", True, False), ("oracle", "active", True, True)):
            out[key] = summarize([campaign(pool, order, seed=s, truth=truth, max_labels=args.max_labels,
                                           warmup=warmup, oracle=oracle, rule=rule,
                                           step=args.step) for s in seeds])
        v = pool_values(pool)
        cells = [f"{out['random']['mean_labels']:.0f} ({out['random']['wrong_rate']:.0%})"]
        for key in ("active", "warmup", "oracle"):
            saved = 1 - out[key]["mean_labels"] / out["random"]["mean_labels"]
            cells += [f"{out[key]['mean_labels']:.0f} ({out[key]['wrong_rate']:.0%})", f"{saved:.0%}"]
        cells.append(f"{1 - rule.min_items / out['random']['mean_labels']:.0%}")
        print(f"| {name} (alpha {v['krippendorff_alpha_ordinal']:.2f}, TNR {v['tnr']:.2f}) | {pool.size} | "
              f"{'calibrated' if truth else 'not calibrated'} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
