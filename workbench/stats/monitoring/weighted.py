"""Prediction-powered estimate of a window's pass rate when its traces were sampled at different rates.

With inclusion probabilities ``pi_i`` (Bernoulli sampling, e.g. two ingests at different ``--label-rate``), the
rectifier is weighted by ``1 / pi_i`` (Horvitz-Thompson) over the window's N traces:

    estimate = mean_i(yhat_i) + (1/N) sum_{labeled} (y_i - yhat_i) / pi_i,
    var      = (1/N^2) sum_{labeled} (1 - pi_i) / pi_i^2 (y_i - yhat_i)^2

(the unbiased variance estimate of a Horvitz-Thompson total under Poisson sampling; the judge's mean over all N
traces is a fixed quantity of the window). This is classic PPI (lambda = 1) of Angelopoulos et al. (2023) with
design weights; with one rate for the whole window the report uses ``stats.ppi_mean`` as ``grade`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm


def weighted_ppi(yhat: Any, labeled: Any, y: Any, pi: Any, *, level: float = 0.95) -> tuple[float, float, float]:
    """(estimate, ci_low, ci_high) of the mean of y over all N traces (``y`` read only where ``labeled``).

    >>> est, lo, hi = weighted_ppi([1, 1, 0, 0], [True, False, True, False], [1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5])
    >>> est  # the judge's 0.5, plus the one labeled miss (0 judged, 1 by the human) weighted 1 / 0.5, over 4
    1.0
    """
    yhat, labeled = np.asarray(yhat, dtype=float), np.asarray(labeled, dtype=bool)
    y, pi = np.asarray(y, dtype=float), np.asarray(pi, dtype=float)
    if not (yhat.shape == labeled.shape == y.shape == pi.shape) or yhat.ndim != 1:
        raise ValueError("yhat, labeled, y and pi must be one-dimensional arrays of one length")
    if np.any(pi[labeled] <= 0) or np.any(pi > 1):
        raise ValueError("inclusion probabilities of labeled traces must lie in (0, 1]")
    n = yhat.size
    r = (y - yhat)[labeled]
    p = pi[labeled]
    est = float(yhat.mean() + np.sum(r / p) / n)
    se = float(np.sqrt(np.sum((1 - p) / p ** 2 * r ** 2)) / n)
    half = float(norm.ppf(1 - (1 - level) / 2) * se)
    return est, est - half, est + half
