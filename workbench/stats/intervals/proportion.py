"""Intervals for proportions over small or lopsided denominators: TPR, TNR and agreement rates.

A percentile bootstrap of a proportion has no width when every drawn item
agrees: 1 fail of 1 caught, or 99 passes of 99, gives ``[1, 1]``. These
metrics get a closed-form binomial interval instead (Wilson 1927; Brown, Cai
and DasGupta 2001 compare the choices), computed on the *effective* number of
items: the count divided by the cluster design effect (Kish 1965), which the
cluster bootstrap estimates as its variance over the binomial one. Items of
one task then count for less than independent items, as they should.

When the bootstrap cannot estimate the design effect (a proportion of 0 or 1
has no bootstrap variance), the conservative bound is used: each task cluster
counts as one item. ``validation/interval_coverage.py`` measures the coverage
of the choices on real data; the README's coverage table comes from it.

The Wilson interval and Newcombe's interval built from it are a few lines of
closed-form arithmetic, written here in the same order of operations as
statsmodels' ``proportion_confint(method="wilson")`` and
``confint_proportions_2indep(method="newcomb")``, so they give the same floats
(the tests compare them) without importing statsmodels and scipy.stats, which
take a second or more to load: a page that shows one report would wait for them.
"""

from __future__ import annotations

import numpy as np

from workbench.stats._common import special_functions
from workbench.stats.intervals.methods import PROPORTION_METHOD

#: Metrics that are a share of items of some denominator, and what that denominator is.
PROPORTION_DENOMINATORS = {"exact_agreement": "n_items", "tpr": "n_pos", "tnr": "n_neg"}

#: Interval method for proportions, as named by ``statsmodels.stats.proportion.proportion_confint``
#: (``wilson`` is computed here; another name is handed to statsmodels).
METHOD = PROPORTION_METHOD


def design_effect(p: float, n: float, bootstrap_variance: float, n_clusters: int) -> float:
    """Variance inflation of a proportion by clustering, in [1, n / n_clusters].

    Parameters
    ----------
    p : float
        The proportion, in [0, 1].
    n : float
        Its denominator (items).
    bootstrap_variance : float
        The variance of the proportion over cluster-bootstrap resamples (NaN
        when unknown).
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


def proportion_interval(p: float, n: float, *, level: float = 0.95, deff: float = 1.0,
                        method: str = METHOD) -> tuple[float, float]:
    """Interval of a proportion ``p`` of ``n`` items whose design effect is ``deff``.

    Examples
    --------
    >>> low, high = proportion_interval(1.0, 1)  # one fail, caught: far from certain
    >>> round(low, 3), high
    (0.207, 1.0)
    >>> low, high = proportion_interval(0.5, 100, deff=4.0)  # as wide as 25 independent items
    >>> round(high - low, 3)
    0.365
    """
    if not n > 0 or not np.isfinite(p):
        return float("nan"), float("nan")
    n_eff = n / deff
    if method == METHOD:
        low, high = wilson_interval(p * n_eff, n_eff, level=level)
    else:
        from statsmodels.stats.proportion import proportion_confint

        low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method=method)
    # the arithmetic leaves rounding noise at the bounds (e.g. 1 - 1e-16); a proportion stays in [0, 1]
    return float(np.clip(low, 0.0, p)), float(np.clip(high, p, 1.0))


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
