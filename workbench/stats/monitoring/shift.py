"""Has the traffic moved away from the golden set the judge was approved on?

Each window is compared with the approval golden set: the category mix by Pearson's chi-square test of
homogeneity on the 2 x K table (window, golden set), categories with fewer than 5 expected traces pooled into one;
without categories, the input length by the two-sample Kolmogorov-Smirnov test. Checked after every window, the
k-th window's test runs at ``alpha_k = 6 alpha / (pi**2 k**2)`` (alpha spent over an unbounded horizon; the
alpha_k sum to alpha), so by the union bound the chance of any false shift alarm over all windows of an epoch is
at most alpha, however the windows depend on each other (they share the golden set).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

MIN_EXPECTED = 5


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

    test: str  # "chi-square" | "ks"
    statistic: float
    p_value: float
    level: float
    moved: str  # the category (or "input length") that moved most
    golden_value: float  # its share in the golden set (or median length)
    window_value: float  # its share in the window (or median length)

    @property
    def shifted(self) -> bool:
        return self.p_value < self.level


def category_shift(golden: Mapping[str, int], window: Mapping[str, int], *, level: float) -> ShiftTest | None:
    """Chi-square test of homogeneity of the category counts; None when either side is empty or there is one
    category only.

    >>> t = category_shift({"a": 50, "b": 50}, {"a": 90, "b": 10}, level=0.01)
    >>> t.shifted, t.moved
    (True, 'a')
    """
    from scipy.stats import chi2_contingency

    cats = sorted(set(golden) | set(window))
    g = np.array([golden.get(c, 0) for c in cats], dtype=float)
    w = np.array([window.get(c, 0) for c in cats], dtype=float)
    if g.sum() == 0 or w.sum() == 0 or len(cats) < 2:
        return None
    share_g, share_w = g / g.sum(), w / w.sum()
    moved = int(np.argmax(np.abs(share_w - share_g)))
    # the smaller sample's row has the smaller expected counts: (column total) x (row total) / (grand total)
    small = (g + w) * min(g.sum(), w.sum()) / (g.sum() + w.sum()) < MIN_EXPECTED
    if small.any() and (~small).sum() >= 1:
        g = np.append(g[~small], g[small].sum())
        w = np.append(w[~small], w[small].sum())
        keep = (g + w) > 0
        g, w = g[keep], w[keep]
    if len(g) < 2:
        return None
    stat, p, _, _ = chi2_contingency(np.vstack([g, w]), correction=False)
    return ShiftTest("chi-square", float(stat), float(p), float(level), cats[moved], float(share_g[moved]),
                     float(share_w[moved]))


def length_shift(golden: Any, window: Any, *, level: float) -> ShiftTest | None:
    """Two-sample Kolmogorov-Smirnov test of the input lengths; None when either side is empty."""
    from scipy.stats import ks_2samp

    g, w = np.asarray(golden, dtype=float), np.asarray(window, dtype=float)
    if g.size == 0 or w.size == 0:
        return None
    res = ks_2samp(g, w)
    return ShiftTest("ks", float(res.statistic), float(res.pvalue), float(level), "input length",
                     float(np.median(g)), float(np.median(w)))
