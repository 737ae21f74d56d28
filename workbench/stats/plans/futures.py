"""Plausible futures of a golden set: the human labels of the items not labeled yet, drawn from the labels so far.

The model is the posterior predictive of a Dirichlet process over task clusters, the same posterior the
self-preference and per-category intervals use (:mod:`workbench.stats.intervals.posterior`), here conditioned on
what is known of a future item before anyone labels it: the judge's score, and the stratum it falls in (its
producer's group and its category). A future item takes the human labels of a labeled *donor* item, all of them
(so the raters' overlap, their disagreements and items without a consensus come as they came), drawn as follows
on each path:

* every labeled task cluster gets a Dirichlet(1, ..., 1) weight (Rubin's 1981 Bayesian bootstrap of clusters), the
  same weight in every stratum: a path is one draw of the judge-human joint distribution, and a cluster the
  judge gets wrong weighs on all its items at once;
* the strata are nested, finest first (score, group and category; score and group; score): in its finest stratum a
  future item keeps to the donors there with probability ``M / (M + B)``, ``M`` the stratum's summed weight and
  ``B ~ Gamma(alpha)`` the mass of the coarser stratum (a Dirichlet process whose base measure is the coarser
  stratum's predictive, as in the hierarchical Dirichlet process of Teh, Jordan, Beal and Blei 2006), and else
  goes one stratum coarser; below the coarsest (the judge's score alone) the base measure is the prior: a human
  value drawn uniformly from the scale, every rater agreeing, with a concentration of ``prior_items`` items;
* within the stratum it keeps to, the donor is drawn with probability proportional to its cluster's weight.

So a stratum with many labels predicts from them, one with a few leans on the coarser one, and a judge's score
that no labeled item has gets the prior; every path's future differs in its joint distribution (the parameters)
and in its draws (the sampling), which is what a predictive range needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats.intervals.posterior import PRIOR_ITEMS

#: Prior weight, in items, of the coarser stratum inside a finer one: what ``stats.planning``'s
#: ``human_given_judge_by_group`` gives the pooled estimate inside a producer group (5 labels a score).
STRATUM_WEIGHT = 5.0


@dataclass(frozen=True)
class Donors:
    """Each future item's human labels on each path: the labeled item they come from (``-1``: from the prior),
    and for a prior draw the scale position every rater gives it (``-1`` elsewhere)."""

    index: np.ndarray        # (paths, F) int32: position among the labeled items, or -1
    prior_value: np.ndarray  # (paths, F) int8: scale position of a prior draw, or -1

    @property
    def paths(self) -> int:
        return int(self.index.shape[0])


def _joint_codes(labeled: Any, future: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes of the strata of labeled and future items, on one shared coding."""
    labeled, future = np.asarray(labeled), np.asarray(future)
    keys = np.concatenate([labeled.astype(str), future.astype(str)])
    _, codes = np.unique(keys, return_inverse=True)
    codes = codes.astype(np.int64)
    return codes[:len(labeled)], codes[len(labeled):], int(codes.max()) + 1 if codes.size else 0


def draw_donors(strata_labeled: Sequence[Any], strata_future: Sequence[Any], clusters: Any, *, n_values: int,
                paths: int, seed: int, stratum_weight: float = STRATUM_WEIGHT,
                prior_items: float = PRIOR_ITEMS) -> Donors:
    """Donors of the future items on ``paths`` plausible futures (see the module docstring).

    Parameters
    ----------
    strata_labeled, strata_future : sequences of arrays, finest stratum first
        Each labeled item's and each future item's stratum at every level (keys compared as text). The coarsest
        level should be the judge's score: below it lies the prior.
    clusters : array-like, one task id per labeled item
    n_values : int
        Points of the scale (the prior draws a position in ``0 .. n_values - 1``).
    paths, seed : int
    stratum_weight : float
        ``alpha`` of each level but the coarsest: the coarser stratum's prior weight in items.
    prior_items : float
        ``alpha`` of the coarsest level: the prior's weight in items (0: the Bayesian bootstrap alone).

    Examples
    --------
    >>> d = draw_donors([["fail", "fail", "pass"]], [["fail", "pass", "pass"]], ["a", "b", "c"], n_values=3,
    ...                 paths=2, seed=0, prior_items=0.0)
    >>> d.index.shape, bool((d.index[:, 1:] == 2).all()), bool(np.isin(d.index[:, 0], [0, 1]).all())
    ((2, 3), True, True)
    """
    if len(strata_labeled) != len(strata_future) or not strata_labeled:
        raise ValueError("give the labeled and the future items' strata at the same levels, finest first")
    rng = np.random.default_rng(seed)
    _, cluster = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    n_future = len(np.asarray(strata_future[0]))
    weight = rng.standard_gamma(1.0, size=(paths, int(cluster.max()) + 1 if cluster.size else 0))[:, cluster]
    levels = len(strata_labeled)
    # one uniform a (path, item) picks its level: level l with probability (prod_{j < l} (1 - stay_j)) stay_l
    u = rng.random((paths, n_future))
    level = np.full((paths, n_future), levels, dtype=np.int8)  # `levels`: the prior
    below = np.zeros((paths, n_future))                          # probability of the finer levels
    left = np.ones((paths, n_future))                            # probability of not stopping at them
    strata = []
    for depth, (lab, fut) in enumerate(zip(strata_labeled, strata_future)):
        stratum = _Strata(*_joint_codes(lab, fut), weight)
        strata.append(stratum)
        alpha = prior_items if depth == levels - 1 else stratum_weight
        mass = stratum.mass
        base = rng.standard_gamma(alpha, size=mass.shape) if alpha > 0 else np.zeros_like(mass)
        with np.errstate(invalid="ignore", divide="ignore"):
            stay = np.where(mass > 0, mass / (mass + base), 0.0)[:, stratum.future]
        upto = below + left * stay
        level = np.where((level == levels) & (u < upto), depth, level).astype(np.int8)
        below, left = upto, left * (1 - stay)
    index = np.full((paths, n_future), -1, dtype=np.int32)
    for depth, stratum in enumerate(strata):
        rows, cols = np.nonzero(level == depth)
        if rows.size:
            index[rows, cols] = stratum.pick(rows, cols, rng)
    prior = np.where(index < 0, rng.integers(0, n_values, size=index.shape), -1).astype(np.int8)
    return Donors(index, prior)


class _Strata:
    """The labeled items of one level laid out by stratum, with every path's cumulative weights: each stratum's
    mass, and a weighted draw within a stratum by one ``searchsorted`` over all paths' rows laid end to end."""

    def __init__(self, labeled: np.ndarray, future: np.ndarray, n_strata: int, weight: np.ndarray) -> None:
        self.future = future
        self.order = np.argsort(labeled, kind="stable")
        sorted_codes = labeled[self.order]
        self.start = np.searchsorted(sorted_codes, np.arange(n_strata), side="left")
        self.end = np.searchsorted(sorted_codes, np.arange(n_strata), side="right")
        cumulative = np.cumsum(weight[:, self.order], axis=1)
        padded = np.concatenate([np.zeros((len(weight), 1)), cumulative], axis=1)
        self.before = padded[:, self.start]                          # (paths, strata)
        self.mass = padded[:, self.end] - self.before
        self.offset = np.concatenate([[0.0], np.cumsum(cumulative[:, -1] + 1.0)[:-1]])  # rows laid end to end
        self.line = (cumulative + self.offset[:, None]).ravel()
        self.width = cumulative.shape[1]

    def pick(self, rows: np.ndarray, cols: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = self.future[cols]
        target = self.before[rows, s] + rng.random(len(rows)) * self.mass[rows, s] + self.offset[rows]
        at = np.searchsorted(self.line, target, side="right") - rows * self.width
        at = np.clip(at, self.start[s], self.end[s] - 1)
        return self.order[at]


