"""Label planning: the gate's interval rule, the widths more labels give, and where an active queue spends them.

Standard large-sample formulas, each stated where it is used (the planner
prints them as its assumptions):

* a proportion ``p`` (TPR, TNR, exact agreement) on ``n`` items has the Wilson
  interval (Wilson 1927); the items needed for a given width are found by
  searching ``n``;
* a half-width ``h`` for a proportion by the normal approximation needs
  ``z^2 p (1 - p) / h^2`` items (TPR 0.9 at +/-0.05: 139);
* Cohen's kappa of two raters on a binary label with prevalence ``P`` has the
  large-sample standard error ``sqrt(p_o (1 - p_o) / n) / (1 - p_e)`` (Fleiss,
  Levin and Paik 2003, eq. 18.13 without the small-sample terms), with
  ``p_e = P^2 + (1 - P)^2`` for raters of equal marginals: kappa 0.8 at +/-0.10
  needs 139 items at P = 0.5 and 412 at P = 0.1;
* any metric with a bootstrap standard error ``se`` on ``n`` items has
  ``se * sqrt(n / n')`` on ``n'`` items (the noise floor's rule).

The active queue's allocation is Neyman's (Neyman 1934; Cochran 1977,
ch. 5.5): stratum ``h`` of ``N_h`` items gets inclusion probability
``pi_h`` proportional to ``S_h``, the within-stratum standard deviation of
what the undecided checks estimate, never below a floor, so every item keeps
a chance of being labeled and inverse-probability weights stay bounded.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from workbench.stats._common import check_level, special_functions
from workbench.stats.intervals.proportion import proportion_interval


def z_value(level: float = 0.95) -> float:
    """The two-sided normal quantile of a confidence level.

    >>> round(z_value(0.95), 3)
    1.96
    """
    check_level(level)
    # scipy.stats' norm.ppf, without the seconds of importing scipy.stats
    return float(special_functions().ndtri(1 - (1 - level) / 2))


def items_for_proportion_halfwidth(p: float, halfwidth: float, *, level: float = 0.95) -> int:
    """Items for a normal-approximation interval of ``p +/- halfwidth``: ``ceil(z^2 p (1 - p) / h^2)``.

    >>> items_for_proportion_halfwidth(0.9, 0.05)
    139
    """
    if not 0 < halfwidth < 1:
        raise ValueError(f"halfwidth must be in (0, 1) such as 0.05, got {halfwidth!r}")
    z = z_value(level)
    return max(1, math.ceil(round(z * z * p * (1 - p) / halfwidth**2, 9)))


def kappa_items_for_halfwidth(kappa: float, prevalence: float, halfwidth: float, *, level: float = 0.95) -> int:
    """Items for a kappa interval of ``kappa +/- halfwidth`` on a binary label of the given prevalence.

    Two raters with equal marginals ``prevalence``: ``p_e = P^2 + (1 - P)^2``,
    ``p_o = kappa (1 - p_e) + p_e``, ``se = sqrt(p_o (1 - p_o) / n) / (1 - p_e)``.

    >>> kappa_items_for_halfwidth(0.8, 0.5, 0.10), kappa_items_for_halfwidth(0.8, 0.1, 0.10)
    (139, 412)
    """
    if not 0 < prevalence < 1:
        raise ValueError(f"prevalence must be in (0, 1) such as 0.2, got {prevalence!r}")
    if not 0 < halfwidth < 1:
        raise ValueError(f"halfwidth must be in (0, 1) such as 0.1, got {halfwidth!r}")
    pe = prevalence**2 + (1 - prevalence) ** 2
    po = kappa * (1 - pe) + pe
    z = z_value(level)
    return max(1, math.ceil(round(z * z * po * (1 - po) / (halfwidth**2 * (1 - pe) ** 2), 9)))


def items_for_width(se: float, n: int, width: float, *, level: float = 0.95) -> int | None:
    """Items for an interval of ``width`` from a standard error ``se`` on ``n`` items (``se ~ 1 / sqrt(n)``)."""
    if not (se > 0 and n >= 1 and width > 0):
        return None
    z = z_value(level)
    return max(1, math.ceil(round(n * (2 * z * se / width) ** 2, 9)))


def undecided_median(distance: float, z_pass: float, z_fail: float) -> float:
    """The median z-score of an estimate whose truth lies ``distance`` standard errors from the bound (positive on
    the passing side), among estimates that leave the check undecided (between ``-z_fail`` and ``z_pass``)."""
    if distance < 0:  # mirrored, so that the probabilities below are of the lower tail (exact far out)
        return -undecided_median(-distance, z_fail, z_pass)
    special = special_functions()  # the normal cdf and its inverse, without importing scipy.stats
    lower, upper = special.ndtr(-z_fail - distance), special.ndtr(z_pass - distance)
    return distance + float(special.ndtri(lower + (upper - lower) / 2))


def distance_given_undecided(z_now: float, z_pass: float, z_fail: float) -> float:
    """The truth's distance from the bound (standard errors) whose undecided estimates have their median at
    ``z_now``: the inverse of :func:`undecided_median`, which increases with the distance (bisection)."""
    low, high = -30.0, 30.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if undecided_median(mid, z_pass, z_fail) < z_now else (low, mid)
    return (low + high) / 2


def items_along_path(z_now: float, distance: float, n: int, z_pass: float, z_fail: float) -> int | None:
    """Total items at which the estimate, moving from ``z_now`` toward ``distance`` (both in standard errors of the
    current ``n`` items), clears the bound: with x = sqrt(m / n) its z-score is distance * x + (z_now - distance) / x,
    so the first x past the boundary is a root of a quadratic. None when the path never clears it (at the bound)."""
    if abs(distance) < 1e-9:
        return None
    if distance > 0:   # distance x^2 - z_pass x + (z_now - distance) >= 0
        a, b, c = distance, -z_pass, z_now - distance
    else:              # -distance x^2 - z_fail x - (z_now - distance) >= 0
        a, b, c = -distance, -z_fail, distance - z_now
    x = (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
    total = n * max(x, 1.0) ** 2
    return None if total > 1e8 else max(n, math.ceil(total - 1e-9))


def items_to_decide(z_now: float, n: int, z_pass: float, z_fail: float, *, selected: bool = True) -> int | None:
    """Total items at which a check now ``z_now`` standard errors from its bound (positive on the passing side) is
    decided; ``selected``: it is undecided because of its interval (then the truth is the one undecided estimates
    imply), not because of a count (then the estimate is taken as it is).

    >>> items_to_decide(1.0, 100, 1.96, 3.29, selected=False)  # the estimate stays: (1.96 / 1) ** 2 as many
    385
    """
    if selected:
        z_now = min(max(z_now, -z_fail + 1e-6), z_pass - 1e-6)  # undecided: inside the band by definition
        distance = distance_given_undecided(z_now, z_pass, z_fail)
    else:
        distance = z_now
    return items_along_path(z_now, distance, n, z_pass, z_fail)


def items_for_proportion_width(p: float, width: float, *, deff: float = 1.0, level: float = 0.95,
                               limit: int = 1_000_000) -> int | None:
    """Items at which the Wilson interval of ``p`` is at most ``width`` wide.

    >>> items_for_proportion_width(0.5, 0.2)  # 93 items: 0.2006 wide
    94
    """
    def narrow(n: int) -> bool:
        low, high = proportion_interval(p, n, level=level, deff=deff)
        return high - low <= width

    return _smallest_n(narrow, limit) if 0 <= p <= 1 else None


def _smallest_n(holds, limit: int) -> int | None:
    """The smallest n in [1, limit] for which the monotone ``holds(n)`` is true (None: not even at ``limit``)."""
    if not holds(limit):
        return None
    lo, hi = 1, 1
    while not holds(hi):
        lo, hi = hi, min(hi * 2, limit)
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


# -- the active queue's allocation ------------------------------------------------

def human_given_judge(judge: Sequence[int], human: Sequence[int], *, scale: Sequence[int],
                      prior_agreement: float = 0.7, prior_weight: float = 2.0) -> np.ndarray:
    """P(human = v | judge = s) as a (K, K) matrix, rows = judge score, from labeled pairs and a weak prior.

    The prior puts ``prior_agreement`` on the judge's own score and spreads
    the rest over the other values, closer ones first; it counts as
    ``prior_weight`` items per row, so a handful of labels already dominates.
    """
    values = list(scale)
    k = len(values)
    idx = np.arange(k)
    spread = 1.0 / (1.0 + np.abs(idx[:, None] - idx[None, :]))
    np.fill_diagonal(spread, 0.0)
    prior = spread / spread.sum(axis=1, keepdims=True) * (1 - prior_agreement) + np.eye(k) * prior_agreement
    counts = np.zeros((k, k))
    pos = {v: i for i, v in enumerate(values)}
    for s, v in zip(judge, human):
        counts[pos[int(s)], pos[int(v)]] += 1
    post = counts + prior * prior_weight
    return post / post.sum(axis=1, keepdims=True)


def human_given_judge_by_group(judge: Sequence[int], human: Sequence[int], group: Sequence[Any], *,
                               item_judge: Sequence[int], item_group: Sequence[Any], scale: Sequence[int],
                               pooled_weight: float = 5.0) -> np.ndarray:
    """Per pool item (n, K): P(human = v | its judge score) within its group (a producer family x category).

    A judge can err more on one category or on its own family: each group's labeled pairs count over the
    pooled :func:`human_given_judge`, which weighs as ``pooled_weight`` items per judge score, so a group
    with few labels keeps the pooled estimate (README "Fewer labels to a verdict": the saving on pools where
    self-preference is decided last rose from 21 / 12 / 21% to 29 / 26 / 25%).
    """
    values = list(scale)
    pos = {v: i for i, v in enumerate(values)}
    pooled = human_given_judge(judge, human, scale=values)
    labeled_group = np.asarray([str(g) for g in group], dtype=object)
    keys = np.asarray([str(g) for g in item_group], dtype=object)
    codes = np.array([pos[int(s)] for s in item_judge], dtype=int)
    pairs = np.array([(pos[int(s)], pos[int(v)]) for s, v in zip(judge, human)], dtype=int).reshape(-1, 2)
    out = np.zeros((len(codes), len(values)))
    for key in np.unique(keys):
        counts = np.zeros((len(values), len(values)))
        mine = pairs[labeled_group == key]
        np.add.at(counts, (mine[:, 0], mine[:, 1]), 1)
        post = counts + pooled * pooled_weight
        at = keys == key
        out[at] = (post / post.sum(axis=1, keepdims=True))[codes[at]]
    return out


# Labels come in batches and the checks are read after each. A failure taken as decided at the first look where
# its 95% interval clears the threshold is found by chance too often over many looks, and stops a campaign with
# the wrong verdict; so a failure counts as decided only when it also holds with the interval widened to 3.29
# standard errors, Haybittle-Peto's interim boundary (p < 0.001).
INTERIM_LEVEL = 0.999


def widened_interval(value: float, low: float, high: float) -> tuple[float, float]:
    """A 95% interval around ``value`` widened to the interim boundary (each side scaled by z_0.999 / z_0.95).

    >>> [round(x, 2) for x in widened_interval(0.0, -1.96, 1.96)]
    [-3.29, 3.29]
    """
    k = z_value(INTERIM_LEVEL) / z_value(0.95)
    return value - (value - low) * k, value + (high - value) * k


#: The states of :func:`threshold_states` and :func:`band_states`: a check passed, failed, or not decided yet.
PASS, FAIL, OPEN = 1, 0, -1


def threshold_states(value: Any, low: Any, high: Any, threshold: float) -> np.ndarray:
    """:func:`threshold_decision` of arrays of estimates at once, as ``PASS``, ``FAIL`` or ``OPEN`` (int8): the one
    interval rule the gate reads (one estimate at a time) and the plan's simulated paths read (thousands at once).

    >>> threshold_states([0.8, 0.5, 0.7], [0.7, 0.45, 0.6], [0.9, 0.55, 0.8], 0.667).tolist()
    [1, 0, -1]
    """
    value, low, high = (np.asarray(x, dtype=np.float64) for x in (value, low, high))
    wide_high = widened_interval(value, low, high)[1]
    with np.errstate(invalid="ignore"):
        state = np.where(low >= threshold, PASS, np.where(wide_high < threshold, FAIL, OPEN))
    return np.where(np.isfinite(low) & np.isfinite(high), state, OPEN).astype(np.int8)


def band_states(value: Any, low: Any, high: Any, limit: float) -> np.ndarray:
    """:func:`band_decision` of arrays of effects at once, as ``PASS``, ``FAIL`` or ``OPEN`` (int8).

    >>> band_states([0.0, 0.3, 0.1], [-0.05, 0.25, 0.0], [0.05, 0.35, 0.2], 0.1).tolist()
    [1, 0, -1]
    """
    value, low, high = (np.asarray(x, dtype=np.float64) for x in (value, low, high))
    wide_low, wide_high = widened_interval(value, low, high)
    with np.errstate(invalid="ignore"):
        state = np.where((low >= -limit) & (high <= limit), PASS,
                         np.where((wide_low > limit) | (wide_high < -limit), FAIL, OPEN))
    return state.astype(np.int8)


_DECISION = {PASS: True, FAIL: False, OPEN: None}


def threshold_decision(value: float | None, low: float | None, high: float | None,
                       threshold: float) -> bool | None:
    """A check passed when its 95% interval lies at or above ``threshold``: True (passed), False (failed, at the
    interim boundary) or None (undecided).

    >>> threshold_decision(0.8, 0.7, 0.9, 0.667), threshold_decision(0.5, 0.45, 0.55, 0.667)
    (True, False)
    """
    if value is None or low is None or high is None:
        return None
    return _DECISION[int(threshold_states(value, low, high, threshold))]


def band_decision(value: float | None, low: float | None, high: float | None, limit: float) -> bool | None:
    """An effect that must lie within +/-``limit`` (self-preference): True when its 95% interval does, False when
    the interval at the interim boundary lies wholly beyond either side, None otherwise.

    >>> band_decision(0.0, -0.05, 0.05, 0.1), band_decision(0.3, 0.25, 0.35, 0.1), band_decision(0.1, 0.0, 0.2, 0.1)
    (True, False, None)
    """
    if value is None or low is None or high is None:
        return None
    return _DECISION[int(band_states(value, low, high, limit))]


CHECK_TARGETS = ("agreement", "tpr", "tnr", "self_preference")
COUNT_TARGETS = ("find_fails", "find_passes")


def stratum_deviations(judge_score: np.ndarray, same_family: np.ndarray, conditional: np.ndarray, *,
                       scale: Sequence[int], pass_threshold: int, checks: Sequence[str] = CHECK_TARGETS,
                       tpr: float = 0.8, tnr: float = 0.8, by_item: bool = False) -> np.ndarray:
    """Per item, the root mean square of what the undecided checks estimate, centred at the pool's value.

    Under Poisson sampling the ratio estimator's variance is
    ``sum_i (1 / pi_i - 1) z_i^2`` for the linearised variable ``z_i`` of
    each check, which ``pi_i`` proportional to ``sqrt(E z_i^2)`` minimises
    (Sarndal et al. 1992, ch. 3.6): agreement, the squared judge-human
    distance minus its pool mean; TPR and TNR, ``1[human pass] (1[judge pass]
    - TPR)`` and its mirror; self-preference, the residual minus its group's
    mean, over the group's share. ``find_fails`` and ``find_passes`` (the
    gate's minimum counts of consensus fails and passes) use ``1[class] /
    P(class)``, so strata where the rarer class is likely are served first.
    Each check's mean square is divided by its pool average so that every
    undecided check has an equal say. ``conditional`` is
    :func:`human_given_judge`, or with ``by_item`` one row per item (a
    simulation's true labels, one-hot: the deviations a design would use if it
    knew every label).
    """
    values = np.asarray(scale, dtype=np.float64)
    codes = np.searchsorted(values, np.asarray(judge_score, dtype=np.float64))
    p_h = np.asarray(conditional) if by_item else conditional[codes]  # (n, K): P(human = v | this item)
    passing = values >= pass_threshold
    judge_pass = passing[codes]
    same = np.asarray(same_family, dtype=bool)
    total = np.zeros(len(codes))
    for check in checks:
        y = _check_variable(check, values, codes, passing, judge_pass, same, tpr=tpr, tnr=tnr)
        if check in ("find_fails", "find_passes"):
            centre = np.zeros(len(codes))
        elif check == "self_preference":
            centre = np.zeros(len(codes))
            for group in (same, ~same):
                if group.any():
                    centre[group] = (p_h[group] * y[group]).sum(axis=1).mean()
        else:
            centre = np.full(len(codes), (p_h * y).sum(axis=1).mean())
        second = (p_h * (y - centre[:, None]) ** 2).sum(axis=1)
        if second.mean() > 0:
            total += second / second.mean()
    return np.sqrt(total)


def _check_variable(check: str, values: np.ndarray, codes: np.ndarray, passing: np.ndarray, judge_pass: np.ndarray,
                    same: np.ndarray, *, tpr: float, tnr: float) -> np.ndarray:
    """(n, K): the check's per-item variable if the human label were each scale value."""
    if check == "agreement":
        return (values[codes][:, None] - values[None, :]) ** 2
    if check == "tpr":
        return passing[None, :] * ((judge_pass.astype(float) - tpr)[:, None])
    if check == "tnr":
        return (~passing)[None, :] * (((~judge_pass).astype(float) - tnr)[:, None])
    if check == "self_preference":
        share = max(float(same.mean()), 1e-3)
        scale_by = np.where(same, 1 / share, 1 / max(1 - share, 1e-3))
        return (values[codes][:, None] - values[None, :]) * scale_by[:, None]
    if check in ("find_fails", "find_passes"):
        cls = ~passing if check == "find_fails" else passing
        return np.broadcast_to(cls[None, :].astype(float), (len(codes), len(values)))
    raise ValueError(f"unknown check {check!r}; use one of {', '.join(CHECK_TARGETS + COUNT_TARGETS)}")


def neyman_inclusion(strata: Sequence[Any], deviation: Sequence[float], *, expected_labels: float,
                     floor: float = 0.25) -> np.ndarray:
    """Inclusion probability of each item: Neyman allocation over strata, with a floor, clipped at 1.

    Parameters
    ----------
    strata : sequence, one stratum key per item
    deviation : sequence of float, per item
        Its stratum's standard deviation ``S_h`` (items of one stratum share
        it; the stratum mean is used).
    expected_labels : float
        How many items the design expects to label: ``sum(pi) ==
        expected_labels`` (the ratio estimator does not depend on it unless
        probabilities are clipped at 1).
    floor : float, default 0.25
        No stratum falls below ``floor`` times the uniform rate
        ``expected_labels / N``: every item keeps a chance, and no weight
        exceeds ``1 / floor`` times the uniform one.

    Examples
    --------
    >>> pi = neyman_inclusion(["a"] * 8 + ["b"] * 2, [1.0] * 8 + [4.0] * 2, expected_labels=4)
    >>> [round(float(x), 3) for x in (pi[0], pi[-1], pi.sum())]
    [0.25, 1.0, 4.0]
    """
    keys = np.asarray([str(s) for s in strata], dtype=object)
    dev = np.asarray(deviation, dtype=np.float64)
    n = len(keys)
    if n == 0:
        return np.zeros(0)
    if not 0 < expected_labels <= n:
        raise ValueError(f"expected_labels must be in (0, {n}], got {expected_labels!r}")
    if not 0 < floor <= 1:
        raise ValueError(f"floor must be in (0, 1] such as 0.25, got {floor!r}")
    uniq, inv = np.unique(keys, return_inverse=True)
    size = np.bincount(inv).astype(float)
    s_h = np.bincount(inv, weights=dev) / size
    s_h = np.where(s_h > 0, s_h, 0.0)
    uniform = expected_labels / n
    rate = np.maximum(s_h, 1e-12)
    lower = floor * uniform

    def total(c: float) -> float:
        return float((size * np.clip(np.maximum(rate * c, lower), 0, 1)).sum())

    lo, hi = 0.0, 1.0
    while total(hi) < expected_labels and hi < 1e12:
        hi *= 2
    for _ in range(200):  # bisection on the common factor: the floor, the cap at 1 and the total agree
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < expected_labels else (lo, mid)
    pi_h = np.clip(np.maximum(rate * hi, lower), 0, 1)
    return pi_h[inv]


def queue_priority(unit: Sequence[float], inclusion: Sequence[float]) -> np.ndarray:
    """The order of the active queue, lowest first: ``u_i / pi_i`` (sequential Poisson sampling, Ohlsson 1998).

    ``u_i`` is a fixed uniform number per item. Taking items in this order
    means that when the queue stops after any number of items, those labeled
    are (approximately) a Poisson sample with probabilities ``c * pi_i`` for
    one common ``c``: the weights ``1 / pi_i`` recorded when each was served
    are right up to that common factor, which a ratio estimator ignores.
    """
    return np.asarray(unit, dtype=np.float64) / np.asarray(inclusion, dtype=np.float64)


def expected_width_after(se: float, n: int, more: int, *, level: float = 0.95) -> float | None:
    """Expected interval width after ``more`` items, from ``se`` on ``n`` items."""
    if not (se > 0 and n >= 1):
        return None
    return 2 * z_value(level) * se * math.sqrt(n / (n + max(0, more)))
