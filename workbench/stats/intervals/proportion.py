"""Intervals for proportions over small or lopsided denominators: TPR, TNR and agreement rates.

A percentile bootstrap of a proportion has no width when every drawn item
agrees: 1 fail of 1 caught, or 99 passes of 99, gives ``[1, 1]``. These
metrics get a closed-form binomial interval instead, computed on the
*effective* number of items: the count divided by the cluster design effect
(Kish 1965). Items of one task then count for less than independent items, as
they should.

**Which binomial interval.** Wilson's score interval (Wilson 1927) and the
Jeffreys interval with Brown, Cai and DasGupta's boundary modification (2001,
section 4.1.2: the exact bound at 0 or n successes, the open end at 1 or n - 1)
are both close to their level on average, but each dips well below it at some
proportions and counts, in different places: Wilson near the ends (at 99 of 100
its upper bound is 0.998, so a true 0.999 is covered only when all 100 pass:
90%; its interval for 0 of 1 stops at 0.794), Jeffreys in the middle. The
interval used is the smallest one holding both (``wilson_jeffreys``), so it
covers whenever either does. Exact coverage over every proportion in [0.3,
0.9995] (``tests/stats/test_proportion_coverage.py``): at least 0.928 for any
count of 30 or more and 0.91 below (Wilson alone: 0.84 and 0.79; the modified
Jeffreys alone 0.91 and 0.90), 0.954 on average; Clopper-Pearson never dips
below 0.95 but covers 0.96-0.98 on average, wider than a 95% interval needs.

**Clusters.** The design effect is the proportion's cluster variance over the
binomial one, the variance read off the Dirichlet-process posterior over task
clusters (``stats.intervals.posterior``; its prior atom, worth one item, keeps a
sample without the rare outcome from looking certain: the cluster bootstrap's
variance, low exactly where the estimate was high, covered exact agreement and
TPR 0.90-0.92 on golden sets of about 20 prompts). When it is estimated (some
cluster holds two or more of the denominator's items, and it is not already at
its largest, each cluster counting as one item), the interval is read at the
level whose normal quantile is Student's t with ``G - 1`` degrees of freedom
(at most 0.999): the variance behind the effective count is itself an estimate
from G clusters. A proportion of 0 or 1 has no variance to read, and each task
cluster then counts as one item. ``validation/promises/intervals.py`` measures
the coverage on real pools drawn by items and by whole clusters.

The Wilson interval and Newcombe's interval built from it are a few lines of
closed-form arithmetic, written here in the same order of operations as
statsmodels' ``proportion_confint(method="wilson")`` and
``confint_proportions_2indep(method="newcomb")``, so they give the same floats
(the tests compare them) without importing statsmodels and scipy.stats, which
take a second or more to load: a page that shows one report would wait for them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.stats._common import special_functions
from workbench.stats.intervals.methods import PROPORTION_METHOD

#: Metrics that are a share of items of some denominator, and what that denominator is.
PROPORTION_DENOMINATORS = {"exact_agreement": "n_items", "tpr": "n_pos", "tnr": "n_neg"}

#: Interval method for proportions, as named by ``statsmodels.stats.proportion.proportion_confint``
#: (``wilson`` is computed here; another name is handed to statsmodels).
METHOD = PROPORTION_METHOD


#: The expanded level of a proportion over a handful of clusters is 1 to machine precision: cap it.
MAX_LEVEL = 0.999


def design_effect(p: float, n: float, bootstrap_variance: float, n_clusters: int) -> float:
    """Variance inflation of a proportion by clustering, in [1, n / n_clusters].

    Parameters
    ----------
    p : float
        The proportion, in [0, 1].
    n : float
        Its denominator (items).
    bootstrap_variance : float
        The variance of the proportion over cluster resamples or posterior
        draws (NaN when unknown).
    n_clusters : int
        Task clusters among the denominator's items.

    Examples
    --------
    >>> design_effect(0.5, 100, 0.0025, 100)  # independent items: the binomial variance
    1.0
    >>> design_effect(1.0, 12, 0.0, 3)  # no variance to read: each cluster counts once
    4.0
    """
    upper = max(1.0, n / max(1, n_clusters))
    binomial = p * (1 - p) / n if n > 0 else float("nan")
    if not (binomial > 0) or not np.isfinite(bootstrap_variance):
        return float(upper)
    return float(np.clip(bootstrap_variance / binomial, 1.0, upper))


def cluster_level(level: float, n_clusters: int) -> float:
    """The level whose normal quantile is Student's t quantile with ``n_clusters - 1`` degrees of freedom, at most
    :data:`MAX_LEVEL`: for an interval whose variance was estimated from that many clusters.

    >>> round(cluster_level(0.95, 11), 4), round(cluster_level(0.95, 10_000), 4)
    (0.9741, 0.95)
    """
    if n_clusters < 2:
        return MAX_LEVEL
    special = special_functions()
    tail = special.ndtr(-special.stdtrit(n_clusters - 1, 1 - (1 - level) / 2))
    return float(min(max(level, 1 - 2 * tail), MAX_LEVEL))


def proportion_interval(p: float, n: float, *, level: float = 0.95, deff: float = 1.0,
                        method: str = METHOD) -> tuple[float, float]:
    """Interval of a proportion ``p`` of ``n`` items whose design effect is ``deff``.

    ``method`` is :data:`METHOD` (``wilson_jeffreys``, see the module's docstring), ``wilson``, or a name that
    ``statsmodels.stats.proportion.proportion_confint`` knows.

    Examples
    --------
    >>> low, high = proportion_interval(1.0, 1)  # one fail, caught: far from certain (the exact bound)
    >>> round(low, 3), high
    (0.025, 1.0)
    >>> low, high = proportion_interval(0.5, 100, deff=4.0)  # as wide as 25 independent items
    >>> round(high - low, 3)
    0.374
    """
    if not n > 0 or not np.isfinite(p):
        return float("nan"), float("nan")
    n_eff = n / deff
    if method == METHOD:
        low, high = (float(b) for b in proportion_intervals(p, n, deff=deff, level=level))
        return low, high
    if method == "wilson":
        low, high = wilson_interval(p * n_eff, n_eff, level=level)
    else:
        from statsmodels.stats.proportion import proportion_confint

        low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method=method)
    # the arithmetic leaves rounding noise at the bounds (e.g. 1 - 1e-16); a proportion stays in [0, 1]
    return float(np.clip(low, 0.0, p)), float(np.clip(high, p, 1.0))


def proportion_intervals(p: Any, n: Any, *, deff: Any = 1.0, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`proportion_interval` with its default method on arrays (many proportions, or many simulated futures,
    at once): the smallest interval holding Wilson's and the modified Jeffreys interval on ``n / deff`` items,
    clipped to [0, 1] and to contain ``p``; NaN where ``n`` is not positive or ``p`` not finite."""
    p, n, deff = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (p, n, deff)))
    bad = ~(n > 0) | ~np.isfinite(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(bad, 1.0, n / deff)
        q = np.where(bad, 0.5, p)
        w_low, w_high = _wilson_arrays(q * n_eff, n_eff, level)
        j_low, j_high = jeffreys_modified(q * n_eff, n_eff, level=level)
    low = np.clip(np.minimum(w_low, j_low), 0.0, q)
    high = np.clip(np.maximum(w_high, j_high), q, 1.0)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def jeffreys_modified(count: Any, nobs: Any, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The equal-tailed Jeffreys interval (the Beta(x + 1/2, n - x + 1/2) posterior's quantiles) with Brown, Cai and
    DasGupta's (2001) boundary modification: at x = 0 the upper bound is the exact ``1 - (alpha/2)**(1/n)`` (at x = n
    the lower bound ``(alpha/2)**(1/n)``), and at x <= 1 the lower bound is 0 (at x >= n - 1 the upper bound 1).
    Counts may be fractional (effective counts).

    >>> low, high = jeffreys_modified(np.array([0.0, 5.0]), np.array([10.0, 10.0]))
    >>> [round(float(b), 4) for b in (*low, *high)]
    [0.0, 0.2235, 0.3085, 0.7765]
    """
    x, n = (np.asarray(v, dtype=np.float64) for v in (count, nobs))
    tail = (1 - level) / 2
    betaincinv = special_functions().betaincinv
    with np.errstate(divide="ignore", invalid="ignore"):
        low = betaincinv(x + 0.5, n - x + 0.5, tail)
        high = betaincinv(x + 0.5, n - x + 0.5, 1 - tail)
        exact = tail ** (1 / n)
    eps = 1e-9 * np.maximum(n, 1.0)  # a count made as p * n lands a rounding error off the integer
    low = np.where(x >= n - eps, exact, np.where(x <= 1 + eps, 0.0, low))
    high = np.where(x <= eps, 1 - exact, np.where(x >= n - 1 - eps, 1.0, high))
    return low, high


def _wilson_arrays(count: np.ndarray, nobs: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    q = count / nobs
    crit = -special_functions().ndtri((1 - level) / 2.0)
    crit2 = crit**2
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2)) / denom
    return np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)


def wilson_interval(count: float, nobs: float, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval of ``count`` successes in ``nobs`` trials (both may be fractional), clipped to [0, 1].

    Wilson (1927); the same floats as ``statsmodels.stats.proportion.proportion_confint(count, nobs,
    alpha=1 - level, method="wilson")``.

    Examples
    --------
    >>> low, high = wilson_interval(81, 263)  # Newcombe (1998), Stat Med 17:857, table II, method 3
    >>> round(low, 4), round(high, 4)
    (0.2553, 0.3662)
    """

    # numpy scalars and 0-d arrays where statsmodels has them: ``**`` then rounds the same way
    count_a, nobs_a = np.asarray(count, dtype=np.float64), np.asarray(nobs, dtype=np.float64)
    q = count_a / nobs_a
    crit = -special_functions().ndtri((1 - level) / 2.0)  # scipy.stats' normal quantile, without its import
    crit2 = crit**2
    denom = 1 + crit2 / nobs_a
    center = (q + crit2 / (2 * nobs_a)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs_a + crit2 / (4.0 * nobs_a**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))


def newcombe_difference_interval(count1: float, nobs1: float, count2: float, nobs2: float, *,
                                 level: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval of p1 - p2 for two independent proportions (Newcombe 1998, method 10).

    The same floats as ``statsmodels.stats.proportion.confint_proportions_2indep(count1, nobs1, count2, nobs2,
    method="newcomb", compare="diff", alpha=1 - level)``.

    Examples
    --------
    >>> low, high = newcombe_difference_interval(56, 70, 48, 80)  # Newcombe (1998), Stat Med 17:873, example (a)
    >>> round(low, 4), round(high, 4)
    (0.0524, 0.3339)
    """
    p1, p2 = count1 / nobs1, count2 / nobs2
    low1, upp1 = wilson_interval(count1, nobs1, level=level)
    low2, upp2 = wilson_interval(count2, nobs2, level=level)
    diff = p1 - p2
    return (float(diff - np.sqrt((p1 - low1) ** 2 + (upp2 - p2) ** 2)),
            float(diff + np.sqrt((p2 - low2) ** 2 + (upp1 - p1) ** 2)))
