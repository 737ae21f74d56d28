"""A reviewer's agreement with the others over time, watched by the monitoring's validity test.

Each of the reviewer's compared labels, in the order they were given, becomes a per-label agreement ``x = 1 -
w(label, consensus of the others)`` on the weights of the bound's metric (quadratic for ordinal alpha), and the
bound on alpha becomes a floor on the mean of x with the chance disagreement of a reference confusion matrix (all
reviewers against their leave-one-out consensus) held fixed: :mod:`workbench.stats.monitoring.validity`. The
mixture-of-memories test by betting of that module then asks, after every label, whether the reviewer's agreement
has fallen below the bound; it may be read after every label, forever, with a false alarm at most with probability
``alpha``, and its short memories catch a reviewer good for months and careless since last week.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats.monitoring.validity import agreement_scale, betting_test


@dataclass(slots=True)
class AgreementOverTime:
    """The validity test on one reviewer's labels in the order given: ``alarm_at`` is the 0-based position (among
    the compared labels) at which the evidence against ``agreement >= bound`` reached 1/alpha (None: never)."""

    n_labels: int
    floor: float  # the mean per-label agreement the bound corresponds to
    alarm_at: int | None
    wealth: float  # the test's evidence after the last label (alarm at 1 / alpha)
    alpha: float
    recent_agreement: float | None  # mean per-label agreement over the last memory the test found most telling

    @property
    def alarm(self) -> bool:
        return self.alarm_at is not None


def agreement_over_time(scores: Any, loo_consensus: Any, reference_confusion: Any, *, scale: Any, bound: float,
                        metric: str = "krippendorff_alpha_ordinal", alpha: float = 0.05) -> AgreementOverTime:
    """The validity alarm's test on a reviewer's labels against the others' consensus, in the order given.

    Parameters
    ----------
    scores, loo_consensus : array-like of int
        The reviewer's labels in the order they were given and the consensus of the others on each item (None or
        NaN: no consensus; left out).
    reference_confusion : array-like, K x K
        Counts of (consensus, label) pairs over all reviewers: the chance disagreement the floor is read with.
    scale : sequence of int
        Scale values, lowest first.
    bound : float
        The bound on ``metric`` (the raters report's ``min_rater_agreement``).

    Examples
    --------
    >>> good = [1, 0, -1, 0] * 30
    >>> ref = [[30, 0, 0], [0, 60, 0], [0, 0, 30]]
    >>> agreement_over_time(good, good, ref, scale=(-1, 0, 1), bound=0.667).alarm
    False
    >>> careless = good[:60] + [1, -1, 1, 1] * 15
    >>> agreement_over_time(careless, good, ref, scale=(-1, 0, 1), bound=0.667).alarm_at is not None
    True
    """
    s = np.asarray(scores, dtype=float)
    c = np.asarray([np.nan if v is None else v for v in loo_consensus], dtype=float)
    if s.shape != c.shape:
        raise ValueError(f"scores and loo_consensus must have the same length, got {s.size} and {c.size}")
    keep = np.isfinite(c) & np.isfinite(s)
    ref = agreement_scale(reference_confusion, scale, metric=metric, bound=bound)
    x = ref.agreement(s[keep], c[keep])
    test = betting_test(x, ref.floor, alpha=alpha, levels=ref.levels)
    n = int(x.size)
    recent = None
    if n:
        memory = test.leading_memory(n)
        recent = float(ref.as_metric(float(x[-memory:].mean())))
    wealth = float(test.wealth[-1]) if n else 1.0
    return AgreementOverTime(n, ref.floor, test.crossed_at, wealth, alpha, recent)
