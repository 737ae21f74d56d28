"""The gate's measurements on simulated paths: each look's estimate and interval, from sums over the items labeled.

The estimates are those of the report, computed from the same sums: the agreement metric from the confusion
matrix (:func:`workbench.stats.agreement.stacked_metrics`), TPR and TNR as shares of a class, the self-preference
effects as differences of mean residuals, the comparison with the reviewers as the mean paired difference with the
report's standard error (:func:`workbench.stats.humans.human_ceiling`). Weighted sums give the active queue's
Hajek estimates.

The intervals follow the report's methods where those are closed forms (the smallest interval holding Wilson's
and Jeffreys' on the effective count for TPR and TNR, the paired normal interval for the comparison with the
reviewers); where the report resamples (the
agreement metric's BCa interval, the self-preference effects' posterior), the current interval's two half-widths
are carried along and scaled by the ratio of standard errors, ``sqrt(n_eff_now / n_eff)``: ``n_eff`` the Kish
effective count of the weights. The clustering's design effect stays as the report measures it now: extrapolated
by Kish's ``1 + (m - 1) rho`` from the bootstrap's design effect at one or two items a task, it grew to 3 or more
where SummEval's own reaches 1.4 to 2.4 over the whole pool (benchmarks/plan_honesty.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.stats.agreement import stacked_metrics


def confusion_metric(confusion: np.ndarray, values: Any, pass_index: int, name: str) -> np.ndarray:
    """The agreement metric ``name`` of every confusion matrix of a ``(..., K, K)`` stack (rows consensus)."""
    c = np.asarray(confusion, dtype=np.float64)
    flat = c.reshape(-1, c.shape[-2], c.shape[-1])
    return stacked_metrics(flat, np.asarray(values), pass_index)[name].reshape(c.shape[:-2])


def scaled_interval(value: np.ndarray, now: tuple[float, float, float], scale: np.ndarray) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
    """The interval around ``value`` whose half-widths are now's (``(value, low, high)``) times ``scale``.

    >>> [round(float(x[0]), 3) for x in scaled_interval(np.array([0.7]), (0.6, 0.5, 0.8), np.array([0.5]))]
    [0.65, 0.8]
    """
    v0, low0, high0 = now
    return value - (v0 - low0) * scale, value + (high0 - v0) * scale


def standard_error_ratio(n_eff: np.ndarray, n_eff_now: float) -> np.ndarray:
    """``sqrt(n_eff_now / n_eff)``: how a standard error scales from now to a look, the design effect of the
    clustering staying as it is now."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(n_eff_now / n_eff)


def kish(sum_w: np.ndarray, sum_w2: np.ndarray) -> np.ndarray:
    """Kish's effective number of items of weights with these sums: ``(sum w)^2 / sum w^2``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sum_w2 > 0, sum_w**2 / sum_w2, 0.0)


def paired_difference(n: np.ndarray, sum_w: np.ndarray, sum_wd: np.ndarray, sum_w2: np.ndarray,
                      sum_w2d: np.ndarray, sum_w2d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error) of per-item differences ``d`` with weights ``w``, from their sums: the weighted mean
    and ``human_ceiling``'s ``sqrt(n / (n - 1) * sum w^2 (d - mean)^2) / sum w`` (NaN below two items).

    >>> mean, se = paired_difference(*(np.array([x]) for x in (3, 3, 0.0, 3, 0.0, 2.0)))
    >>> float(mean[0]), round(float(se[0]), 4)  # d = (-1, 0, 1): s / sqrt(n) = 1 / sqrt(3)
    (0.0, 0.5774)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = sum_wd / sum_w
        spread = sum_w2d2 - 2 * mean * sum_w2d + mean**2 * sum_w2
        se = np.sqrt(n / (n - 1) * np.maximum(spread, 0.0)) / sum_w
    ok = n >= 2
    return np.where(n >= 1, mean, np.nan), np.where(ok, se, np.nan)
