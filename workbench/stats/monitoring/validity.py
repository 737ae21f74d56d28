"""Is the approved judge still as good as the gate required? Agreement per trace, and a test that may be looked at
after every window.

Agreement on one labeled trace is ``x = 1 - w(judge, human)``, with the disagreement weight ``w`` of the gate's
agreement metric: 0/1 for exact agreement and Cohen's kappa, ``|a - b| / (K - 1)`` for the linear metrics,
``((a - b) / (K - 1))**2`` for the ordinal and quadratic ones (Krippendorff's ordinal alpha is close to the
quadratic-weighted kappa). With the chance disagreement ``D_e`` of the approval's confusion matrix held fixed, a
kappa-type agreement ``1 - D_o / D_e`` lies below the policy's ``min_agreement_lower`` exactly when the mean of
``x`` lies below the *floor* ``1 - (1 - min_agreement_lower) * D_e``: the bound becomes a bound on a mean in
[0, 1], which a test by betting handles without assumptions beyond independence of the sample draws.

The test (:func:`betting_test`) bets against ``H0: E[x_t | past] >= floor`` for every t since approval. One
wealth process per memory length ``n`` in :data:`MEMORIES`,

    K_t(n) = prod_{i <= t} (1 + lambda_i(n) (floor - x_i)),   0 <= lambda_i(n) <= c / (1 - floor),  c = 0.5,

is a nonnegative supermartingale under H0 for any bets fixed before x_i is seen, and so is their average
``M_t = mean_n K_t(n)`` (a mixture of test supermartingales on one filtration is one), so by Ville's inequality
``P(sup_t M_t >= 1/alpha) <= alpha``: the alarm may be checked after every label, every window, forever, and is
false at most with probability alpha. ``lambda_i(n)`` is the constant bet that would have grown the wealth most
over the previous n labels (GRAPA of Waudby-Smith and Ramdas 2024, the empirical Kelly bet), solved exactly
because x takes few values on a scale, and fitted beside :data:`PRIOR` pseudo-labels of the least favourable null
(x = 1 and x = 0 in the proportions that put their mean at the floor), which shrink a bet fitted on few labels
without changing its sign. Up to issue 51 the bet was the approximation ``mean(y) / mean(y**2)`` (aGRAPA) on the
last 50 labels, which bets far too little when x is skewed, as it is on lopsided data and on a 5-point scale,
where nearly every label agrees and a mirrored verdict costs a whole point: on the public data after half the
verdicts are dropped, 0.05 / (1 - floor) against the log-optimal 0.41 (5-point) and 0.53 (3-point)
(validation/promises/validity.py). Bets on recent labels only let a judge good for months and then broken be
caught by the labels after the break rather than diluted by the months before; the mixture over memories pays a
factor 5 in the threshold to let the short memories catch a large drop within a few labels and the long ones a
small drop. (The e-detectors of Shin, Ramdas and Rinaldo 2024 adapt to an unknown change by restarting, which
bounds the mean time to a false alarm rather than the chance of any; so no restarts here.) The cap c keeps a bet
fitted on a few bad labels from losing more than half the wealth on one good label; on the public data the
log-optimal bet reaches it only with half the 3-point verdicts flipped.

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

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
    def levels(self) -> tuple[float, ...]:
        """Every value the per-trace agreement can take on this scale, lowest first."""
        v = np.asarray(self.values, dtype=float)
        return tuple(float(a) for a in np.unique(1 - _weight(v[:, None] - v[None, :], self.weights, self._span)))

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
    """The mixture's log-wealth after each label (``log_wealth[t]`` after t + 1 labels), the first label at which
    the wealth reached 1/alpha (0-based; None: never), and which memory's wealth led after each label."""

    log_wealth: np.ndarray
    alpha: float
    crossed_at: int | None
    memories: tuple[int, ...]
    leader: np.ndarray  # index into ``memories`` of the largest component wealth after each label

    @property
    def rejected(self) -> bool:
        return self.crossed_at is not None

    @property
    def wealth(self) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.exp(self.log_wealth)

    def leading_memory(self, n_labels: int) -> int:
        """The memory whose wealth was largest after the first ``n_labels`` labels."""
        return int(self.memories[int(self.leader[n_labels - 1])]) if n_labels else int(self.memories[0])


#: The memory lengths (in labels) of the mixture's components: short ones catch a large drop within a few labels
#: of it, long ones a small drop that only many labels can show.
MEMORIES = (10, 25, 50, 100, 200)
#: Pseudo-labels of the least favourable null each bet is fitted with beside the window's labels.
PRIOR = 10.0
#: Above this many distinct agreement values the bets are fitted on x rounded to this many levels (a continuous x;
#: the wealth itself always uses the exact x).
MAX_LEVELS = 16


def bets(x: Any, floor: float, *, memories: Sequence[int] = MEMORIES, bet: str = "grapa", max_bet: float = 0.5,
         min_history: int = 10, prior: float = PRIOR, levels: Sequence[float] | None = None) -> np.ndarray:
    """The predictable bets, one row per memory: ``lam[j, i]`` is fitted on labels ``i - memories[j] .. i - 1``
    only (none before ``min(min_history, memories[j])`` of them), in ``[0, max_bet / (1 - floor)]``.

    ``bet="grapa"``: the log-optimal constant bet on those labels, the root of
    ``sum (floor - x_k) / (1 + lam (floor - x_k)) = 0`` (Waudby-Smith and Ramdas' GRAPA), solved exactly over the
    few values x takes on a scale, with ``prior`` pseudo-labels of the least favourable null beside them (x = 1
    with weight ``floor``, x = 0 with weight ``1 - floor``: mean exactly the floor, the largest variance there):
    they leave the sign of the bet to the labels and shrink its size while the labels are few.
    ``bet="agrapa"``: the second-order approximation ``mean(y) / mean(y**2)``, ``y = floor - x`` (aGRAPA, no
    prior), the bet used up to issue 51. ``levels``: the values x can take
    (:attr:`AgreementScale.levels`; default those in x), so that a bet never depends on which values come later,
    not even in its last bit.

    >>> lam = bets([1.0] * 20 + [0.0] * 5, 0.8, memories=(10,))
    >>> float(lam[0, 20]), float(lam[0, 24]) > 0
    (0.0, True)
    """
    if bet not in ("grapa", "agrapa"):
        raise ValueError(f"bet must be 'grapa' or 'agrapa', got {bet!r}")
    y = floor - np.asarray(x, dtype=float)
    cap = max_bet / (1 - floor)
    mem = np.asarray(memories, dtype=int)
    if mem.ndim != 1 or mem.size == 0 or mem.min() < 1:
        raise ValueError(f"memories must be positive label counts, got {memories!r}")
    i = np.arange(y.size)
    lo = np.maximum(i[None, :] - mem[:, None], 0)
    ready = i[None, :] - lo >= np.minimum(min_history, mem)[:, None]
    if bet == "agrapa":
        s1, s2 = np.concatenate([[0.0], np.cumsum(y)]), np.concatenate([[0.0], np.cumsum(y * y)])
        first, second = s1[i] - s1[lo], s2[i] - s2[lo]
        lam = np.divide(first, second, out=np.zeros_like(first), where=ready & (second > 0))
        return np.clip(lam, 0.0, cap)
    levels, codes = _levels(y, floor, None if levels is None else floor - np.asarray(levels, dtype=float))
    k = levels.size
    counts = np.zeros((y.size + 1, k + 2))  # the last two columns: the prior's
    counts[i + 1, codes] = 1
    counts = np.cumsum(counts, axis=0)
    pseudo = (prior * floor, prior * (1 - floor))
    levels = np.append(levels, [floor - 1, floor])
    lam = np.empty((mem.size, y.size))
    for j, row in enumerate(lo):  # one memory at a time keeps the arrays labels x levels
        base = int(mem[j]) + 1
        if base ** k < 2 ** 62:  # windows repeat a few count vectors: solve each distinct one once
            # a window's counts in base ``memory + 1``, each below the base: one integer per count vector (the
            # running sum may wrap around int64, its differences, below 2**62, do not)
            key = np.concatenate([[0], np.cumsum(base ** codes.astype(np.int64))])
            _, first, where = np.unique(key[:-1] - key[row], return_index=True, return_inverse=True)
            window = counts[first] - counts[row[first]]
            window[:, k:] = pseudo
            lam[j] = _log_optimal(window, levels, cap)[where.reshape(-1)]
        else:
            window = counts[:-1] - counts[row]
            window[:, k:] = pseudo
            lam[j] = _log_optimal(window, levels, cap)
    return np.where(ready, lam, 0.0)


def _levels(y: np.ndarray, floor: float, given: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The values y can take and each label's index among them (the nearest; MAX_LEVELS levels at most)."""
    levels = np.unique(y if given is None else given)
    if levels.size > MAX_LEVELS:
        levels = np.linspace(floor - 1, floor, MAX_LEVELS)
    return levels, np.abs(y[:, None] - levels[None, :]).argmin(axis=1)


def _log_optimal(counts: np.ndarray, levels: np.ndarray, cap: float, iterations: int = 30) -> np.ndarray:
    """For each row of value counts, the lam in [0, cap] maximising ``sum_k counts_k log(1 + lam levels_k)``.

    The objective is concave, so its derivative ``g`` decreases: lam = 0 where ``g(0) <= 0`` (the window does not
    lie below the floor), cap where ``g(cap) >= 0``, else the root, by Newton steps kept inside a shrinking
    bracket (a step leaving it is replaced by bisection). A row stops when its own step is below 1e-12 of the
    cap, so that its answer does not depend on the other rows (not even in its last bit)."""
    lam = np.zeros(counts.shape[0])
    slope0 = (counts * levels).sum(axis=1)
    at_cap = (counts * (levels / (1 + cap * levels))).sum(axis=1)
    lam[(slope0 > 0) & (at_cap >= 0)] = cap
    rows = np.flatnonzero((slope0 > 0) & (at_cap < 0))
    if rows.size == 0:
        return lam
    c = counts[rows]
    lo, hi = np.zeros(rows.size), np.full(rows.size, cap)
    t = np.clip(slope0[rows] / np.maximum((c * levels ** 2).sum(axis=1), 1e-300), 0, cap)  # aGRAPA's bet
    live = np.arange(rows.size)
    for _ in range(iterations):
        cl, tl = c[live], t[live]
        ratio = levels / (1 + tl[:, None] * levels)
        g = (cl * ratio).sum(axis=1)
        lo[live], hi[live] = np.where(g > 0, tl, lo[live]), np.where(g > 0, hi[live], tl)
        step = tl + g / np.maximum((cl * ratio ** 2).sum(axis=1), 1e-300)
        t[live] = np.where((step > lo[live]) & (step < hi[live]), step, (lo[live] + hi[live]) / 2)
        live = live[np.abs(t[live] - tl) > 1e-12 * cap]
        if live.size == 0:
            break
    lam[rows] = t
    return lam


def betting_test(x: Any, floor: float, *, alpha: float = 0.05, memories: Sequence[int] = MEMORIES,
                 bet: str = "grapa", max_bet: float = 0.5, min_history: int = 10, prior: float = PRIOR,
                 levels: Sequence[float] | None = None) -> BettingTest:
    """Test ``H0: mean agreement >= floor`` at every label (see the module docstring): the average of one wealth
    process per memory length, each betting :func:`bets`; alarm when the average reaches 1/alpha.

    ``memories=(50,), bet="agrapa"`` is the test used up to issue 51.

    >>> t = betting_test([1.0] * 200, 0.8)
    >>> t.rejected, float(t.wealth[-1])
    (False, 1.0)
    >>> betting_test([0.0] * 40, 0.8).crossed_at is not None
    True
    """
    x = np.asarray(x, dtype=float)
    memories = tuple(int(m) for m in memories)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if not 0 < max_bet < 1:
        raise ValueError(f"max_bet must lie strictly between 0 and 1 (1 could lose everything), got {max_bet}")
    if x.size and (x.min() < 0 or x.max() > 1):
        raise ValueError("per-trace agreement must lie in [0, 1]")
    if not 0 < floor < 1 or x.size == 0:  # a floor of 0 can never be undercut, one of 1 always is
        return BettingTest(np.zeros(x.size), alpha, None, memories, np.zeros(x.size, dtype=int))
    lam = bets(x, floor, memories=memories, bet=bet, max_bet=max_bet, min_history=min_history, prior=prior,
               levels=levels)
    component = np.cumsum(np.log1p(lam * (floor - x)[None, :]), axis=1)
    log_wealth = logsumexp(component, axis=0) - np.log(len(memories))
    hit = np.flatnonzero(log_wealth >= np.log(1 / alpha))
    return BettingTest(log_wealth, alpha, int(hit[0]) if hit.size else None, memories, component.argmax(axis=0))
