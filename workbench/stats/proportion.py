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
"""

from __future__ import annotations

import numpy as np

#: Metrics that are a share of items of some denominator, and what that denominator is.
PROPORTION_DENOMINATORS = {"exact_agreement": "n_items", "tpr": "n_pos", "tnr": "n_neg"}

#: Interval method for proportions, as named by ``statsmodels.stats.proportion.proportion_confint``.
METHOD = "wilson"


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
    from statsmodels.stats.proportion import proportion_confint

    n_eff = n / deff
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method=method)
    # statsmodels leaves rounding noise at the bounds (e.g. 1 - 1e-16); a proportion stays in [0, 1]
    return float(np.clip(low, 0.0, p)), float(np.clip(high, p, 1.0))
