"""The thresholds of a cascade of judges, chosen jointly so that the cascade's combined verdicts agree with the
humans at least ``target`` of the time with probability at least ``1 - risk``, over the whole choice.

A configuration is one threshold per judge, or none (the judge is skipped and keeps nothing); an item is graded
by the first judge whose confidence on it reaches that judge's threshold, and abstained on when none does. The
family holds every combination of each judge's grid (:func:`stage_grid`, confidences only) and with them every
single judge alone, so choosing between a cascade and a judge alone is part of the one tested procedure.

The choice is Learn then Test (Angelopoulos, Bates, Candès, Jordan and Lei, arXiv:2110.01052, Annals of Applied
Statistics 19(2), 2025) with its order learned on a split of the calibration items, as Pareto Testing does
(Laufer-Goldshtein, Fisch, Barzilay and Jaakkola, "Efficiently Controlling Multiple Risks with Risk-Aware Pareto
Testing", ICLR 2023):

1. the calibration items are split at random (a fixed seed, labels unseen) into an *ordering* part
   (:data:`ORDER_SHARE`) and a *testing* part;
2. on the ordering part each judge's agreement is fitted as a non-decreasing function of its confidence
   (:func:`agreement_curve`), and a path through the family is learned from it (:func:`_path`): from every
   judge skipped, lower one judge's threshold at a time, each time the judge whose move gives the highest
   agreement those curves predict on the calibration items' confidences. The kept sets grow along it, nested,
   as a single judge's do from a high threshold to a low one;
3. on the testing part the path's configurations are tested in that fixed sequence, each null hypothesis "the
   cascade's agreement on the items it keeps is below the target" by the exact one-sided Clopper-Pearson bound at
   level ``1 - risk``, stopping at the first failure (Bauer 1991, Stat Med 10(6):871-890).

Because the order is fixed before the testing labels are looked at, the chance that any configuration that
passed is below the target is at most ``risk`` (fixed-sequence testing controls the family-wise error), so any
rule may then pick among those that passed: the highest coverage on all calibration items, a label-free number
(with costs, the cheapest within :data:`COVERAGE_SLACK` of it, never below the best single judge that passed).
The price is the ordering part: its labels order, they do not test.

Trust or Escalate (Jung, Brahman and Choi, ICLR 2025; github jaehunjung1/cascaded-selective-evaluation,
``cascaded_evaluation/cascaded_classifier.py`` and ``util.py``) calibrates the judges one after another, each on
the items the ones before it left, each at the full risk and each to the target on its own. Taken from it: the
routing rule (the first judge confident enough grades, else the next, else abstain) and the test of a threshold
from high to low by an exact binomial bound. Holding the *combined* verdicts to the target with one sequence for
the whole family is what lets a strong second judge add coverage where a per-judge guarantee on the leftover
(hard) items fails, and keeps the risk at ``risk`` for the cascade, not for each judge.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from workbench.stats.selective.fixed_sequence import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    min_kept_to_reach,
    start_size,
)

#: With costs, the pick may give up at most this much coverage (a share of the items) for a cheaper configuration.
COVERAGE_SLACK = 0.01
#: Share of the calibration items that orders the configurations (the rest tests them).
ORDER_SHARE = 0.2


def split(n: int, order_share: float = ORDER_SHARE, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ordering and testing parts of ``n`` calibration items (their indices, ascending): a random permutation
    by ``seed`` alone, never the labels.

    >>> [len(part) for part in split(10, 0.2)]
    [2, 8]
    """
    perm = np.random.default_rng(seed).permutation(n)
    n_order = round(order_share * n)
    return np.sort(perm[:n_order]), np.sort(perm[n_order:])


def stage_grid(confidence: np.ndarray, *, steps: int) -> np.ndarray:
    """One judge's thresholds from high to low: its distinct confidence values, at most ``steps`` of them spread
    evenly over the items they keep. Confidences only (NaN: none), never labels.

    >>> stage_grid(np.array([0.2, 0.9, 0.9, 0.5, np.nan]), steps=5).tolist()
    [0.9, 0.5, 0.2]
    """
    conf = np.asarray(confidence, dtype=float)
    ascending = np.sort(conf[~np.isnan(conf)])
    values = np.unique(ascending)[::-1]
    if len(values) <= steps:
        return values
    kept = len(ascending) - np.searchsorted(ascending, values, side="left")
    wanted = np.linspace(kept[0], kept[-1], steps)
    chosen = sorted({min(int(np.searchsorted(kept, w, side="left")), len(values) - 1) for w in wanted})
    return values[chosen]


def route(confidence: np.ndarray, thresholds: tuple[float | None, ...]) -> np.ndarray:
    """Which judge grades each item: the index of the first judge whose confidence reaches its threshold (None:
    the judge is skipped), -1 when none does (abstained).

    >>> route(np.array([[0.9, 0.1], [0.2, 0.8], [0.1, 0.1]]), (0.5, 0.6)).tolist()
    [0, 1, -1]
    """
    conf = np.asarray(confidence, dtype=float)
    stage = np.full(len(conf), -1)
    for j, t in enumerate(thresholds):
        if t is None:
            continue
        take = (stage < 0) & ~np.isnan(conf[:, j]) & (conf[:, j] >= t)
        stage[take] = j
    return stage


@dataclass(frozen=True)
class CascadeStep:
    """One test of the sequence: a configuration, the testing items it keeps and agrees on, and the bound."""

    thresholds: tuple[float | None, ...]
    n_kept: int
    n_agree: int
    lower_bound: float
    passed: bool


@dataclass(frozen=True)
class CascadeChoice:
    """The configuration chosen (``thresholds`` None: none passed) and the sequence tested.

    Counts without a prefix are on all calibration items (descriptive: coverage, agreement, each judge's share);
    ``n_test_kept``, ``n_test_agree`` and ``lower_bound`` are the chosen configuration's test, the guarantee.
    """

    thresholds: tuple[float | None, ...] | None
    target: float
    risk: float
    n_calibration: int
    n_order: int
    n_test: int
    n_candidates: int  # configurations in the family
    n_path: int  # configurations on the path the ordering part learned
    steps: tuple[CascadeStep, ...]
    n_kept: int = 0
    n_agree: int = 0
    n_test_kept: int = 0
    n_test_agree: int = 0
    lower_bound: float | None = None
    graded_by: tuple[int, ...] = ()  # items each judge grades (all calibration items)
    agree_by: tuple[int, ...] = ()  # of which agree
    reached_by: tuple[int, ...] = ()  # items each judge is run on (0 for a skipped judge)
    cost_per_item: float | None = None
    best_single: tuple[int, float, float] | None = None  # (judge, threshold, coverage) of the best single passed
    passed: tuple[tuple[float | None, ...], ...] = field(default=(), compare=False)

    @property
    def guaranteed(self) -> bool:
        return self.thresholds is not None

    @property
    def coverage(self) -> float:
        return self.n_kept / self.n_calibration if self.n_calibration else 0.0

    @property
    def agreement(self) -> float | None:
        return self.n_agree / self.n_kept if self.n_kept else None

    @property
    def single_judge(self) -> int | None:
        """The judge the choice leaves alone (every other skipped), else None: no cascade beat it."""
        if self.thresholds is None:
            return None
        active = [j for j, t in enumerate(self.thresholds) if t is not None]
        return active[0] if len(active) == 1 else None

    def interval(self) -> tuple[float, float] | None:
        """The agreement's exact Clopper-Pearson interval on the testing items kept: the guarantee's lower bound
        (one-sided at ``1 - risk``) and the upper bound at the same level, a ``1 - 2 risk`` interval."""
        if not self.n_test_kept:
            return None
        return (clopper_pearson_lower(self.n_test_agree, self.n_test_kept, self.risk),
                clopper_pearson_upper(self.n_test_agree, self.n_test_kept, self.risk))

    def more_labels(self) -> tuple[int, int | None]:
        """(at least, about) how many more labeled items a guarantee needs when nothing passed: the items on which
        even perfect agreement (at least) or the ordering part's agreement on the first configuration tested (about)
        would clear the target, divided by the share of the calibration items that configuration's test keeps."""
        if not self.steps:  # the testing part was too small to test anything
            share, seen = self.n_test / max(self.n_calibration, 1), None
        else:
            first = self.steps[0]
            share = max(first.n_kept, 1) / self.n_calibration
            seen = first.n_agree / first.n_kept if first.n_kept else None
        floor = int(np.ceil(min_kept_to_reach(self.target, self.risk) / share))
        needed = (min_kept_to_reach(self.target, self.risk, seen) if seen is not None else
                  min_kept_to_reach(self.target, self.risk, (1 + self.target) / 2))
        about = None if needed is None else max(int(np.ceil(needed / share)) - self.n_calibration, 1)
        return max(floor - self.n_calibration, 1), about


def _ranks(confidence: np.ndarray, grids: list[np.ndarray]) -> np.ndarray:
    """(items, judges): the index of the first (highest) threshold of each judge's grid that the item's confidence
    reaches; the grid's length where none does (no confidence, or below the lowest). A judge at grid index g keeps
    the items whose rank is at most g; at index len(grid) it is skipped and keeps nothing."""
    out = np.empty(confidence.shape, dtype=int)
    for j, grid in enumerate(grids):
        c = confidence[:, j]
        out[:, j] = np.where(np.isnan(c), len(grid), np.searchsorted(-np.asarray(grid), -np.nan_to_num(c, nan=-1.0),
                                                                     side="left"))
    return out


def _along(t: np.ndarray, axis: int, *, kept: bool | None) -> np.ndarray:
    """``t`` indexed on ``axis`` by rank turned into one indexed by grid index: with ``kept`` the items that judge
    keeps there (rank <= index; none when skipped), with ``kept`` False those it does not keep (rank > index; all
    when skipped), with None all items when it is run and none when skipped."""
    total = t.sum(axis=axis, keepdims=True)
    if kept:
        out = np.cumsum(t, axis=axis)
    elif kept is None:
        out = np.repeat(total, t.shape[axis], axis=axis)
    else:
        out = total - np.cumsum(t, axis=axis)
    last = [slice(None)] * t.ndim
    last[axis] = slice(-1, None)
    out[tuple(last)] = total if kept is False else 0.0
    return out


def _graded(hist: np.ndarray, j: int, *, reached: bool = False) -> np.ndarray:
    """For every configuration: the histogram's weight of the items judge j grades (left by the judges before it,
    kept by it), or with ``reached`` of those it is run on (left by the judges before it, when it is not skipped)."""
    t = hist
    for axis in range(j + 1, hist.ndim):
        t = t.sum(axis=axis, keepdims=True)  # the judges after j do not matter
    t = _along(t, j, kept=None if reached else True)
    for axis in range(j):
        t = _along(t, axis, kept=False)
    return np.broadcast_to(t, hist.shape)


def _counts(ranks: np.ndarray, sizes: tuple[int, ...], agree: np.ndarray,
            rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """For every configuration (one grid index per judge, each judge's last index skipped), on the items ``rows``:
    items kept, the weight of ``agree`` on them (whether, or how likely, the judge grading each agrees), and per
    judge the items it grades, its weight on them, and the items it is run on. Sums over a histogram of the items'
    ranks, so the cost is one pass over the items and a few over the configurations."""
    cells = np.ravel_multi_index(ranks[rows].T, sizes)
    count = np.bincount(cells, minlength=int(np.prod(sizes))).reshape(sizes).astype(float)
    graded, agreeing, reached = [], [], []
    for j in range(len(sizes)):
        hits = np.bincount(cells, weights=np.asarray(agree, dtype=float)[rows, j],
                           minlength=int(np.prod(sizes))).reshape(sizes)
        graded.append(_graded(count, j))
        agreeing.append(_graded(hits, j))
        reached.append(_graded(count, j, reached=True))
    graded, agreeing = np.stack(graded), np.stack(agreeing)
    return graded.sum(0), agreeing.sum(0), graded, agreeing, np.stack(reached)


def agreement_curve(confidence: np.ndarray, agree: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A judge's agreement as a non-decreasing function of its confidence, fitted on the given items: at each
    distinct confidence, Jeffreys' (k + 1/2) / (n + 1), then isotonic regression weighted by the items there (pool
    adjacent violators). Returns the confidences (ascending) and the fitted agreement at each; NaN confidences are
    left out.

    >>> c, v = agreement_curve(np.array([0.2, 0.2, 0.9, 0.9]), np.array([True, False, True, True]))
    >>> c.tolist(), np.round(v, 3).tolist()
    ([0.2, 0.9], [0.5, 0.833])
    """
    from scipy.optimize import isotonic_regression

    conf = np.asarray(confidence, dtype=float)
    has = ~np.isnan(conf)
    values, inverse = np.unique(conf[has], return_inverse=True)
    if not len(values):
        return values, values
    n = np.bincount(inverse, minlength=len(values)).astype(float)
    k = np.bincount(inverse, weights=np.asarray(agree, dtype=float)[has], minlength=len(values))
    return values, isotonic_regression((k + 0.5) / (n + 1), weights=n, increasing=True).x


def _expected_agreement(confidence: np.ndarray, agree: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(items, judges): each judge's agreement on each item as its curve on ``rows`` predicts it from the item's
    confidence (the step of the highest fitted confidence at or below it; 0 where it has none)."""
    out = np.zeros(confidence.shape)
    for j in range(confidence.shape[1]):
        values, fitted = agreement_curve(confidence[rows, j], agree[rows, j])
        c = confidence[:, j]
        if not len(values):
            continue
        at = np.clip(np.searchsorted(values, c, side="right") - 1, 0, len(values) - 1)
        out[:, j] = np.where(np.isnan(c), 0.0, fitted[at])
    return out


def _path(kept: np.ndarray, expected: np.ndarray) -> list[tuple[int, ...]]:
    """The order in which configurations are tested: from every judge skipped, each step lowers one judge's
    threshold by one place of its grid (a skipped judge starts at its highest), choosing the move whose
    configuration has the highest expected agreement (``expected`` / ``kept``, per configuration; ties: the one that
    keeps more). Lowering a threshold only adds kept items, so the kept sets grow along the path, nested as a single
    judge's are from a high threshold to a low one."""
    size = kept.shape
    at = [s - 1 for s in size]  # the last index of each judge's axis: skipped
    path = []
    while True:
        moves = []
        for j, s in enumerate(size):
            if at[j] == s - 2 or s == 1:
                continue  # at its lowest threshold already, or it has no confidence to keep anything by
            step = list(at)
            step[j] = 0 if at[j] == s - 1 else at[j] + 1
            c = tuple(step)
            # rounded: sums of the same weights in another order must not break a tie differently
            moves.append((round(float(expected[c] / max(kept[c], 1e-12)), 9), kept[c], -j, c))
        if not moves:
            return path
        at = list(max(moves)[3])
        path.append(tuple(at))


def choose_cascade(confidence: np.ndarray, agree: np.ndarray, *, target: float, risk: float,
                   cost: np.ndarray | None = None, order_share: float = ORDER_SHARE, seed: int = 0,
                   order: np.ndarray | None = None, grid_steps: int | None = None) -> CascadeChoice:
    """The cascade configuration of highest coverage among those the fixed sequence passed (module docstring).

    ``confidence`` is (items, judges): each judge's confidence per calibration item (NaN: none, never kept),
    ``agree`` the same shape: whether that judge's verdict equals the human consensus. ``cost`` (one per judge,
    per item judged) makes the pick the cheapest within :data:`COVERAGE_SLACK` of the highest coverage. ``order``
    (a boolean per item) names the ordering part instead of :func:`split`'s random one (``order_share``, ``seed``).
    Keeping
    the items the chosen configuration keeps, agreement there is >= ``target`` with probability >= ``1 - risk``
    (items exchangeable with the calibration items).
    """
    if not 0 < target < 1:
        raise ValueError(f"target agreement {target} is not between 0 and 1")
    if not 0 < risk <= 0.5:
        raise ValueError(f"risk {risk} is not in (0, 0.5]")
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(agree, dtype=bool)
    if conf.ndim != 2 or conf.shape != ok.shape:
        raise ValueError("confidence and agree must be aligned, items by judges")
    n, k = conf.shape
    if cost is not None and len(cost) != k:
        raise ValueError("one cost per judge")
    grid_steps = grid_steps or (20 if k <= 2 else 12)
    grids = [stage_grid(conf[:, j], steps=grid_steps) for j in range(k)]
    ranks, sizes = _ranks(conf, grids), tuple(len(g) + 1 for g in grids)  # each judge's last index: skipped
    if order is None:
        order_rows, test_rows = split(n, order_share, seed)
    else:
        order_rows, test_rows = np.flatnonzero(order), np.flatnonzero(~np.asarray(order, dtype=bool))
    n_order, all_rows = len(order_rows), np.arange(n)
    kept_all, agree_all, graded, agreeing, reached = _counts(ranks, sizes, ok, all_rows)
    kept_t, agree_t, *_ = _counts(ranks, sizes, ok, test_rows)
    # the ordering part's labels fit each judge's agreement curve; the path follows the agreement those curves
    # predict on every calibration item from its confidences (pooled over items, not counted per configuration,
    # so a fifth of the labels suffice to see which judge to trust where)
    _, expected, *_ = _counts(ranks, sizes, _expected_agreement(conf, ok, order_rows), all_rows)
    shape = kept_all.shape
    some = np.ones(shape, bool)
    some[(-1,) * k] = False  # every judge skipped keeps nothing: not a configuration
    coverage = kept_all / n
    spend = (np.tensordot(np.asarray(cost, float), reached, axes=(0, 0)) / n) if cost is not None else None
    # as a single judge's sequence does, it starts where the testing part keeps enough items that a miss or two
    # still pass (a number fixed by the target, the risk and the confidences, never the labels)
    start = max(1, min(start_size(target, risk), len(test_rows)))
    path = _path(kept_all, expected)
    chain = [c for c in path if kept_t[c] >= start]

    def thresholds(c: tuple[int, ...]) -> tuple[float | None, ...]:
        return tuple(None if g == len(grids[j]) else float(grids[j][g]) for j, g in enumerate(c))

    tested, passed = [], []
    for c in chain:
        nk, na = int(kept_t[c]), int(agree_t[c])
        lb = clopper_pearson_lower(na, nk, risk)
        tested.append(CascadeStep(thresholds(c), nk, na, lb, lb >= target))
        if lb < target:
            break
        passed.append(c)
    base = {"target": target, "risk": risk, "n_calibration": n, "n_order": n_order, "n_test": n - n_order,
            "n_candidates": int(some.sum()), "n_path": len(path), "steps": tuple(tested)}
    if not passed:
        return CascadeChoice(None, **base)
    cov = [float(coverage[c]) for c in passed]
    singles = [(c, v) for c, v in zip(passed, cov) if sum(t is not None for t in thresholds(c)) == 1]
    best_single = max(singles, key=lambda p: p[1]) if singles else None
    floor_cov = max(max(cov) - (COVERAGE_SLACK if spend is not None else 0.0),
                    best_single[1] if best_single else 0.0)
    allowed = [c for c, v in zip(passed, cov) if v >= floor_cov - 1e-12]
    at = min(allowed, key=lambda c: ((spend[c] if spend is not None else 0.0), -coverage[c],
                                     sum(t is not None for t in thresholds(c))))
    single = None
    if best_single is not None:
        ts = thresholds(best_single[0])
        j = next(j for j, t in enumerate(ts) if t is not None)
        single = (j, ts[j], float(best_single[1]))
    return CascadeChoice(
        thresholds(at), **base, n_kept=int(kept_all[at]), n_agree=int(agree_all[at]),
        n_test_kept=int(kept_t[at]), n_test_agree=int(agree_t[at]),
        lower_bound=clopper_pearson_lower(int(agree_t[at]), int(kept_t[at]), risk),
        graded_by=tuple(int(graded[(j,) + at]) for j in range(k)),
        agree_by=tuple(int(agreeing[(j,) + at]) for j in range(k)),
        reached_by=tuple(int(reached[(j,) + at]) for j in range(k)),
        cost_per_item=None if spend is None else float(spend[at]), best_single=single,
        passed=tuple(thresholds(c) for c in passed))


def all_configurations(grids: list[np.ndarray]) -> list[tuple[float | None, ...]]:
    """Every configuration of the family, for checks by enumeration: each judge's grid or skipped, not all
    skipped."""
    options = [[float(t) for t in g] + [None] for g in grids]
    return [c for c in itertools.product(*options) if any(t is not None for t in c)]
