"""The plan is read because a check is undecided: the futures reweighed for that selection.

A check is planned for only while its interval straddles its bound, and an estimate that does so sits, more often
than not, nearer the bound than the truth does: a truth well clear of the bound shows an undecided estimate only when
the sample fell short of it. The posterior of the labels so far ignores that the plan looks at it *because* it is
undecided, and on real data its futures would need 2.5-3 times the labels the checks really needed (the same bias
the plan's earlier point model corrected, benchmarks/plan_honesty.md). For a parameter that is fixed (a judge's true
TNR on the golden set's population) and an estimate selected by a data-dependent rule, the posterior adjusted for
the selection is the posterior times ``1 / P(selected | truth)`` (Yekutieli 2012, "Adjusted Bayesian inference for
selected parameters", JRSS-B 74(3); the conditional likelihood of Zhong and Prentice 2008 behind the old
correction): each simulated future is weighed by one over the probability that an estimate of its truth, with the
current standard error, would leave the check undecided, ``Phi(z_pass - d) - Phi(-z_fail - d)`` for a truth ``d``
standard errors above a lower bound (the band rule's for an effect within +/-t), capped so that no future weighs
more than :data:`MAX_WEIGHT` times the least.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.stats._common import special_functions

#: No future weighs more than this many times the least (a truth far from the bound is rarely undecided, and one
#: such future must not stand for all).
MAX_WEIGHT = 20.0


def undecided_below(truth: Any, bound: float, se: float, z_pass: float, z_fail: float) -> np.ndarray:
    """P(an estimate ~ N(truth, se^2) leaves a lower-bound check undecided): its 95% interval neither clears
    ``bound`` (``z >= z_pass``) nor lies wholly below it at the interim boundary (``z < -z_fail``).

    >>> round(float(undecided_below(0.5, 0.5, 0.1, 1.96, 3.29)), 3)  # on the bound: undecided but for its tails
    0.975
    """
    special = special_functions()
    d = (np.asarray(truth, dtype=np.float64) - bound) / se
    return np.clip(special.ndtr(z_pass - d) - special.ndtr(-z_fail - d), 0.0, 1.0)


def undecided_band(truth: Any, limit: float, se: float, z_pass: float, z_fail: float) -> np.ndarray:
    """P(an effect's estimate ~ N(truth, se^2) leaves the band check undecided): its 95% interval is not within
    ``+/-limit``, and its interim interval is not wholly beyond either side.

    >>> round(float(undecided_band(0.0, 0.1, 0.01, 1.96, 3.29)), 3)  # well inside: decided at once
    0.0
    """
    special = special_functions()
    e = np.asarray(truth, dtype=np.float64)
    inside = np.clip(special.ndtr((limit - z_pass * se - e) / se) - special.ndtr((-limit + z_pass * se - e) / se),
                     0.0, 1.0) if limit > z_pass * se else np.zeros_like(e)
    beyond = special.ndtr((e - limit - z_fail * se) / se) + special.ndtr((-limit - z_fail * se - e) / se)
    return np.clip(1.0 - inside - beyond, 0.0, 1.0)


def selection_weights(undecided: Any) -> np.ndarray:
    """``1 / P(undecided | truth)`` per future, capped at :data:`MAX_WEIGHT` times the smallest weight.

    >>> selection_weights([1.0, 0.5, 0.001]).tolist()
    [1.0, 2.0, 20.0]
    """
    p = np.asarray(undecided, dtype=np.float64)
    w = 1.0 / np.maximum(p, 1e-12)
    floor = float(w.min()) if w.size else 1.0
    return np.minimum(w, MAX_WEIGHT * floor)
