"""Is the approved judge still as good as the gate required? Agreement per trace, and a test that may be looked at
after every window.

Agreement on one labeled trace is ``x = 1 - w(judge, human)``, with the disagreement weight ``w`` of the gate's
agreement metric: 0/1 for exact agreement and Cohen's kappa, ``|a - b| / (K - 1)`` for the linear metrics,
``((a - b) / (K - 1))**2`` for the ordinal and quadratic ones (Krippendorff's ordinal alpha is close to the
quadratic-weighted kappa). With the chance disagreement ``D_e`` of the approval's confusion matrix held fixed, a
kappa-type agreement ``1 - D_o / D_e`` lies below the policy's ``min_agreement_lower`` exactly when the mean of
``x`` lies below the *floor* ``1 - (1 - min_agreement_lower) * D_e``: the bound becomes a bound on a mean in
[0, 1], which a test by betting handles without assumptions beyond independence of the sample draws.

The test (:func:`betting_test`) bets against ``H0: E[x_t | past] >= floor`` for every t since approval:

    K_t = prod_{i <= t} (1 + lambda_i * (floor - x_i)),   0 <= lambda_i <= c / (1 - floor),

a nonnegative supermartingale under H0 for any predictable bets, so by Ville's inequality
``P(sup_t K_t >= 1/alpha) <= alpha``: the alarm may be checked after every label, every window, forever, and is
false at most with probability alpha. This is the testing side of the betting confidence sequences of
Waudby-Smith and Ramdas (2024); the bets are their GRAPA plug-in computed on the last ``memory`` labels only, so
that a judge good for months and then broken is caught by the labels after the break rather than diluted by the
months before (still predictable, so the guarantee is untouched; the idea of adapting to a change is that of the
e-detectors of Shin, Ramdas and Rinaldo 2024).

References
----------
Waudby-Smith I, Ramdas A (2024). Estimating means of bounded random variables by betting. Journal of the Royal
Statistical Society Series B 86(1), 1-27.

Shin J, Ramdas A, Rinaldo A (2024). E-detectors: a nonparametric framework for sequential change detection. New
England Journal of Statistics in Data Science 2(2), 229-260.

Howard SR, Ramdas A, McAuliffe J, Sekhon J (2021). Time-uniform, nonparametric, nonasymptotic confidence
sequences. Annals of Statistics 49(2), 1055-1080.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats.intervals.proportion import wilson_interval

#: Metric name -> how far apart two scale values disagree ("nominal", "linear", "quadratic").
METRIC_WEIGHTS = {"exact_agreement": "nominal", "cohen_kappa": "nominal", "cohen_kappa_linear": "linear",
                  "gwet_ac2_linear": "linear", "cohen_kappa_quadratic": "quadratic",
                  "krippendorff_alpha_ordinal": "quadratic", "spearman": "quadratic"}


@dataclass(frozen=True, slots=True)
class AgreementScale:
    """Per-trace agreement on the weights of one metric, and the floor the policy's bound puts on its mean.

    ``chance_disagreement`` is D_e of the approval confusion matrix (None for exact agreement, whose bound is on
    the mean itself)."""

    metric: str
    weights: str
    values: tuple[int, ...]
    bound: float
    chance_disagreement: float | None

    @property
    def floor(self) -> float:
        """The mean per-trace agreement below which the metric is below the bound."""
        if self.chance_disagreement is None:
            return float(self.bound)
        return float(1 - (1 - self.bound) * self.chance_disagreement)

    def agreement(self, judge: Any, human: Any) -> np.ndarray:
        """x = 1 - w(judge, human) per trace, in [0, 1]."""
        j, h = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
        return 1 - _weight(j - h, self.weights, self._span)

    def as_metric(self, mean_agreement: float) -> float:
        """A mean agreement in the metric's own units (kappa-type: 1 - D_o / D_e with the approval's D_e)."""
        if self.chance_disagreement is None:
            return float(mean_agreement)
        return float(1 - (1 - mean_agreement) / self.chance_disagreement)

    @property
    def _span(self) -> float:
        return float(max(self.values) - min(self.values)) or 1.0


def _weight(diff: np.ndarray, weights: str, span: float) -> np.ndarray:
    if weights == "nominal":
        return (diff != 0).astype(float)
    if weights == "linear":
        return np.abs(diff) / span
    return (diff / span) ** 2


def agreement_scale(confusion: Any, values: Any, *, metric: str, bound: float) -> AgreementScale:
    """The per-trace agreement of ``metric`` and its floor, from the approval confusion matrix (rows human
    consensus, columns judge, in the order of ``values``).

    >>> s = agreement_scale([[40, 10], [10, 40]], [0, 1], metric="cohen_kappa", bound=0.6)
    >>> round(s.chance_disagreement, 3), round(s.floor, 3)
    (0.5, 0.8)
    """
    values = tuple(int(v) for v in values)
    weights = METRIC_WEIGHTS.get(metric)
    if weights is None:
        raise ValueError(f"no per-trace agreement is defined for metric '{metric}'; use one of "
                         f"{', '.join(METRIC_WEIGHTS)}")
    if metric == "exact_agreement":
        return AgreementScale(metric, weights, values, float(bound), None)
    m = np.asarray(confusion, dtype=float)
    if m.shape != (len(values), len(values)) or m.sum() <= 0:
        raise ValueError(f"the approval confusion matrix must be {len(values)} x {len(values)} with counts, "
                         f"got shape {m.shape}")
    rows, cols = m.sum(axis=1) / m.sum(), m.sum(axis=0) / m.sum()
    v = np.asarray(values, dtype=float)
    span = float(v.max() - v.min()) or 1.0
    d_e = float(np.sum(np.outer(rows, cols) * _weight(v[:, None] - v[None, :], weights, span)))
    if d_e <= 0:
        raise ValueError("the approval confusion matrix has no chance disagreement (one value only), so a "
                         "kappa-type bound has no meaning on it")
    return AgreementScale(metric, weights, values, float(bound), d_e)


def window_agreement(x: Any, scale: AgreementScale, *, level: float = 0.95) -> dict[str, Any]:
    """The metric on one window's labeled traces with an interval: a Wilson interval for the mean of x (for x in
    [0, 1], var(x) <= mean (1 - mean), so the binary case's interval is conservative), mapped to the metric."""
    x = np.asarray(x, dtype=float)
    n = int(x.size)
    if n == 0:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    lo, hi = wilson_interval(float(x.sum()), n, level=level)
    return {"value": scale.as_metric(float(x.mean())), "ci_low": scale.as_metric(lo), "ci_high": scale.as_metric(hi),
            "n": n}


@dataclass(frozen=True, slots=True)
class BettingTest:
    """The wealth after each label (``wealth[t]`` after t + 1 labels) and the first label at which it reached
    1/alpha (0-based; None: never)."""

    wealth: np.ndarray
    alpha: float
    crossed_at: int | None

    @property
    def rejected(self) -> bool:
        return self.crossed_at is not None


def betting_test(x: Any, floor: float, *, alpha: float = 0.05, memory: int = 50, min_history: int = 10,
                 max_bet: float = 0.5) -> BettingTest:
    """Test ``H0: mean agreement >= floor`` at every label (see the module docstring).

    The bet on label i is GRAPA's ``mean(y) / mean(y**2)`` with ``y = floor - x`` over the previous ``memory``
    labels (none before ``min_history``), clipped to ``[0, max_bet / (1 - floor)]`` so wealth never reaches 0.

    >>> t = betting_test([1.0] * 200, 0.8)
    >>> t.rejected, float(t.wealth[-1])
    (False, 1.0)
    >>> betting_test([0.0] * 40, 0.8).crossed_at is not None
    True
    """
    x = np.asarray(x, dtype=float)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if x.size and (x.min() < 0 or x.max() > 1):
        raise ValueError("per-trace agreement must lie in [0, 1]")
    if not 0 < floor < 1:  # a floor of 0 can never be undercut, one of 1 always is
        return BettingTest(np.ones(x.size), alpha, None)
    y = floor - x
    cap = max_bet / (1 - floor)
    wealth = np.empty(x.size)
    k, crossed = 1.0, None
    for i in range(x.size):
        lam = 0.0
        if i >= min_history:
            past = y[max(0, i - memory):i]
            second = float(np.mean(past ** 2))
            if second > 0:
                lam = min(max(float(np.mean(past)) / second, 0.0), cap)
        k *= 1 + lam * y[i]
        wealth[i] = k
        if crossed is None and k >= 1 / alpha:
            crossed = i
    return BettingTest(wealth, alpha, crossed)
