"""Simulated labeling paths: sums along an order of labeling at each look, the look at which a rule decides, and the
predictive range of those looks over the paths.

A lead labels in batches and reads the gate after each: a *look* comes after 5 more items, or 5% of the items
labeled so far when that is more (:func:`looks`). On each path the future items come in some order (random, or the
active queue's); :class:`LookSums` adds up any per-item quantity over the items labeled by each look, per stratum
of weights when the estimates are weighted (the active queue's inverse inclusion probabilities). A check counts as
decided at the first look whose state is decided (:func:`first_decided`); :func:`predictive_range` reads the median
and the 80% range of those looks over the paths, with the paths that never decided within the simulated horizon
counted as needing more than it.

How many paths: the share of plausible futures that the range between the 10% and the 90% sample quantiles of N
paths holds is itself uncertain, with standard deviation ``sqrt(0.8 * 0.2 / N)`` (the mass between two order
statistics is Beta-distributed): 0.028 at 200 paths, 0.02 at 400. :data:`PATHS` is 400.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats.planning import OPEN

#: Paths a plan simulates: its 80% range holds 80% +/- 2% of the predictive distribution (one standard deviation).
PATHS = 400
#: The central share of the predictive distribution a range gives.
RANGE_LEVEL = 0.8
#: A look comes after this many more items, or this share of the items labeled so far when that is more.
BATCH_ITEMS, BATCH_SHARE = 5, 0.05


def looks(n_start: int, n_rest: int, *, batch: int = BATCH_ITEMS, share: float = BATCH_SHARE) -> np.ndarray:
    """Future items labeled by each look, from ``n_start`` labeled items on, until ``n_rest`` more are.

    >>> looks(60, 20).tolist(), looks(200, 25).tolist()
    ([5, 10, 15, 20], [10, 21, 25])
    """
    out, k = [], 0
    while k < n_rest:
        k = min(n_rest, k + max(batch, math.ceil(share * (n_start + k))))
        out.append(k)
    return np.asarray(out, dtype=np.int64)


def random_positions(paths: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``(paths, n)``: each item's place in an independent random order on every path."""
    order = rng.permuted(np.broadcast_to(np.arange(n), (paths, n)), axis=1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.broadcast_to(np.arange(n), (paths, n)), axis=1)
    return position


class LookSums:
    """Sums of per-item quantities over the items labeled by each look, on every path, per weight stratum.

    ``position`` is each future item's place in its path's order (``(paths, F)``, or ``(F,)`` for one order on
    every path); ``marks`` the looks (:func:`looks`): look 0 is now (no future item), look ``t`` holds the items at
    positions below ``marks[t - 1]``. ``stratum`` (``(F,)``, codes ``0 .. strata - 1``) splits the sums so that
    weights that change from look to look can be applied after (:meth:`weighted`).

    >>> s = LookSums(np.array([[1, 0, 2]]), np.array([1, 3]))
    >>> s.add(np.array([[10.0, 20.0, 30.0]]))[0, :, 0].tolist()  # now, after the first item (20), after all three
    [0.0, 20.0, 60.0]
    """

    def __init__(self, position: np.ndarray, marks: np.ndarray, stratum: np.ndarray | None = None,
                 strata: int = 1) -> None:
        position = np.asarray(position)
        self.paths = position.shape[0] if position.ndim == 2 else 1
        self.n_future = position.shape[-1]
        self.looks = len(marks) + 1
        self.strata = strata
        # the first look that holds the item at each position, looked up (a table of F entries, not a search each)
        places = int(position.max()) + 1 if position.size else 0
        table = np.searchsorted(np.asarray(marks), np.arange(places), side="right") + 1
        segment = np.broadcast_to(table[position], (self.paths, self.n_future))
        group = np.zeros(self.n_future, dtype=np.int64) if stratum is None else np.asarray(stratum, dtype=np.int64)
        self._key = ((np.arange(self.paths)[:, None] * self.looks + segment) * strata + group[None, :]).ravel()

    def add(self, values: Any) -> np.ndarray:
        """``(paths, looks, strata)``: the sums of ``values`` (``(paths, F)`` or ``(F,)``) by each look."""
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), (self.paths, self.n_future)).ravel()
        size = self.paths * self.looks * self.strata
        sums = np.bincount(self._key, weights=values, minlength=size).reshape(self.paths, self.looks, self.strata)
        return np.cumsum(sums, axis=1)

    @staticmethod
    def weighted(sums: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        """``(paths, looks)``: per-stratum sums weighted by ``weights`` (``(looks, strata)``; None: all ones)."""
        return sums.sum(axis=2) if weights is None else np.einsum("pts,ts->pt", sums, weights)


def first_decided(states: np.ndarray, *, start: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(look, state) of each path's first decided look from ``start`` on; a path never decided gets the look
    count (one past the last) and ``OPEN``.

    >>> look, state = first_decided(np.array([[-1, -1, 1, 0], [-1, -1, -1, -1]]))
    >>> look.tolist(), state.tolist()
    ([2, 4], [1, -1])
    """
    states = np.asarray(states)
    decided = states[:, start:] != OPEN
    any_ = decided.any(axis=1)
    look = np.where(any_, decided.argmax(axis=1) + start, states.shape[1])
    state = np.where(any_, states[np.arange(len(states)), np.minimum(look, states.shape[1] - 1)], OPEN)
    return look.astype(np.int64), state.astype(np.int8)


@dataclass(frozen=True)
class Range:
    """A predictive range: the median and the 80% range of a count over the simulated paths. ``high`` (and the
    others) None: beyond the simulated horizon, i.e. more than ``horizon``."""

    median: float | None
    low: float | None
    high: float | None
    horizon: float | None = None

    def to_json(self) -> dict[str, float | None]:
        return {"median": self.median, "low": self.low, "high": self.high}


def predictive_range(values: Any, *, beyond: Any = None, horizon: float | None = None,
                     level: float = RANGE_LEVEL, weights: Any = None) -> Range:
    """The median and the central ``level`` range of ``values`` over the paths, each path of weight ``weights``
    (default equal); a path marked ``beyond`` (never decided within the simulated horizon) counts as larger than any
    value, and a quantile that falls among such paths is None (more than ``horizon``). Quantiles are sample values:
    the smallest value whose weighted share of paths at or below it reaches the quantile.

    >>> predictive_range([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).to_json()
    {'median': 5.0, 'low': 1.0, 'high': 9.0}
    >>> predictive_range([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], beyond=[False] * 8 + [True] * 2).high is None
    True
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return Range(None, None, None, horizon)
    if beyond is not None:
        x = np.where(np.asarray(beyond, dtype=bool), np.inf, x)
    tail = (1 - level) / 2
    w = np.ones(x.size) if weights is None else np.asarray(weights, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    share = np.cumsum(w[order]) / w.sum()
    at = np.minimum(np.searchsorted(share, np.array([0.5, tail, 1 - tail]) - 1e-12, side="left"), x.size - 1)
    median, low, high = (float(q) if np.isfinite(q) else None for q in x[order][at])
    return Range(median, low, high, horizon)
