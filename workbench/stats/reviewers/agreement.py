"""One reviewer against the consensus of the other reviewers: agreement, and fails compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.stats._common import (
    check_bootstrap_options,
    check_pass_threshold,
    check_scale,
    cluster_codes,
)
from workbench.stats.intervals.bootstrap import (
    agreement_with_intervals,
    percentile_interval,
    resample_sums,
)
from workbench.stats.intervals.records import MetricInterval

NOT_COMPARED = ("no item of this reviewer has a consensus of the others (each needs another label, or an "
                "adjudication)")


@dataclass(slots=True)
class ReviewerAgreement:
    """One reviewer against the leave-one-out consensus: ``n_items`` compared, and the metrics with intervals."""

    n_items: int
    exact_agreement: MetricInterval
    krippendorff_alpha_ordinal: MetricInterval
    reasons: dict[str, str] = field(default_factory=dict)  # {metric: why it is NaN or its interval is}


@dataclass(slots=True)
class FailShareDifference:
    """A reviewer's share of fails minus the other reviewers' share on the same ``n_items`` items."""

    n_items: int
    reviewer_share: float
    others_share: float
    difference: MetricInterval


def reviewer_agreement(scores: Any, loo_consensus: Any, clusters: Any = None, *, scale: Any, pass_threshold: int,
                       resamples: int = 2000, seed: int = 0, level: float = 0.95) -> ReviewerAgreement:
    """Exact agreement and ordinal alpha of a reviewer's labels with the consensus of the others, with intervals.

    Parameters
    ----------
    scores, loo_consensus : array-like of int, shape (n_items,)
        The reviewer's label and the other reviewers' consensus of each item (None or NaN: no consensus; the
        item is left out).
    clusters : array-like, shape (n_items,), or None
        The task id of each item (items of one task are resampled together); None: each item its own.
    scale : sequence of int
        Scale values, lowest first.
    pass_threshold : int
        Lowest passing value.
    resamples, seed, level
        The bootstrap's resamples and seed, and the intervals' level.

    Returns
    -------
    ReviewerAgreement
        ``krippendorff_alpha_ordinal`` is ``krippendorff.alpha(reliability_data=[loo_consensus, scores],
        level_of_measurement="ordinal", value_domain=scale)`` on the compared items.

    Examples
    --------
    >>> r = reviewer_agreement([1, 0, -1, 1] * 10, [1, 0, -1, 0] * 10, scale=(-1, 0, 1), pass_threshold=0,
    ...                        resamples=200)
    >>> r.n_items, r.exact_agreement.value, r.exact_agreement.ci_low < 0.75 < r.exact_agreement.ci_high
    (40, 0.75, True)
    """
    check_bootstrap_options(resamples, seed, level)
    r = agreement_with_intervals(loo_consensus, scores, clusters, scale=scale, pass_threshold=pass_threshold,
                                 resamples=resamples, seed=seed, level=level, interval="bca")
    metrics = r["metrics"]

    def interval(name: str) -> MetricInterval:
        m = metrics[name]
        return MetricInterval(float(m["value"]), float(m["ci_low"]), float(m["ci_high"]), m.get("n"),
                              m.get("design_effect"))

    reasons = {k: v for k, v in r["reasons"].items() if k in ("exact_agreement", "krippendorff_alpha_ordinal")}
    if r["n_items"] == 0:
        reasons = {"exact_agreement": NOT_COMPARED, "krippendorff_alpha_ordinal": NOT_COMPARED}
    return ReviewerAgreement(int(r["n_items"]), interval("exact_agreement"), interval("krippendorff_alpha_ordinal"),
                             reasons)


def fail_share_difference(scores: Any, others_fail_share: Any, clusters: Any = None, *, scale: Any,
                          pass_threshold: int, resamples: int = 2000, seed: int = 0,
                          level: float = 0.95) -> FailShareDifference:
    """How much more often (above 0) or less often than the other reviewers a reviewer marks an item a fail.

    Parameters
    ----------
    scores : array-like of int, shape (n_items,)
        The reviewer's label of each item that at least one other reviewer labeled too.
    others_fail_share : array-like of float, shape (n_items,)
        On each of those items, the share of the other reviewers' labels below ``pass_threshold``.
    clusters : array-like or None
        The task id of each item, resampled together.

    Returns
    -------
    FailShareDifference
        ``difference``: mean over items of ``1[score < pass_threshold] - others_fail_share``, with the percentile
        interval of the task-cluster bootstrap (NaN with fewer than two clusters).

    Examples
    --------
    >>> d = fail_share_difference([-1, -1, 0, 1], [0.5, 0.0, 0.0, 0.0], scale=(-1, 0, 1), pass_threshold=0,
    ...                           resamples=200)
    >>> d.reviewer_share, d.others_share, d.difference.value
    (0.5, 0.125, 0.375)
    """
    values = check_scale(scale)
    check_pass_threshold(pass_threshold, values)
    check_bootstrap_options(resamples, seed, level)
    fails = (np.asarray(scores, dtype=np.float64) < pass_threshold).astype(np.float64)
    others = np.asarray(others_fail_share, dtype=np.float64)
    if fails.shape != others.shape:
        raise ValueError(f"scores and others_fail_share must have the same length, got {fails.size} and "
                         f"{others.size}")
    n = int(fails.size)
    if n == 0:
        return FailShareDifference(0, float("nan"), float("nan"), MetricInterval.nan())
    d = fails - others
    point = float(d.mean())
    groups, n_clusters = cluster_codes(clusters, n)
    low = high = float("nan")
    if n_clusters >= 2:
        per_cluster = np.zeros((n_clusters, 2))
        np.add.at(per_cluster, groups, np.column_stack([d, np.ones(n)]))
        sums = resample_sums(per_cluster, resamples=resamples, seed=seed)
        low, high, _ = percentile_interval(sums[:, 0] / sums[:, 1], level)
    return FailShareDifference(n, float(fails.mean()), float(others.mean()), MetricInterval(point, low, high, n))
