"""The shift alarm's promises, measured on real data: false alarms over calm replays, detection of a planted shift,
and the two approximations the alarm decides whether to trust (Pearson's chi-square tail, Smirnov's KS tail).

The data: Play Favorites' logical-correctness ratings (../shared/data/play_favorites), one row per answer (the
gpt-4o judge's rows: 5,305 answers), the answer's source dataset as its category (six of them, 7% to 27% of the
rows). A *calm replay* draws its own approval golden set of 400 rows at random and streams the other rows in a
random order, ``per_day`` a day (cycling when they run out): no shift, since golden set and stream are random
parts of the same rows. The replay goes window by window through the function the report calls
(``stats.monitoring.shift.category_shifts`` at ``spent_alpha(k)``, as ``features.monitoring.report.windows_report``)
and records the first window that alarmed. A 90-day replay's first 30 days are its 30-day replay, so one set of
replays measures both horizons. The promise: over all windows of an epoch, P(any false shift alarm) <= 5%; it is
held to with 95% confidence when the one-sided 95% Clopper-Pearson upper bound of the share of replays that
alarmed is <= 5%.

A *shifted replay* does the same, except that from window ``shift_day + 1`` on every trace comes from one source
dataset (mtbench, 9% of the rows): the first shifted window should alarm (an alarm before it is a false alarm,
which the calm replays count).

``python -m validation.promises.shift [--replays N] [--seed S]`` prints the tables.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from validation.promises.rows import PromiseRow, markdown
from workbench.features.monitoring.report import ALPHA
from workbench.stats.monitoring.shift import category_shifts, spent_alpha
from workbench.stats.selective.fixed_sequence import clopper_pearson_upper

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "play_favorites" / "Logical_correctness.csv"
GOLDEN = 400  # rows in each replay's approval golden set, as the monitoring tests' approval
HORIZONS = (30, 90)  # days a replay runs; the longer one's first days are the shorter one
RATES = (60, 300)  # traces a day: the user's traffic, and the monitoring replays' own
SHIFTED_CATEGORY = "mtbench"


def available() -> bool:
    return DATA.exists()



@dataclass(frozen=True)
class Rows:
    """The answers' categories: ``codes[i]`` indexes ``names``."""

    codes: np.ndarray
    names: tuple[str, ...]


@lru_cache(maxsize=1)
def load() -> Rows:
    import pandas as pd

    d = pd.read_csv(DATA, usecols=["judge", "dataset"])
    names, codes = np.unique(d.loc[d["judge"] == "gpt-4o", "dataset"].astype(str).to_numpy(), return_inverse=True)
    return Rows(codes.astype(np.int64), tuple(str(n) for n in names))


def _counts(rows: Rows, idx: np.ndarray) -> dict[str, int]:
    return dict(zip(rows.names, np.bincount(rows.codes[idx], minlength=len(rows.names)).tolist()))


def _windows(rows: Rows, days: np.ndarray) -> list[dict[str, int]]:
    """Category counts of each window, from ``days`` (windows x traces) of row indices."""
    k = len(rows.names)
    flat = (np.arange(len(days))[:, None] * k + rows.codes[days]).ravel()
    counts = np.bincount(flat, minlength=len(days) * k).reshape(len(days), k).tolist()
    return [dict(zip(rows.names, c)) for c in counts]


def _cycle(source: np.ndarray, start: int, days: int, per_day: int) -> np.ndarray:
    """``days`` x ``per_day`` rows of ``source`` in order from position ``start``, cycling when it runs out."""
    return source[(start + np.arange(days * per_day)).reshape(days, per_day) % len(source)]


def alarms(golden: dict[str, int], windows: list[dict[str, int]]) -> list[bool]:
    """Whether each window's shift test alarms, window k (from 1) at ``spent_alpha(k)``, as the report tests it."""
    tests = category_shifts(golden, windows, [spent_alpha(k, ALPHA) for k in range(1, len(windows) + 1)])
    return [t is not None and t.shifted for t in tests]


def calm_replay(rows: Rows, rng: np.random.Generator, *, days: int, per_day: int) -> int | None:
    """The first alarmed window (from 1) of a replay without shift (its own random golden set; see the module),
    None when none alarmed."""
    order = rng.permutation(len(rows.codes))
    raised = alarms(_counts(rows, order[:GOLDEN]), _windows(rows, _cycle(order[GOLDEN:], 0, days, per_day)))
    return next((k for k, a in enumerate(raised, 1) if a), None)


def shifted_replay(rows: Rows, rng: np.random.Generator, *, days: int, per_day: int, shift_day: int) -> list[bool]:
    """Each window's alarm in a replay whose traffic is all ``SHIFTED_CATEGORY`` from window ``shift_day + 1``."""
    order = rng.permutation(len(rows.codes))
    stream = order[GOLDEN:]
    only = stream[rows.codes[stream] == rows.names.index(SHIFTED_CATEGORY)]
    days_idx = np.vstack([_cycle(stream, 0, shift_day, per_day), _cycle(only, 0, days - shift_day, per_day)])
    return alarms(_counts(rows, order[:GOLDEN]), _windows(rows, days_idx))


@dataclass(frozen=True)
class CalmRates:
    """Calm replays at one traffic: how many alarmed within each horizon."""

    per_day: int
    replays: int
    alarmed: dict[int, int]  # horizon (days) -> replays with an alarm within it

    def upper(self, days: int) -> float:
        return clopper_pearson_upper(self.alarmed[days], self.replays, 0.05)


def calm_rates(per_day: int, replays: int, seed: int) -> CalmRates:
    rows = load()
    first = [calm_replay(rows, np.random.default_rng([seed, per_day, r]), days=max(HORIZONS), per_day=per_day)
             for r in range(replays)]
    return CalmRates(per_day, replays, {h: sum(1 for k in first if k is not None and k <= h) for h in HORIZONS})


def calm_rows(rates: CalmRates) -> list[PromiseRow]:
    return [PromiseRow(f"shift: false alarms over {h} days, {rates.per_day} traces a day, no shift",
                       f"<= {ALPHA:.0%} (95% upper bound)",
                       f"{rates.alarmed[h] / rates.replays:.2%} ({rates.alarmed[h]:,} of {rates.replays:,}); "
                       f"upper bound {rates.upper(h):.2%}", rates.replays, rates.upper(h) <= ALPHA)
            for h in HORIZONS]


def detection_rows(replays: int, seed: int) -> list[PromiseRow]:
    """All traffic from one source dataset from day 8 of 30, and from day 81 of 90: the first shifted window
    alarms in every replay. (A replay may also have alarmed before the shift: a false alarm, which the calm
    replays count; the row says how many did.)"""
    rows, out = load(), []
    for per_day in RATES:
        for days, shift_day in ((30, 7), (90, 80)):
            raised = [shifted_replay(rows, np.random.default_rng([seed, per_day, shift_day, r]), days=days,
                                     per_day=per_day, shift_day=shift_day) for r in range(replays)]
            on_time = sum(a[shift_day] for a in raised)
            early = sum(any(a[:shift_day]) for a in raised)
            out.append(PromiseRow(f"shift: all traffic from {SHIFTED_CATEGORY} (9% before) from day {shift_day + 1} "
                                  f"of {days}, {per_day} a day", "raised in the first shifted window",
                                  f"{on_time} of {replays} ({early} of them alarmed falsely before the shift)", replays,
                                  on_time == replays))
    return out


def measure(replays: int, seed: int) -> list[PromiseRow]:
    """The promise table: calm replays at each traffic and horizon, then the planted shifts (50 replays each)."""
    out: list[PromiseRow] = []
    for per_day in RATES:
        out += calm_rows(calm_rates(per_day, replays, seed))
    return out + detection_rows(50, seed)


# -- Pearson's chi-square against the exact conditional tail ---------------------------------------------------

def _half(totals: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every count vector over these columns with sum <= n, as (sum, sum x^2 / c, log prod C(c, x)) sorted by sum
    and then statistic; built column by column, each vector extended by every count that keeps the sum <= n."""
    from scipy.special import gammaln

    s, stat, log_w = np.zeros(1, np.int64), np.zeros(1), np.zeros(1)
    for c in (int(c) for c in totals):
        counts = np.minimum(c, n - s) + 1
        parent = np.repeat(np.arange(len(s)), counts)
        x = np.arange(len(parent)) - np.repeat(np.cumsum(counts) - counts, counts)
        log_comb = gammaln(c + 1) - gammaln(np.arange(c + 1) + 1) - gammaln(c - np.arange(c + 1) + 1)
        s, stat, log_w = s[parent] + x, stat[parent] + x * x / c, log_w[parent] + log_comb[x]
    order = np.lexsort((stat, s))
    return s[order], stat[order], log_w[order]


def exact_tail(totals, n: int, threshold: float) -> float:
    """P(sum_j x_j^2 / c_j >= threshold) when the row x of size n is drawn without replacement from an urn of
    ``totals`` (the multivariate hypergeometric), summed exactly by meeting in the middle: the columns are split
    in two halves, each half's count vectors enumerated, and for each split n = s + (n - s) the halves' pairs
    above the threshold added up by sorting. Exact up to floating-point summation; for K <= 6 and n <= ~400."""
    from scipy.special import gammaln

    totals = np.asarray(totals, dtype=np.int64)
    half = len(totals) // 2
    sa, ta, la = _half(totals[:half], n)
    sb, tb, lb = _half(totals[half:], n)
    big_n = int(totals.sum())
    log_all = float(gammaln(big_n + 1) - gammaln(n + 1) - gammaln(big_n - n + 1))
    starts_a, starts_b = np.searchsorted(sa, np.arange(n + 2)), np.searchsorted(sb, np.arange(n + 2))
    cut = threshold * (1 - 64 * np.finfo(float).eps)  # ties within rounding count as reaching it
    total = 0.0
    for s in range(n + 1):
        a0, a1 = starts_a[s], starts_a[s + 1]
        b0, b1 = starts_b[n - s], starts_b[n - s + 1]
        if a0 == a1 or b0 == b1:
            continue
        wb = np.exp(lb[b0:b1] - log_all / 2)
        tail_b = np.append(np.cumsum(wb[::-1])[::-1], 0.0)
        idx = np.searchsorted(tb[b0:b1], cut - ta[a0:a1], side="left")
        total += float((np.exp(la[a0:a1] - log_all / 2) * tail_b[idx]).sum())
    return total


@dataclass(frozen=True)
class TailRatio:
    """Exact P(X^2 >= the chi-square critical value at ``level``) / ``level`` for one table's margins."""

    window: int
    golden: int
    min_expected: float
    level: float
    ratio: float  # > 1: the asymptotic p-value is too small there (too many alarms)


def chi_square_ratio(golden: np.ndarray, window: np.ndarray, level: float) -> TailRatio:
    from scipy.stats import chi2

    totals = np.asarray(golden) + np.asarray(window)
    big_n, n_w, n_g = int(totals.sum()), int(np.sum(window)), int(np.sum(golden))
    n = min(n_w, n_g)  # the table's law is the same drawn from either row; the smaller enumerates faster
    q = float(chi2.isf(level, len(totals) - 1))
    # X^2 = N^2 / (n m) (S - n^2 / N), S = sum x_j^2 / c_j over the row of size n
    threshold = n * n / big_n + q * n_w * n_g / big_n ** 2
    return TailRatio(n_w, n_g, float((totals * n / big_n).min()), level, exact_tail(totals, n, threshold) / level)


def chi_square_ratios(windows=(60, 300), at=(1, 7, 30, 90, 365)) -> list[TailRatio]:
    """On the monitoring tests' approval golden set (400 rows) against windows holding each category at its share
    of all rows: the exact tail at the chi-square critical value of the level of each window number in ``at``, over
    the level."""
    rows = load()
    golden = np.bincount(rows.codes[np.random.default_rng(2026).permutation(len(rows.codes))[:GOLDEN]],
                         minlength=len(rows.names))
    shares = np.bincount(rows.codes, minlength=len(rows.names)) / len(rows.codes)
    out = []
    for n in windows:
        window = np.floor(shares * n).astype(np.int64)
        window[np.argsort(shares * n - window)[::-1][: n - window.sum()]] += 1  # largest remainders
        out += [chi_square_ratio(golden, window, spent_alpha(k, ALPHA)) for k in at]
    return out


# -- Smirnov's asymptotic KS tail against the exact one ---------------------------------------------------------

@dataclass(frozen=True)
class KsRatio:
    n_golden: int
    n_window: int
    p_exact: float
    p_asymptotic: float

    @property
    def ratio(self) -> float:
        return self.p_exact / self.p_asymptotic


def ks_ratios(sizes=((400, 60), (400, 300), (400, 2100), (400, 9000), (2000, 3000)),
              floor: float = 2e-7) -> list[KsRatio]:
    """SciPy's exact and asymptotic two-sided p-values of the same samples (a grid and a copy of it shifted by
    increasing amounts), for every p-value between ``floor`` and 1e-2."""
    from scipy.stats import ks_2samp

    out = []
    for n_g, n_w in sizes:
        golden = (np.arange(n_g) + 0.5) / n_g
        for shift in np.linspace(1.5, 3.1, 81):
            window = (np.arange(n_w) + 0.5) / n_w + shift * math.sqrt(1 / n_g + 1 / n_w)
            exact = ks_2samp(golden, window, method="exact").pvalue
            if floor <= exact <= 1e-2:
                out.append(KsRatio(n_g, n_w, float(exact), float(ks_2samp(golden, window, method="asymp").pvalue)))
    return out




def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replays", type=int, default=10_000, help="calm replays at each traffic (default 10,000)")
    ap.add_argument("--seed", type=int, default=51)
    args = ap.parse_args(argv)
    if not available():
        print(f"real data not present at {DATA}")
        return 1
    t = time.perf_counter()
    rows = measure(args.replays, args.seed)
    print(markdown(rows))
    print(f"\n({time.perf_counter() - t:.0f} s)\n\nexact / chi-square tail at the window's level:\n")
    print("| window | golden | min expected | level | exact / nominal |\n|---|---|---|---|---|")
    for r in chi_square_ratios() + chi_square_ratios(windows=(2100,), at=(30, 90)):  # the last: ~70 s
        print(f"| {r.window} | {r.golden} | {r.min_expected:.1f} | {r.level:.2g} | {r.ratio:.3f} |")
    ks = ks_ratios()
    print(f"\nKS exact / asymptotic p over {len(ks)} p-values in [2e-7, 1e-2]: "
          f"{min(r.ratio for r in ks):.3f} to {max(r.ratio for r in ks):.3f}")
    return 0 if all(r.holds for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
