"""Cluster-bootstrap intervals for the agreement metrics, computed in one pass.

A cluster bootstrap draws the task clusters (``task_id``) with replacement:
resample ``b`` gives cluster ``g`` a multiplicity ``W[b, g]``, with
``W[b] ~ Multinomial(G, 1/G, ..., 1/G)``. Each resample's confusion matrix is
``W[b] @ Q``, where ``Q[g]`` holds the confusion counts of cluster ``g``;
every metric is then read off the ``(B, K, K)`` stack at once by
:func:`workbench.stats.agreement.stacked_metrics`.

One shortcut keeps this fast for 10,000 items: clusters with identical
contributions (identical rows of ``Q``; with one item per cluster there are at
most K*K kinds) are pooled, and the summed multiplicity of each kind is drawn
directly, since the sum of multinomial counts over a group of cells is itself
multinomial: ``M[b] ~ Multinomial(G, n_kind / G)`` and ``W[b] @ Q == M[b] @
Q_kind``. The resampling distribution is exactly that of the cluster
bootstrap; only the bookkeeping is smaller. A side effect worth having: the
draws depend on the clusters' contents, not on item order, so shuffling the
items leaves every interval unchanged.

Intervals: proportions (exact agreement, TPR, TNR) get a closed-form binomial
interval on their effective number of items, the design effect read off the
Dirichlet-process posterior over the clusters
(:mod:`workbench.stats.intervals.proportion`), because a percentile bootstrap
of 1 of 1 is ``[1, 1]``. The other metrics get
percentile intervals (Efron and Tibshirani 1993, ch. 13) from
``numpy.quantile`` with linear interpolation, or BCa intervals (ch. 14) with
the acceleration from a leave-one-cluster-out jackknife; which one is the
default is decided by measured coverage (``validation/interval_coverage.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.stats._common import (
    NO_ITEMS,
    ONE_ITEM,
    check_bootstrap_options,
    check_pass_threshold,
    check_same_length,
    check_scale,
    cluster_codes,
    score_codes,
    special_functions,
)
from workbench.stats.agreement import METRIC_NAMES, _metrics_of_matrix, stacked_metrics
from workbench.stats.intervals.methods import BOOTSTRAP_INTERVAL
from workbench.stats.intervals.posterior import confusion_draws
from workbench.stats.intervals.proportion import METHOD as PROPORTION_METHOD
from workbench.stats.intervals.proportion import (
    PROPORTION_DENOMINATORS,
    cluster_level,
    design_effect,
    proportion_interval,
)
from workbench.stats.intervals.rows import unique_rows

ONE_CLUSTER = "all items belong to one task cluster, so the cluster bootstrap cannot show any uncertainty"

#: Interval of the metrics that are not proportions (see :mod:`workbench.stats.intervals.methods` for why).
INTERVAL = BOOTSTRAP_INTERVAL
#: Above this share of resamples in which a metric is undefined, its interval is conditional and says so.
UNDEFINED_SHARE_WARNING = 0.05


def resample_sums(per_cluster: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """Column sums of cluster contributions for each bootstrap resample.

    Parameters
    ----------
    per_cluster : ndarray, shape (G, P)
        Row g is what cluster g contributes (counts, sums of residuals, ...).
    resamples, seed : int
        Number of resamples and the seed of ``numpy.random.default_rng``.

    Returns
    -------
    ndarray of float64, shape (resamples, P)
        Row b is ``sum_g W[b, g] * per_cluster[g]`` for cluster multiplicities
        ``W[b] ~ Multinomial(G, uniform)``, drawn per kind of cluster (see the
        module docstring).
    """
    n_clusters = per_cluster.shape[0]
    kinds, counts = unique_rows(per_cluster)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_clusters, counts / n_clusters, size=resamples)
    return draws.astype(np.float64) @ kinds.astype(np.float64)


def bca_interval(samples: np.ndarray, point: float, jackknife: np.ndarray, jackknife_weights: np.ndarray,
                 level: float) -> tuple[float, float, int]:
    """Bias-corrected and accelerated interval (Efron 1987; Efron and Tibshirani 1993, ch. 14.3).

    ``jackknife`` holds the statistic with one cluster left out, one entry per
    kind of cluster, and ``jackknife_weights`` how many clusters are of that
    kind. Falls back to the percentile interval where the correction is
    undefined (no spread in the jackknife, or every sample on one side).
    """
    # scipy.stats' norm.ppf and norm.cdf are these functions (same floats); scipy.stats takes seconds to import
    special = special_functions()

    finite = samples[np.isfinite(samples)]
    undefined = int(samples.size - finite.size)
    if finite.size == 0 or not np.isfinite(point):
        return float("nan"), float("nan"), undefined
    below = (np.count_nonzero(finite < point) + 0.5 * np.count_nonzero(finite == point)) / finite.size
    ok = np.isfinite(jackknife)
    w = jackknife_weights[ok]
    if not 0 < below < 1 or w.sum() < 2:
        low, high, _ = percentile_interval(samples, level)
        return low, high, undefined
    z0 = special.ndtri(below)
    jk = jackknife[ok]
    centred = np.average(jk, weights=w) - jk
    spread = float(np.sum(w * centred**2))
    accel = float(np.sum(w * centred**3)) / (6 * spread**1.5) if spread > 0 else 0.0
    tail = (1 - level) / 2
    z = special.ndtri(np.array([tail, 1 - tail]))
    adjusted = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(finite, np.clip(adjusted, 0, 1))
    return float(low), float(high), undefined


def expanded_level(level: float, n: int) -> float:
    """The level at which to read percentiles so that a small sample's interval is not too narrow.

    Hesterberg's expanded percentile interval (Hesterberg 2015, "What teachers
    should know about the bootstrap", The American Statistician 69(4), 371-386):
    the tail ``alpha' / 2 = Phi(-sqrt(n / (n - 1)) * t_{n-1, 1 - alpha / 2})``
    corrects both the bootstrap's variance, too small by ``(n - 1) / n``, and
    the normal quantile, too small for a t. ``n`` is the number of independent
    units (task clusters) behind the statistic.

    >>> round(expanded_level(0.95, 20), 4), round(expanded_level(0.95, 10_000), 4)
    (0.9682, 0.95)
    """
    if n < 2:
        return level
    special = special_functions()  # scipy.stats' norm.cdf and t.ppf, without its import time
    tail = special.ndtr(-np.sqrt(n / (n - 1)) * special.stdtrit(n - 1, 1 - (1 - level) / 2))
    return float(1 - 2 * tail)


def percentile_interval(samples: np.ndarray, level: float) -> tuple[float, float, int]:
    """Percentile interval of the finite samples, and how many were undefined (NaN)."""
    finite = samples[np.isfinite(samples)]
    undefined = int(samples.size - finite.size)
    if finite.size == 0:
        return float("nan"), float("nan"), undefined
    tail = (1 - level) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high), undefined


def agreement_with_intervals(
    consensus: Any,
    judge: Any,
    clusters: Any,
    *,
    scale: Any,
    pass_threshold: int,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = INTERVAL,
) -> dict[str, Any]:
    """Every agreement metric with an interval: closed-form for proportions, else from the cluster bootstrap.

    Parameters
    ----------
    consensus, judge : array-like of int, shape (n_items,)
        Labels aligned by position; items where either is missing (None or
        NaN) are left out and counted in ``n_missing``.
    clusters : array-like, shape (n_items,), or None
        The task id of each item; items of one task are resampled together.
        None makes every item its own cluster.
    scale : sequence of int
        Scale values, lowest first.
    pass_threshold : int
        Lowest passing value (defines ``tpr``, ``tnr``).
    resamples : int, default 2000
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; recorded in the result.
    level : float, default 0.95
        Confidence level of the intervals.
    interval : {"percentile", "bca"}
        Bootstrap interval of the metrics that are not proportions.

    Returns
    -------
    dict
        ``metrics``: {name: {"value", "ci_low", "ci_high"}} for each name of
        :data:`~workbench.stats.agreement.METRIC_NAMES` (NaN where undefined);
        the proportions (``exact_agreement``, ``tpr``, ``tnr``) also carry
        their denominator ``n`` and ``design_effect``;
        ``denominators``: {"n_items", "n_pos", "n_neg"} (consensus passes and
        fails); ``intervals``: {name: method};
        ``confusion``: {"labels": scale values, "matrix": K x K list of int};
        ``bootstrap``: {"resamples", "seed", "cluster": True, "level"};
        ``n_items``, ``n_missing``, ``n_clusters``;
        ``standard_errors``: {name: bootstrap standard deviation};
        ``undefined_resamples``: {name: count} for metrics undefined in some
        resamples (those resamples are left out of the interval);
        ``reasons``: {name: sentence} for every NaN value or interval.

    Examples
    --------
    >>> r = agreement_with_intervals([-1, 0, 0, 1] * 10, [-1, 0, 1, 1] * 10, None,
    ...                              scale=(-1, 0, 1), pass_threshold=0, resamples=200)
    >>> m = r["metrics"]["exact_agreement"]
    >>> m["value"], m["ci_low"] < 0.75 < m["ci_high"]
    (0.75, True)
    """
    if interval not in ("percentile", "bca"):
        raise ValueError(f"interval must be 'percentile' or 'bca', got {interval!r}")
    values, pass_index, codes, groups, n_clusters, n_missing = _prepare(
        consensus, {"judge": judge}, clusters, scale, pass_threshold, resamples, seed, level)
    k = len(values)
    (judge_codes,) = codes["judges"]
    matrix = np.bincount(codes["consensus"] * k + judge_codes, minlength=k * k).reshape(k, k)
    point = _metrics_of_matrix(matrix, values, pass_index)
    reasons = dict(point.reasons)
    metrics = {name: {"value": point[name], "ci_low": float("nan"), "ci_high": float("nan")} for name in METRIC_NAMES}
    standard_errors = {name: float("nan") for name in METRIC_NAMES}
    undefined: dict[str, int] = {}
    passing = np.arange(k) >= pass_index
    denominators = {"n_items": int(matrix.sum()), "n_pos": int(matrix[passing].sum()),
                    "n_neg": int(matrix[~passing].sum())}
    for name, denominator in PROPORTION_DENOMINATORS.items():
        metrics[name]["n"] = denominators[denominator]
    methods = {name: (PROPORTION_METHOD if name in PROPORTION_DENOMINATORS else interval) for name in METRIC_NAMES}

    if point.n_items >= 2 and n_clusters >= 2:
        per_cluster = _per_cluster_confusions(codes["consensus"], [judge_codes], groups, n_clusters, k)
        (stack,) = _split(resample_sums(per_cluster, resamples=resamples, seed=seed), 1, k)
        samples = stacked_metrics(stack, values, pass_index)
        jackknife = _jackknife(per_cluster, matrix, values, pass_index) if interval == "bca" else None
        # the proportions' design effects: their variance under the Dirichlet-process posterior over clusters
        # (its prior atom, worth one item, keeps a sample without the rare outcome from looking certain)
        rate_variance = proportion_variances(confusion_draws(per_cluster, draws=resamples, seed=seed), pass_index)
        of = proportion_denominators(per_cluster.reshape(n_clusters, k, k), pass_index)
        for name in METRIC_NAMES:
            if np.isnan(point[name]):
                continue
            finite = samples[name][np.isfinite(samples[name])]
            standard_errors[name] = float(np.std(finite, ddof=1)) if finite.size > 1 else float("nan")
            bad = int(samples[name].size - finite.size)
            if name in PROPORTION_DENOMINATORS:
                n = denominators[PROPORTION_DENOMINATORS[name]]
                deff, read_at = _clustered_proportion(point[name], n, rate_variance[name], of[name], level)
                low, high = proportion_interval(point[name], n, level=read_at, deff=deff)
                metrics[name]["design_effect"] = deff
            elif jackknife is not None:
                low, high, _ = bca_interval(samples[name], point[name], jackknife[0][name], jackknife[1], level)
            else:
                low, high, _ = percentile_interval(samples[name], level)
            metrics[name].update(ci_low=low, ci_high=high)
            if bad:
                undefined[name] = bad
            if np.isnan(low):
                reasons[name] = f"{name} is undefined in every bootstrap resample"
            elif bad > UNDEFINED_SHARE_WARNING * resamples and name not in PROPORTION_DENOMINATORS:
                reasons[name] = (f"{name} is undefined in {bad / resamples:.0%} of bootstrap resamples (too few items "
                                 "of some label are drawn), so its interval describes only the rest and is too "
                                 "narrow; label more items of the rarer labels")
    elif point.n_items >= 2:
        for name in METRIC_NAMES:
            reasons.setdefault(name, ONE_CLUSTER)
    # A proportion's interval needs no resampling: a single item, or a single cluster, still has one.
    for name, which in PROPORTION_DENOMINATORS.items():
        n = denominators[which]
        if np.isnan(metrics[name]["ci_low"]) and np.isfinite(point[name]) and n >= 1:
            deff = float(n) if n_clusters < 2 else 1.0  # one cluster: all its items may be one observation
            metrics[name].update(zip(("ci_low", "ci_high"), proportion_interval(point[name], n, level=level,
                                                                                  deff=deff)))
            metrics[name]["design_effect"] = deff
            if reasons.get(name) == ONE_CLUSTER:
                del reasons[name]

    return {
        "metrics": metrics,
        "confusion": {"labels": values.tolist(), "matrix": matrix.tolist()},
        "bootstrap": {"resamples": int(resamples), "seed": int(seed), "cluster": True, "level": float(level)},
        "intervals": methods,
        "denominators": denominators,
        "n_items": point.n_items,
        "n_missing": n_missing,
        "n_clusters": n_clusters,
        "standard_errors": standard_errors,
        "undefined_resamples": undefined,
        "reasons": reasons,
    }


def proportion_variances(tables: np.ndarray, pass_index: int) -> dict[str, float]:
    """The variance of exact agreement, TPR and TNR over a stack of confusion tables (rows consensus)."""
    k = tables.shape[1]
    passing = np.arange(k) >= pass_index
    with np.errstate(invalid="ignore", divide="ignore"):
        values = {"exact_agreement": np.trace(tables, axis1=1, axis2=2) / tables.sum(axis=(1, 2)),
                  "tpr": tables[:, passing][:, :, passing].sum(axis=(1, 2)) / tables[:, passing].sum(axis=(1, 2)),
                  "tnr": tables[:, ~passing][:, :, ~passing].sum(axis=(1, 2)) / tables[:, ~passing].sum(axis=(1, 2))}
    out = {}
    for name, v in values.items():
        finite = v[np.isfinite(v)]
        out[name] = float(np.var(finite, ddof=1)) if finite.size > 1 else float("nan")
    return out


def proportion_denominators(cells: np.ndarray, pass_index: int) -> dict[str, np.ndarray]:
    """Per cluster, the items behind each proportion: all, consensus passes (TPR), consensus fails (TNR)."""
    passing = np.arange(cells.shape[1]) >= pass_index
    rows = cells.sum(axis=2)
    return {"exact_agreement": rows.sum(axis=1), "tpr": rows[:, passing].sum(axis=1),
            "tnr": rows[:, ~passing].sum(axis=1)}


def _clustered_proportion(p: float, n: int, variance: float, of: np.ndarray, level: float) -> tuple[float, float]:
    """(design effect, level to read the interval at) of a proportion whose items (``of`` per cluster) sit in task
    clusters: the design effect from ``variance``; where some cluster holds two or more of its items and the design
    effect is estimated (not at its largest, each cluster one item), the level of Student's t over the clusters
    (see :mod:`workbench.stats.intervals.proportion`)."""
    n_clusters = int((of > 0).sum())
    deff = design_effect(p, n, variance, n_clusters)
    estimated = bool((of >= 2).any()) and deff < n / max(1, n_clusters)
    return deff, (cluster_level(level, n_clusters) if estimated else level)


def paired_bootstrap_delta(
    consensus: Any,
    baseline: Any,
    candidate: Any,
    clusters: Any,
    *,
    scale: Any,
    pass_threshold: int,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Change in every agreement metric from a baseline to a candidate, with paired intervals.

    Both score the same items against the same consensus: two judges (compare)
    or two runs of one judge (drift). Each resample applies the same cluster
    multiplicities to both, so the interval of the difference reflects only
    how the two disagree, not which items happened to be drawn.

    Parameters
    ----------
    consensus, baseline, candidate : array-like of int, shape (n_items,)
        Aligned by position; items missing any of the three are left out.
    clusters : array-like, shape (n_items,), or None
        Task id of each item (None: every item its own cluster).
    scale, pass_threshold, resamples, seed, level
        As in :func:`agreement_with_intervals`.

    Returns
    -------
    dict
        ``metrics``: {name: {"value", "ci_low", "ci_high"}} where value is
        ``metric(candidate) - metric(baseline)``; ``baseline`` and
        ``candidate``: {name: value}; ``n_items``, ``n_missing``,
        ``n_clusters``, ``bootstrap``, ``undefined_resamples`` and ``reasons``
        as in :func:`agreement_with_intervals`.
    """
    values, pass_index, codes, groups, n_clusters, n_missing = _prepare(
        consensus, {"baseline": baseline, "candidate": candidate}, clusters, scale, pass_threshold,
        resamples, seed, level)
    k = len(values)
    base_codes, cand_codes = codes["judges"]
    points = []
    for j in (base_codes, cand_codes):
        matrix = np.bincount(codes["consensus"] * k + j, minlength=k * k).reshape(k, k)
        points.append(_metrics_of_matrix(matrix, values, pass_index))
    base, cand = points
    n_items = base.n_items
    reasons: dict[str, str] = {}
    metrics = {}
    for name in METRIC_NAMES:
        metrics[name] = {"value": cand[name] - base[name], "ci_low": float("nan"), "ci_high": float("nan")}
        if np.isnan(metrics[name]["value"]):
            why = base.reasons.get(name) or cand.reasons.get(name)
            side = "baseline" if name in base.reasons else "candidate"
            reasons[name] = f"{name} is undefined for the {side}: {why}"
    undefined: dict[str, int] = {}
    if n_items >= 2 and n_clusters >= 2:
        stacks = _resampled_confusions(codes["consensus"], [base_codes, cand_codes], groups, n_clusters, k,
                                       resamples, seed)
        base_s, cand_s = (stacked_metrics(s, values, pass_index) for s in stacks)
        for name in METRIC_NAMES:
            if np.isnan(metrics[name]["value"]):
                continue
            low, high, bad = percentile_interval(cand_s[name] - base_s[name], level)
            metrics[name].update(ci_low=low, ci_high=high)
            if bad:
                undefined[name] = bad
            if np.isnan(low):
                reasons[name] = f"{name} is undefined in every bootstrap resample"
    elif n_items >= 2:
        for name in METRIC_NAMES:
            reasons.setdefault(name, ONE_CLUSTER)
    elif n_items == 1:
        reasons = {name: ONE_ITEM for name in METRIC_NAMES}
    else:
        reasons = {name: NO_ITEMS for name in METRIC_NAMES}
    return {
        "metrics": metrics,
        "baseline": dict(base.metrics),
        "candidate": dict(cand.metrics),
        "bootstrap": {"resamples": int(resamples), "seed": int(seed), "cluster": True, "level": float(level)},
        "n_items": n_items,
        "n_missing": n_missing,
        "n_clusters": n_clusters,
        "undefined_resamples": undefined,
        "reasons": reasons,
    }


def _prepare(consensus, judges, clusters, scale, pass_threshold, resamples, seed, level):
    values = check_scale(scale)
    pass_index = check_pass_threshold(pass_threshold, values)
    check_bootstrap_options(resamples, seed, level)
    c = score_codes(consensus, name="consensus", scale=values)
    js = {name: score_codes(j, name=name, scale=values) for name, j in judges.items()}
    check_same_length(consensus=c, **js)
    groups, _ = cluster_codes(clusters, len(c))
    keep = (c >= 0) & np.logical_and.reduce([j >= 0 for j in js.values()])
    kept_groups, n_clusters = _refactor(groups[keep])
    codes = {"consensus": c[keep], "judges": [j[keep] for j in js.values()]}
    return values, pass_index, codes, kept_groups, n_clusters, int((~keep).sum())


def _refactor(groups: np.ndarray) -> tuple[np.ndarray, int]:
    uniques, inverse = np.unique(groups, return_inverse=True)
    return inverse.astype(np.int64), len(uniques)


def _per_cluster_confusions(consensus_codes, judge_codes_list, groups, n_clusters, k) -> np.ndarray:
    """(G, J * K * K): each cluster's confusion counts, one block of K * K cells per judge."""
    cells = k * k
    return np.concatenate(
        [np.bincount(groups * cells + consensus_codes * k + j, minlength=n_clusters * cells).reshape(n_clusters, cells)
         for j in judge_codes_list],
        axis=1,
    )


def _split(sums: np.ndarray, n_judges: int, k: int) -> list[np.ndarray]:
    cells = k * k
    return [sums[:, i * cells:(i + 1) * cells].reshape(-1, k, k) for i in range(n_judges)]


def _jackknife(per_cluster: np.ndarray, matrix: np.ndarray, values: np.ndarray,
               pass_index: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every metric with one cluster left out, per kind of cluster, and how many clusters are of each kind."""
    k = matrix.shape[0]
    kinds, counts = unique_rows(per_cluster[:, :k * k])
    left_out = matrix[None].astype(np.float64) - kinds.reshape(-1, k, k)
    return stacked_metrics(left_out, values, pass_index), counts.astype(np.float64)


def _resampled_confusions(consensus_codes, judge_codes_list, groups, n_clusters, k, resamples, seed):
    """One (B, K, K) confusion stack per judge, all under the same cluster multiplicities."""
    per_cluster = _per_cluster_confusions(consensus_codes, judge_codes_list, groups, n_clusters, k)
    return _split(resample_sums(per_cluster, resamples=resamples, seed=seed), len(judge_codes_list), k)
