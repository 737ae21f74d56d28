"""Coverage of the report's rate intervals (exact agreement, TPR, TNR, per-category exact agreement) on real pools.

Draw subsamples of n items from a pool (../shared/data, as ``pools`` reads it), compute the report's intervals on
each with the report's own function (``stats.agreement_with_intervals``, ``stats.per_category_agreement``), and count
how often each contains the pool's value: a 95% interval should contain it in 95% of subsamples. Two designs: items
drawn at random, and whole task clusters drawn until n items (several items of one task, as golden sets have),
which is where the design effect matters.

    python validation/promises/intervals.py [--subsamples 1000] [--sizes 50 100 200] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from validation.promises import pools
from validation.promises.rows import PromiseRow
from workbench import stats

NOMINAL = 0.95
RATES = ("exact_agreement", "tpr", "tnr")
CATEGORY = "per-category exact agreement"


@dataclass(frozen=True)
class Coverage:
    """How often one rate's interval held its pool value over the subsamples where it was defined."""

    pool: str
    design: str
    size: int
    rate: str
    defined: int
    covered: int
    mean_denominator: float  # the rate's mean n over those subsamples (consensus fails for TNR)

    @property
    def share(self) -> float:
        return self.covered / self.defined if self.defined else float("nan")

    @property
    def standard_error(self) -> float:
        """The binomial standard error of a coverage of exactly the nominal level over these intervals."""
        return math.sqrt(NOMINAL * (1 - NOMINAL) / self.defined) if self.defined else float("nan")

    @property
    def holds(self) -> bool:
        """Not below the nominal level by more than two standard errors (an interval of a proportion over a
        handful of items cannot cover exactly 95%: discrete counts make it cover more, never less)."""
        return self.defined > 0 and self.share >= NOMINAL - 2 * self.standard_error


def default_pools() -> list[pools.Pool]:
    """Real judges at two fail shares on each data set, and the issue's pool: 2.5% fails, TNR 0.794."""
    pf = [pools.play_favorites(j, t) for j in ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2:0") for t in (0, 1)]
    se = [pools.summeval(j, t) for j in ("gpt-4o", "llama-31") for t in (3, 4)]
    issue = [pools.planted(pools.play_favorites("gpt-4o", 1), fail_share=0.025, tnr=0.794, seed=1),
             pools.planted(pools.summeval("gpt-4o", 3), fail_share=0.025, tnr=0.794, seed=1)]
    return pf + se + issue


def draw(pool: pools.Pool, size: int, rng: np.random.Generator, design: str) -> np.ndarray:
    """Indices of one subsample: ``size`` random items, or whole random clusters until ``size`` items."""
    if design == "items":
        return rng.choice(len(pool), size=size, replace=False)
    order = rng.permutation(np.unique(pool.clusters))
    taken, out = 0, []
    members = {c: np.flatnonzero(pool.clusters == c) for c in order[: size]}  # enough clusters for any size
    for c in order:
        idx = members.get(c)
        if idx is None:
            idx = np.flatnonzero(pool.clusters == c)
        out.append(idx[: size - taken])
        taken += out[-1].size
        if taken >= size:
            break
    return np.concatenate(out)


def measure_pool(pool: pools.Pool, *, size: int, subsamples: int, resamples: int, seed: int = 0,
                 design: str = "items", categories: bool = True) -> list[Coverage]:
    truth = pool.rates()
    cat_truth = {c: float(np.mean(pool.consensus[pool.categories == c] == pool.judge[pool.categories == c]))
                 for c in np.unique(pool.categories)}
    rng = np.random.default_rng([seed, size, len(pool)])
    counts = {r: [0, 0, 0] for r in (*RATES, CATEGORY)}  # defined, covered, sum of denominators
    for s in range(subsamples):
        idx = draw(pool, size, rng, design)
        c, j, cl = pool.consensus[idx], pool.judge[idx], pool.clusters[idx]
        r = stats.agreement_with_intervals(c, j, cl, scale=pool.scale, pass_threshold=pool.pass_threshold,
                                           resamples=resamples, seed=s)
        for name in RATES:
            m = r["metrics"][name]
            if m["n"] and np.isfinite(m["ci_low"]):
                counts[name][0] += 1
                counts[name][1] += int(m["ci_low"] - 1e-12 <= truth[name] <= m["ci_high"] + 1e-12)
                counts[name][2] += m["n"]
        if not categories:
            continue
        cats = stats.per_category_agreement(c, j, pool.categories[idx], cl, scale=pool.scale,
                                            pass_threshold=pool.pass_threshold, resamples=resamples, seed=s)
        for cat, entry in cats.items():
            m = entry["exact_agreement"]
            if m.get("ci_low") is not None and np.isfinite(m["ci_low"]):
                counts[CATEGORY][0] += 1
                counts[CATEGORY][1] += int(m["ci_low"] - 1e-12 <= cat_truth[cat] <= m["ci_high"] + 1e-12)
                counts[CATEGORY][2] += int(np.sum(pool.categories[idx] == cat))
    return [Coverage(pool.name, design, size, name, d, k, total / d if d else float("nan"))
            for name, (d, k, total) in counts.items() if name != CATEGORY or categories]


def table(rows: list[Coverage]) -> str:
    lines = ["| pool | design | n | rate | coverage | intervals | mean denominator | within 2 SE below 0.95 |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.pool} | {r.design} | {r.size} | {r.rate} | {r.share:.3f} | {r.defined} | "
                     f"{r.mean_denominator:.1f} | {'yes' if r.holds else 'NO'} |")
    return "\n".join(lines)


def summary(rows: list[Coverage]) -> str:
    """Per rate, design and n: the lowest and highest coverage over the pools, the intervals behind them, and
    whether every pool's holds."""
    groups: dict[tuple[str, str, int], list[Coverage]] = {}
    for r in rows:
        if r.defined:
            groups.setdefault((r.rate, r.design, r.size), []).append(r)
    lines = [("| rate | design | n | coverage, lowest to highest over the pools | pools | intervals | mean "
              "denominator | every pool within 2 SE below 0.95 |"), "|---|---|---|---|---|---|---|---|"]
    order = {name: i for i, name in enumerate((*RATES, CATEGORY))}
    for (rate, design, size), rs in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2])):
        low, high = min(r.share for r in rs), max(r.share for r in rs)
        mean_n = sum(r.mean_denominator for r in rs) / len(rs)
        lines.append(f"| {rate} | {design} | {size} | {low:.3f} to {high:.3f} | {len(rs)} | "
                     f"{sum(r.defined for r in rs):,} | {mean_n:.1f} | {'yes' if all(r.holds for r in rs) else 'NO'} |")
    return "\n".join(lines)


def promise_rows(rows: list[Coverage]) -> list[PromiseRow]:
    """Per rate and n >= 100: the lowest coverage over the pools and designs, against the 95% promise."""
    out = []
    for rate in (*RATES, CATEGORY):
        for size in sorted({r.size for r in rows if r.size >= 100}):
            rs = [r for r in rows if r.rate == rate and r.size == size and r.defined]
            if not rs:
                continue
            worst = min(rs, key=lambda r: r.share - (NOMINAL - 2 * r.standard_error))
            out.append(PromiseRow(f"interval of {rate.replace('_', ' ')}: 95% coverage at {size} items, "
                                  f"{len(rs)} pools x designs", "at least 0.95 - 2 SE in every pool and design",
                                  f"{min(r.share for r in rs):.3f} to {max(r.share for r in rs):.3f} (closest to its "
                                  f"limit: {worst.share:.3f} in {worst.pool}, {worst.design})",
                                  sum(r.defined for r in rs), all(r.holds for r in rs)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subsamples", type=int, default=1000)
    ap.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--designs", nargs="*", default=["items", "clusters"])
    args = ap.parse_args(argv)
    if not pools.available():
        print(f"{pools.DATA} not found; this script needs ../shared/data", file=sys.stderr)
        return 2
    rows = []
    for pool in default_pools():
        for design in args.designs:
            for size in args.sizes:
                # per category only where items are drawn at random: a category of whole prompts is a handful
                # of clusters, and its interval is as wide as that (0.99 coverage in a first run)
                rows += measure_pool(pool, size=size, subsamples=args.subsamples, resamples=args.resamples,
                                     design=design, categories=design == "items")
                print(table(rows[-4:]).splitlines()[-4:], file=sys.stderr, flush=True)
    print(summary(rows) + "\n\n" + table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
