"""Has the traffic moved away from the golden set the judge was approved on?

The category mix: the exact conditional test of homogeneity of the 2 x K table (window, golden set) given its
margins. Under no shift the window's row is a draw from the multivariate hypergeometric of the pooled category
totals, whatever the traffic's mix; Pearson's statistic orders the tables; no category needs pooling. Each window,
at its level, uses:

- the asymptotic chi-square p-value only when it is at least ``SCREEN`` (10) times the level: such a window is
  never an alarm, so the approximation there can only lower the false-alarm rate. (The exact tail was at most
  1.4x below the chi-square's on the replays' tables, far from 10x, and no window the exact test rejected was
  screened out in the power test.)
- else a bound needing no draws (:func:`mixture_bound`), with ``BOUND_SHARE`` of the level: it settles the windows
  that moved a lot, which the draws could only reject after about ``POWER / level`` of them;
- else the Monte Carlo p-value, with the rest of the level: ``p = (1 + #{T_sim >= T_obs}) / (B + 1)`` over at most
  ``B = ceil(POWER / level)`` draws, stopped once ``POWER`` draws have reached ``T_obs`` (Besag and Clifford 1991),
  that is as soon as the window can no longer reject. It is exactly valid for any B, over the draws; the draws
  are seeded from the window's own counts and level, so a report is the same on every run and a window's test
  does not depend on later windows.

Pearson's chi-square is not trusted for the decision: it was 1.6x too liberal at ``alpha_30`` with 60-trace windows
(expected counts 4 to 16) and still 1.08x with 2,100-trace windows (expected counts 29 and more, rows of unequal
size), against the exact tail (``validation/promises/shift.py``). Without categories, the input length: the
two-sample Kolmogorov-Smirnov test with its exact p-value (:func:`length_shift`).

Checked after every window, the k-th window's test runs at ``alpha_k = 6 alpha / (pi**2 k**2)`` (the alpha_k sum
to alpha over an unbounded horizon), so by the union bound the chance of any false shift alarm over all windows
of an epoch is at most alpha, however the windows depend on each other (they share the golden set).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import chdtrc

POWER = 5  # B = ceil(POWER / level): at a true p-value of level/2 the draws still reject 89% of the time
# Besag-Clifford h: stop once this many draws reach the observed statistic. With h = POWER the stop comes exactly
# when the window can no longer reject, so it saves draws without changing a single decision.
EXCEEDANCES = POWER
BOUND_SHARE = 0.05  # the share of a window's level spent on the mixture bound (the rest on the draws)
SCREEN = 10  # no draws for a window whose asymptotic p-value is at least this many times its level
_BATCH = 1 << 16  # the largest batch of tables drawn at once (memory: 8 bytes x K x this)
_TIES = 1 - 64 * np.finfo(float).eps  # a draw within rounding of the observed statistic counts as reaching it


def spent_alpha(k: int, alpha: float = 0.05) -> float:
    """The level of the k-th window's test (k = 1, 2, ...).

    >>> round(sum(spent_alpha(k) for k in range(1, 100_000)), 4)
    0.05
    """
    if k < 1:
        raise ValueError(f"windows are numbered from 1, got {k}")
    return 6 * alpha / (math.pi ** 2 * k ** 2)


@dataclass(frozen=True, slots=True)
class ShiftTest:
    """One window against the golden set: the test, its p-value and level, and what moved most."""

    test: str  # categories: "monte-carlo" | "mixture bound" | "chi-square"; lengths: "ks exact" | "ks asymptotic"
    statistic: float  # Pearson's chi-square of the table, or the KS distance
    p_value: float
    level: float
    moved: str  # the category (or "input length") that moved most
    golden_value: float  # its share in the golden set (or median length)
    window_value: float  # its share in the window (or median length)
    draws: int = 0  # Monte Carlo tables drawn

    @property
    def shifted(self) -> bool:
        return self.p_value < self.level

    @property
    def on_lengths(self) -> bool:
        return self.test.startswith("ks")


@dataclass(frozen=True, slots=True)
class MonteCarloP:
    """A Monte Carlo p-value of the conditional test and the tables drawn for it."""

    p_value: float
    draws: int


def pearson(window_rows: np.ndarray, golden_row: np.ndarray) -> np.ndarray:
    """Pearson's chi-square of the 2 x K tables (window, golden): ``window_rows`` (W, K) against one golden row
    (K,); columns empty on both sides count for nothing.

    With both margins fixed it is ``N^2 / (n m) (sum_j x_j^2 / c_j - n^2 / N)`` (c the column totals), so only
    ``sum x_j^2 / c_j`` varies between tables of the same margins (``monte_carlo_p`` compares that).
    """
    w = np.asarray(window_rows, dtype=float)
    totals = w + np.asarray(golden_row, dtype=float)
    n, big_n = w.sum(axis=1), totals.sum(axis=1)
    varying = (w ** 2 / np.where(totals > 0, totals, 1.0)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return big_n ** 2 / (n * (big_n - n)) * (varying - n ** 2 / big_n)


def mixture_bound(row: Sequence[int], totals: Sequence[int]) -> float:
    """A p-value for "``row`` is a random draw without replacement from an urn of ``totals``", needing no draws.

    ``M = integral of prod_j (q_j / p_j)^{x_j}`` over q ~ Dirichlet(1/2, ..., 1/2), with ``p = totals / N``, has
    expectation 1 under sampling with replacement, and at most 1 without (Hoeffding 1963, Theorem 4:
    ``exp(sum of the draws' log(q/p))`` is convex in their sum), so ``P(1 / M <= u) <= u`` by Markov. It is far
    from sharp (the mixture costs about ``(K - 1)/2 log n``), so it only settles windows that moved a lot.

    >>> mixture_bound([5, 5], [50, 50])
    1.0
    """
    x, c = [int(v) for v in row], [int(v) for v in totals]
    k, n, big_n = len(c), sum(x), sum(c)
    lg = math.lgamma
    log_m = (sum(lg(xj + 0.5) - lg(0.5) - xj * math.log(cj / big_n) for xj, cj in zip(x, c) if xj)
             - lg(n + k / 2) + lg(k / 2))
    return math.exp(-log_m) if log_m > 0 else 1.0


def monte_carlo_p(row: Sequence[int], totals: Sequence[int], *, level: float, rng: np.random.Generator,
                  power: float = POWER, exceedances: int = EXCEEDANCES) -> MonteCarloP:
    """The conditional test's p-value by drawing window rows from the multivariate hypergeometric of ``totals``.

    At most ``B = ceil(power / level)`` draws (so ``p = (1 + #) / (B + 1)`` can fall below ``level``); sampling
    stops at the ``exceedances``-th draw whose statistic reaches the observed one, with ``p = h / draws``
    (Besag and Clifford 1991). Both are exactly valid: ``P(p <= u) <= u`` under no shift.
    """
    c = np.asarray(totals, dtype=np.int64)
    x = np.asarray(row, dtype=np.int64)
    n = int(x.sum())
    observed = float((x ** 2 / c).sum()) * _TIES  # the statistic's only varying part (see pearson)
    limit = math.ceil(power / level)
    drawn = hits = 0
    batch = 4 * exceedances
    while drawn < limit:
        size = min(batch, limit - drawn)
        sims = rng.multivariate_hypergeometric(c, n, size=size)
        reach = np.cumsum((sims ** 2 / c).sum(axis=1) >= observed)
        if hits + reach[-1] >= exceedances:
            stop = int(np.argmax(reach >= exceedances - hits)) + 1
            return MonteCarloP(exceedances / (drawn + stop), drawn + stop)
        hits += int(reach[-1])
        drawn += size
        batch = min(2 * batch, _BATCH)
    return MonteCarloP((hits + 1) / (limit + 1), limit)


def table_seed(*parts: Any) -> int:
    """A seed made from the data itself, so that a window's test is the same whenever the report is run."""
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:16], "little")


def category_shifts(golden: Mapping[str, int], windows: Sequence[Mapping[str, int]],
                    levels: Sequence[float]) -> list[ShiftTest | None]:
    """The exact conditional test of homogeneity of each window's category counts against the golden set's, at
    its level (see the module); None for a window when either side is empty or one category only is seen.

    Each window's test reads only its own counts, the golden set's and its level (the draws are seeded from
    them), so it is the same whatever other windows are passed with it.

    >>> t = category_shifts({"a": 50, "b": 50}, [{"a": 90, "b": 10}, {"a": 48, "b": 52}], [0.01, 0.01])
    >>> [(x.shifted, x.moved, x.test) for x in t]
    [(True, 'a', 'mixture bound'), (False, 'a', 'chi-square')]
    """
    if len(levels) != len(windows):
        raise ValueError(f"{len(windows)} windows but {len(levels)} levels")
    cats = sorted(set(golden).union(*windows))
    g = np.array([golden.get(c, 0) for c in cats], dtype=np.int64)
    w = np.array([[x.get(c, 0) for c in cats] for x in windows], dtype=np.int64).reshape(len(windows), len(cats))
    if (g < 0).any() or (w < 0).any():
        raise ValueError("category counts cannot be negative")
    seen = (w + g) > 0
    k, n_w, n_g = seen.sum(axis=1), w.sum(axis=1), int(g.sum())
    stat = pearson(w, g)
    with np.errstate(divide="ignore", invalid="ignore"):
        asymptotic = chdtrc(k - 1, stat)
        moves = np.where(seen, np.abs(w / n_w[:, None] - g / max(n_g, 1)), -1.0)
    moved = np.argmax(moves, axis=1)
    share_w = (w[np.arange(len(windows)), moved] / np.maximum(n_w, 1)).tolist()
    share_g, moved = (g / max(n_g, 1)).tolist(), moved.tolist()
    # plain lists from here: a window far from its level then costs a few microseconds
    stat_l, asym_l, n_w_l = stat.tolist(), asymptotic.tolist(), n_w.tolist()
    out: list[ShiftTest | None] = []
    for i, level in enumerate(levels):
        if k[i] < 2 or n_w_l[i] == 0 or n_g == 0:
            out.append(None)
            continue
        j = moved[i]
        head = (stat_l[i], float(level), cats[j], share_g[j], share_w[i])
        if asym_l[i] >= SCREEN * level:
            # far from its level: neither bounded nor drawn for, and never an alarm (this only lowers false alarms)
            out.append(ShiftTest("chi-square", head[0], asym_l[i], *head[1:]))
        else:
            keep = np.flatnonzero(seen[i])
            out.append(_near_level([cats[c] for c in keep], g[keep].tolist(), w[i, keep].tolist(), head))
    return out


def _near_level(cats: list[str], g: list[int], w: list[int], head: tuple) -> ShiftTest:
    """The window's test when its asymptotic p-value is within ``SCREEN`` times its level: the mixture bound,
    then (unless the bound already rejects) the Monte Carlo p-value, each at its share of the level."""
    level = head[1]
    totals = [a + b for a, b in zip(g, w)]
    # either row is a draw without replacement from the pooled urn; the smaller one makes the sharper bound
    bound = mixture_bound(w if sum(w) <= sum(g) else g, totals) / BOUND_SHARE
    if bound < level:
        return ShiftTest("mixture bound", head[0], min(1.0, bound), *head[1:])
    rng = np.random.Generator(np.random.PCG64(table_seed(cats, g, w, float(level))))
    mc = monte_carlo_p(w, totals, level=(1 - BOUND_SHARE) * level, rng=rng)
    return ShiftTest("monte-carlo", head[0], min(1.0, bound, mc.p_value / (1 - BOUND_SHARE)), *head[1:], mc.draws)


def category_shift(golden: Mapping[str, int], window: Mapping[str, int], *, level: float) -> ShiftTest | None:
    """:func:`category_shifts` for one window.

    >>> t = category_shift({"a": 50, "b": 50}, {"a": 90, "b": 10}, level=0.01)
    >>> t.shifted, t.moved, t.test
    (True, 'a', 'mixture bound')
    """
    return category_shifts(golden, [window], [level])[0]


def length_shift(golden: Any, window: Any, *, level: float) -> ShiftTest | None:
    """Two-sample Kolmogorov-Smirnov test of the input lengths; None when either side is empty.

    SciPy's ``ks_2samp`` is asked for the exact p-value (its default switches to Smirnov's asymptotic formula
    above 10,000 values a side); it falls back to the asymptotic one only where the exact sum cannot be done,
    and that is within 2.2% of the exact one at levels down to 2.3e-7 on the sizes measured. The exact value
    assumes no ties; with ties the distance can only be smaller than with the ties broken, so it stays valid
    (conservative).
    """
    from scipy.stats import ks_2samp

    g, w = np.asarray(golden, dtype=float), np.asarray(window, dtype=float)
    if g.size == 0 or w.size == 0:
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        res = ks_2samp(g, w, method="exact")
    fell_back = any("asymp" in str(c.message) for c in caught)
    return ShiftTest("ks asymptotic" if fell_back else "ks exact", float(res.statistic), float(res.pvalue),
                     float(level), "input length", float(np.median(g)), float(np.median(w)))
