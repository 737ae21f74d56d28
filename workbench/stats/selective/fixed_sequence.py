"""A confidence threshold above which a judge agrees with the humans at least ``target`` of the time, with
probability at least ``1 - risk``, chosen by fixed-sequence testing.

For thresholds t_1 > t_2 > ... (an order that depends on the judges' confidences only, never on the labels), test
H_k: "agreement on items with confidence >= t_k is below the target" by the exact one-sided Clopper-Pearson lower
bound at level 1 - risk, and go down while each H_k is rejected; the threshold is the last one rejected. Testing
in a fixed order and stopping at the first failure controls the chance of any false rejection at ``risk`` without
splitting it among the thresholds (Bauer 1991, "Multiple testing in clinical trials", Stat Med 10(6):871-890;
Angelopoulos et al. 2021, "Learn then Test", arXiv:2110.01052); Trust or Escalate (Jung, Brahman and Choi, ICLR
2025) uses it for selective judging.

Its trap: a sequence that starts on the few most confident items fails at once (a handful of items cannot clear
a high target) and keeps almost nothing. So the sequence starts where enough items are kept (:func:`start_size`),
a number fixed by the target and the risk alone, so the procedure stays valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta


def clopper_pearson_lower(k: int, n: int, risk: float) -> float:
    """Exact one-sided lower confidence bound at level ``1 - risk`` for a binomial proportion, k successes of n.

    The ``risk`` quantile of Beta(k, n - k + 1) (Clopper and Pearson 1934); 0 when k = 0.

    >>> round(clopper_pearson_lower(10, 10, 0.05), 4)   # 0.05 ** (1 / 10)
    0.7411
    """
    if n <= 0 or k <= 0:
        return 0.0
    return float(beta.ppf(risk, k, n - k + 1))


def clopper_pearson_upper(k: int, n: int, risk: float) -> float:
    """Exact one-sided upper confidence bound at level ``1 - risk``, k successes of n: the ``1 - risk`` quantile of
    Beta(k + 1, n - k); 1 when k = n.

    >>> round(clopper_pearson_upper(0, 10, 0.05), 4)   # 1 - 0.05 ** (1 / 10)
    0.2589
    """
    if n <= 0 or k >= n:
        return 1.0
    return float(beta.ppf(1 - risk, k + 1, n - k))


def min_kept_to_reach(target: float, risk: float, agreement: float = 1.0) -> int | None:
    """The fewest kept items on which an observed ``agreement`` gives a lower bound >= ``target``.

    With ``agreement`` 1 (every kept item agrees) it is ceil(ln(risk) / ln(target)), since the bound is then
    risk ** (1 / n): no fewer items can ever show the target. None when ``agreement`` is not above the target (no
    number of items will).

    >>> min_kept_to_reach(0.9, 0.05)
    29
    """
    if agreement <= target:
        return None
    if agreement >= 1:
        return math.ceil(math.log(risk) / math.log(target) - 1e-12)
    n = min_kept_to_reach(target, risk)
    while clopper_pearson_lower(math.floor(agreement * n + 1e-9), n, risk) < target:
        n = n + max(1, n // 20)
        if n > 10_000_000:
            return None
    while n > 1 and clopper_pearson_lower(math.floor(agreement * (n - 1) + 1e-9), n - 1, risk) >= target:
        n -= 1  # the coarse steps above may overshoot: walk back to the fewest
    return n


def start_size(target: float, risk: float) -> int:
    """Where the sequence starts: twice the fewest kept items that could show the target at all (when every one
    agrees). Those fewest would have to agree without a single miss to pass the first test, the trap above; twice
    as many leave room for misses (e.g. 58 items at a target of 0.9 and a risk of 0.05, of which 57 agreeing
    pass). The number depends on the target and the risk alone, never on the data.

    >>> start_size(0.9, 0.05)
    58
    """
    return 2 * min_kept_to_reach(target, risk)


def threshold_grid(confidence: np.ndarray, *, min_kept: int, steps: int = 20) -> list[float]:
    """Thresholds from high to low: distinct confidence values each keeping at least ``min_kept`` items, at most
    ``steps`` of them, spread evenly over the items kept (a long sequence has more places to stop early)."""
    ascending = np.sort(np.asarray(confidence, dtype=float))
    values = np.unique(ascending)[::-1]
    kept = len(ascending) - np.searchsorted(ascending, values, side="left")  # items with confidence >= each value
    values, kept = values[kept >= min_kept], kept[kept >= min_kept]
    if len(values) <= steps:
        return [float(v) for v in values]
    wanted = np.linspace(kept[0], kept[-1], steps)
    chosen = sorted({int(np.searchsorted(kept, w, side="left")) for w in wanted})
    return [float(values[min(i, len(values) - 1)]) for i in chosen]


@dataclass(frozen=True)
class SelectiveStep:
    """One test of the sequence: the threshold, the items it keeps, how many agree, and the lower bound."""

    threshold: float
    n_kept: int
    n_agree: int
    lower_bound: float
    passed: bool


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold chosen (None: none reaches the target with these labels) and the sequence tested."""

    threshold: float | None
    target: float
    risk: float
    n_calibration: int
    n_kept: int
    n_agree: int
    lower_bound: float | None
    steps: tuple[SelectiveStep, ...]
    start: int  # the fewest kept items the sequence starts from

    @property
    def guaranteed(self) -> bool:
        return self.threshold is not None

    @property
    def coverage(self) -> float:
        return self.n_kept / self.n_calibration if self.n_calibration else 0.0

    @property
    def agreement(self) -> float | None:
        return self.n_agree / self.n_kept if self.n_kept else None

    def more_labels(self) -> tuple[int, int | None]:
        """(at least, about) how many more labeled items a guarantee needs when none was found.

        At least: the items that would give even perfect agreement a bound at the target, divided by the share the
        first test kept. About: the items on which the first test's observed agreement, if it held, would clear
        the target (None when that agreement is not above the target: more labels alone will not do).
        """
        share = (self.steps[0].n_kept / self.n_calibration) if self.steps else 1.0
        floor = math.ceil(min_kept_to_reach(self.target, self.risk) / share)
        seen = self.steps[0].n_agree / self.steps[0].n_kept if self.steps else None
        needed = min_kept_to_reach(self.target, self.risk, seen) if seen is not None else \
            min_kept_to_reach(self.target, self.risk, (1 + self.target) / 2)
        about = None if needed is None else max(math.ceil(needed / share) - self.n_calibration, 1)
        return max(floor - self.n_calibration, 1), about


def choose_threshold(confidence: np.ndarray, agree: np.ndarray, *, target: float, risk: float,
                     steps: int = 20) -> ThresholdChoice:
    """The lowest threshold of the fixed sequence whose every test, from the highest down, passed.

    ``confidence`` is the judge's confidence per calibration item (NaN: none, never kept), ``agree`` whether its
    verdict equals the human consensus. Keeping items with confidence >= the threshold, agreement on the kept
    items is >= ``target`` with probability >= ``1 - risk`` (items exchangeable with the calibration items).
    """
    if not 0 < target < 1:
        raise ValueError(f"target agreement {target} is not between 0 and 1")
    if not 0 < risk <= 0.5:
        raise ValueError(f"risk {risk} is not in (0, 0.5]")
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(agree, dtype=bool)
    if conf.shape != ok.shape:
        raise ValueError("confidence and agree must be aligned, one entry per item")
    has = ~np.isnan(conf)
    # a set smaller than the start size starts (and ends) by keeping every item: still fixed before the labels
    start = max(1, min(start_size(target, risk), int(has.sum())))
    grid = threshold_grid(conf[has], min_kept=start, steps=steps)
    tested: list[SelectiveStep] = []
    chosen: SelectiveStep | None = None
    for t in grid:
        kept = has & (conf >= t)
        n, k = int(kept.sum()), int((kept & ok).sum())
        lb = clopper_pearson_lower(k, n, risk)
        step = SelectiveStep(t, n, k, lb, lb >= target)
        tested.append(step)
        if not step.passed:
            break
        chosen = step
    if chosen is None:
        return ThresholdChoice(None, target, risk, len(conf), 0, 0, None, tuple(tested), start)
    return ThresholdChoice(chosen.threshold, target, risk, len(conf), chosen.n_kept, chosen.n_agree,
                           chosen.lower_bound, tuple(tested), start)
