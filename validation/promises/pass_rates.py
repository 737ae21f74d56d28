"""Coverage of the corrected pass rate that ``workbench grade`` reports (Rogan-Gladen with the golden set's
uncertainty, ``stats.corrected_pass_rate``) on real pools.

Each draw takes a golden set of n items from a pool (``pools``), and 500 other items as the new items a judge grades;
the interval should hold the pool's human pass rate (the population both are drawn from) 95% of the time. Draws
whose correction is refused (the golden set cannot tell the judge from a guesser) are counted apart: a refusal is
the report saying so, not an interval.

    python validation/promises/pass_rates.py [--draws 1000]
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
from validation.promises.intervals import NOMINAL
from validation.promises.rows import PromiseRow
from workbench import stats

NEW_ITEMS = 500


@dataclass(frozen=True)
class PassRateCoverage:
    pool: str
    size: int
    given: int
    covered: int
    refused: int

    @property
    def share(self) -> float:
        return self.covered / self.given if self.given else float("nan")

    @property
    def holds(self) -> bool:
        return self.given > 0 and self.share >= NOMINAL - 2 * math.sqrt(NOMINAL * (1 - NOMINAL) / self.given)


def default_pools() -> list[pools.Pool]:
    return [pools.play_favorites("gpt-4o", 1), pools.summeval("gpt-4o", 3), pools.summeval("llama-31", 4)]


def measure_pool(pool: pools.Pool, *, size: int, draws: int, resamples: int = 1000, seed: int = 0) -> PassRateCoverage:
    human = pool.consensus >= pool.pass_threshold
    judge = pool.judge >= pool.pass_threshold
    truth = float(human.mean())
    rng = np.random.default_rng([seed, size, len(pool)])
    given = covered = refused = 0
    for d in range(draws):
        idx = rng.permutation(len(pool))[: size + NEW_ITEMS]
        golden, new = idx[:size], idx[size:]
        r = stats.corrected_pass_rate(human[golden], judge[golden], judge[new], golden_clusters=pool.clusters[golden],
                                      new_clusters=pool.clusters[new], resamples=resamples, seed=d)
        c = r["corrected"]
        if r.get("refused") or c.get("ci_low") is None or not np.isfinite(c["ci_low"]):
            refused += 1
            continue
        given += 1
        covered += int(c["ci_low"] - 1e-12 <= truth <= c["ci_high"] + 1e-12)
    return PassRateCoverage(pool.name, size, given, covered, refused)


def table(rows: list[PassRateCoverage]) -> str:
    lines = ["| pool | golden items | coverage | intervals | refused | within 2 SE below 0.95 |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.pool} | {r.size} | {r.share:.3f} | {r.given} | {r.refused} | {'yes' if r.holds else 'NO'} |"
              for r in rows]
    return "\n".join(lines)


def promise_rows(rows: list[PassRateCoverage]) -> list[PromiseRow]:
    out = []
    for size in sorted({r.size for r in rows}):
        rs = [r for r in rows if r.size == size and r.given]
        out.append(PromiseRow(f"grade's corrected pass rate: 95% coverage with a golden set of {size} items, "
                              f"{len(rs)} pools", "at least 0.95 - 2 SE in every pool",
                              f"{min(r.share for r in rs):.3f} to {max(r.share for r in rs):.3f} "
                              f"({sum(r.refused for r in rs):,} draws refused with their reason)",
                              sum(r.given for r in rs), all(r.holds for r in rs)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200])
    args = ap.parse_args(argv)
    if not pools.available():
        print(f"{pools.DATA} not found; this script needs ../shared/data", file=sys.stderr)
        return 2
    rows = [measure_pool(p, size=s, draws=args.draws) for p in default_pools() for s in args.sizes]
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
