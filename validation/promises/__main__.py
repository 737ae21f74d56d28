"""Every rate the workbench promises, measured on ../shared/data beside its promise: the table of docs/validation.md.

    python -m validation.promises [--quick]

Each row comes from one measurement module, whose own ``main`` prints its detailed tables and whose test asserts
it (docs/validation.md names them): ``intervals`` and ``pass_rates`` (interval coverage), ``validity`` and
``shift`` (the monitoring alarms), ``validation/cascade.py`` and ``tests/selective/test_real_data_guarantee.py``
(the selective guarantee). The full run takes about two hours on 2 cores (the shift alarm's 10,000 calm replays per
traffic and the 1,000 subsamples of the intervals dominate); ``--quick`` runs a tenth of each, whose figures are
noisier and whose verdicts need not match.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from validation.promises import intervals, pass_rates, pools, shift, validity
from validation.promises.rows import PromiseRow, markdown


def selective_rows(splits: int) -> list[PromiseRow]:
    """The selective guarantee of one judge (400 splits in the docs) and of a cascade (200), on real labels."""
    from tests.selective.test_real_data_guarantee import CASES, held_out
    from validation import cascade

    out = []
    for judge, target, risk, n_cal in CASES:
        failures, _ = held_out(judge, target, risk, n_cal, splits)
        allowed = math.floor(risk * splits + 2.33 * math.sqrt(splits * risk * (1 - risk)))
        out.append(PromiseRow(f"selective guarantee, {judge} (A {target}, D {risk}, {n_cal:,} calibration items): "
                              "agreement on the kept test items below A", f"in at most D of the splits (<= {allowed} "
                              "of them: D x S + 2.33 sd)", f"{failures} of {splits}", splits, failures <= allowed))
    for case in cascade.CASES:
        r = cascade.run(case, max(splits // 2, 20), 0)
        out.append(PromiseRow(f"cascade guarantee, {case.dataset.replace('_', ' ')} {case.name} (A {case.target}, D "
                              f"{case.risk})", f"below A in <= {r.allowed} splits; never below the procedure's best "
                              "single judge", f"{r.failures} below A; {r.below_single_in_procedure} below the single "
                              "judge", r.n, r.failures <= r.allowed and r.below_single_in_procedure == 0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of every measurement")
    args = ap.parse_args(argv)
    if not (pools.available() and shift.available() and validity.available()):
        print(f"{pools.DATA} not found; this needs ../shared/data", file=sys.stderr)
        return 2
    tenth = 10 if args.quick else 1
    start = time.perf_counter()
    rows: list[PromiseRow] = []
    coverage = [c for pool in intervals.default_pools() for design in ("items", "clusters") for size in (100, 200)
                for c in intervals.measure_pool(pool, size=size, subsamples=1000 // tenth, resamples=1000,
                                                design=design, categories=design == "items")]
    rows += intervals.promise_rows(coverage)
    rows += pass_rates.promise_rows([pass_rates.measure_pool(p, size=s, draws=1000 // tenth)
                                     for p in pass_rates.default_pools() for s in (50, 100, 200)])
    rows += validity.measure(replays=200 // tenth, calm_replays=1000 // tenth, edge_runs=1000 // tenth)
    rows += shift.measure(10_000 // tenth, 51)
    rows += selective_rows(400 // tenth)
    print(markdown(rows))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0 if all(r.holds for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
