"""Inverse-probability-weighted estimates for labels drawn by an unequal-probability design (the active queue).

When the items that carry labels were chosen with unequal inclusion
probabilities ``pi_i`` (more judge-fail items, more of the judge's own family),
an unweighted metric describes the sample, not the golden set. Every estimate
here weights item ``i`` by ``1 / pi_i`` and is a ratio of weighted sums (the
Hajek ratio estimator, Sarndal, Swensson and Wretman 1992, ch. 5.7): the
weighted confusion matrix estimates the confusion matrix of the whole pool, and
every agreement metric is read off it; the self-preference effects are ratios
of weighted residual sums. A ratio estimator is unchanged when every weight is
multiplied by the same number, so probabilities that are right up to a common
factor (a queue stopped part way through its design) still give the pool's
value.

Intervals come from the cluster bootstrap of the weighted per-cluster sums
(task clusters resampled with replacement, each carrying its items' weights);
proportions (exact agreement, TPR, TNR) get a Wilson interval on their
effective number of items, ``p (1 - p) / var``, read at Hesterberg's expanded
level for their count of items (a few heavy items swing a weighted ratio), so
their width never collapses to zero. Equal weights give the unweighted point estimates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.stats._common import (
    NO_ITEMS,
    check_bootstrap_options,
    check_pass_threshold,
    check_same_length,
    check_scale,
    cluster_codes,
    score_codes,
)
from workbench.stats.agreement import METRIC_NAMES, stacked_metrics
from workbench.stats.intervals.bootstrap import expanded_level, resample_sums
from workbench.stats.intervals.proportion import (
    MAX_LEVEL,
    PROPORTION_DENOMINATORS,
    proportion_interval,
)

#: How the weighted intervals are made (part of a report's cache key).
INTERVAL = "weighted-cluster-bootstrap-percentile; proportions wilson on effective n at the expanded level"




def check_weights(weights: Any, n_items: int) -> np.ndarray:
    """Inverse-probability weights as floats, or raise naming the first bad one."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or len(w) != n_items:
        raise ValueError(f"weights must hold one number per item ({n_items}), got shape {w.shape}")
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        where = int(np.flatnonzero(bad)[0])
        raise ValueError(f"weight {w[where]!r} at position {where} is not a positive number; an inclusion "
                         "probability must lie in (0, 1]")
    return w


def inverse_probability_weights(inclusion_probability: Any) -> np.ndarray:
    """``1 / pi`` for inclusion probabilities in (0, 1].

    >>> inverse_probability_weights([0.5, 1.0, 0.25]).tolist()
    [2.0, 1.0, 4.0]
    """
    p = np.asarray(inclusion_probability, dtype=np.float64)
    bad = ~np.isfinite(p) | (p <= 0) | (p > 1)
    if bad.any():
        where = int(np.flatnonzero(bad)[0])
        raise ValueError(f"inclusion probability {p[where]!r} at position {where} is not in (0, 1]")
    return 1.0 / p


def kish_effective_n(weights: np.ndarray) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2``: how many equal-weight items the weights are worth.

    >>> kish_effective_n(np.ones(10)), round(kish_effective_n(np.array([1.0, 1.0, 4.0])), 3)
    (10.0, 2.0)
    """
    w = np.asarray(weights, dtype=np.float64)
    return float(w.sum() ** 2 / (w**2).sum()) if w.size else 0.0


def weighted_agreement_with_intervals(
    consensus: Any,
    judge: Any,
    clusters: Any,
    weights: Any,
    *,
    scale: Any,
    pass_threshold: int,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Every agreement metric of the whole pool from an unequal-probability sample, with intervals.

    Parameters are those of :func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`
    plus ``weights`` (one positive number per item, ``1 / pi_i``). Returns the
    same keys, where ``confusion`` holds the sampled counts and
    ``weighted_confusion`` the estimated shares of the pool; ``denominators``
    count sampled items; ``design`` says how the estimate was made (Kish
    effective sample size included).

    Examples
    --------
    Items of a rare class drawn four times as often, weighted back:

    >>> c = [0] * 10 + [1] * 10
    >>> j = [0] * 8 + [1] * 2 + [1] * 10
    >>> w = [1.0] * 10 + [4.0] * 10
    >>> r = weighted_agreement_with_intervals(c, j, None, w, scale=(0, 1), pass_threshold=1, resamples=200)
    >>> r["metrics"]["exact_agreement"]["value"]  # (8 + 40) / (10 + 40)
    0.96
    """
    values = check_scale(scale)
    pass_index = check_pass_threshold(pass_threshold, values)
    check_bootstrap_options(resamples, seed, level)
    c = score_codes(consensus, name="consensus", scale=values)
    j = score_codes(judge, name="judge", scale=values)
    n_all = check_same_length(consensus=c, judge=j)
    w_all = check_weights(weights, n_all)
    groups_all, _ = cluster_codes(clusters, n_all)
    keep = (c >= 0) & (j >= 0)
    c, j, w = c[keep], j[keep], w_all[keep]
    if len(w):  # weights summing to the sample size: alpha's (n - 1) factor then counts items, not weight units
        w = w * (len(w) / w.sum())
    groups = np.unique(groups_all[keep], return_inverse=True)[1]
    n_clusters = int(groups.max()) + 1 if groups.size else 0
    k = len(values)
    counts = np.bincount(c * k + j, minlength=k * k).reshape(k, k)
    weighted = np.bincount(c * k + j, weights=w, minlength=k * k).reshape(k, k)
    point = {name: float(v[0]) for name, v in stacked_metrics(weighted[None], values, pass_index).items()}
    passing = np.arange(k) >= pass_index
    denominators = {"n_items": int(counts.sum()), "n_pos": int(counts[passing].sum()),
                    "n_neg": int(counts[~passing].sum())}
    metrics = {name: {"value": point[name], "ci_low": float("nan"), "ci_high": float("nan")} for name in METRIC_NAMES}
    for name, which in PROPORTION_DENOMINATORS.items():
        metrics[name]["n"] = denominators[which]
    reasons: dict[str, str] = {}
    standard_errors = {name: float("nan") for name in METRIC_NAMES}
    undefined: dict[str, int] = {}
    if len(c) < 2:
        reasons = {name: NO_ITEMS for name in METRIC_NAMES}
    elif n_clusters < 2:
        reasons = {name: "all items belong to one task cluster, so no interval can be computed"
                   for name in METRIC_NAMES}
    else:
        cells = k * k
        per_cluster = np.bincount(groups * cells + c * k + j, weights=w,
                                  minlength=n_clusters * cells).reshape(n_clusters, cells)
        stack = resample_sums(per_cluster, resamples=resamples, seed=seed).reshape(-1, k, k)
        samples = stacked_metrics(stack, values, pass_index)
        lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
        for name in METRIC_NAMES:
            if not np.isfinite(point[name]):
                continue
            s = samples[name][np.isfinite(samples[name])]
            if s.size != samples[name].size:
                undefined[name] = int(samples[name].size - s.size)
            if s.size < 2:
                reasons[name] = f"{name} is undefined in almost every bootstrap resample"
                continue
            standard_errors[name] = float(np.std(s, ddof=1))
            if name in PROPORTION_DENOMINATORS:
                n = denominators[PROPORTION_DENOMINATORS[name]]
                # read at Hesterberg's expanded level for the items behind it: with unequal weights a
                # handful of heavy items swings the ratio, and the plain level under-covers (README)
                low, high = proportion_interval(point[name], _effective_n(point[name], standard_errors[name], n,
                                                                           w, c, j, passing, name),
                                                level=min(expanded_level(level, max(n, 2)), MAX_LEVEL))
            else:
                low, high = (float(x) for x in np.quantile(s, [lo_q, hi_q]))
            metrics[name].update(ci_low=low, ci_high=high)
    return {
        "metrics": metrics,
        "confusion": {"labels": values.tolist(), "matrix": counts.tolist()},
        "weighted_confusion": {"labels": values.tolist(),
                               "shares": (weighted / weighted.sum()).tolist() if weighted.sum() else None},
        "bootstrap": {"resamples": int(resamples), "seed": int(seed), "cluster": True, "level": float(level)},
        "intervals": {name: ("wilson-effective-n" if name in PROPORTION_DENOMINATORS else "weighted-percentile")
                      for name in METRIC_NAMES},
        "denominators": denominators,
        "n_items": int(len(c)),
        "n_missing": int((~keep).sum()),
        "n_clusters": n_clusters,
        "standard_errors": standard_errors,
        "undefined_resamples": undefined,
        "reasons": reasons,
        "design": {"estimator": "hajek", "weights": "inverse inclusion probability",
                   "kish_effective_n": kish_effective_n(w)},
    }


def _effective_n(p: float, se: float, n: int, w: np.ndarray, c: np.ndarray, j: np.ndarray, passing: np.ndarray,
                 name: str) -> float:
    """Items a proportion is worth: ``p (1 - p) / var``, the larger of the bootstrap variance and the linearised
    one with its ``m / (m - 1)`` correction (the bootstrap runs narrow over a handful of consensus fails); Kish's
    n of its denominator when ``p`` is 0 or 1."""
    if name == "tpr":
        rows, hit = passing[c], passing[j]
    elif name == "tnr":
        rows, hit = ~passing[c], ~passing[j]
    else:
        rows, hit = np.ones(len(c), bool), c == j
    wd, yd = w[rows], hit[rows].astype(np.float64)
    kish, m = kish_effective_n(wd), len(wd)
    if not (0 < p < 1) or m < 2:
        return max(1.0, min(kish, float(n)))
    linear = float((wd**2 * (yd - p) ** 2).sum() / wd.sum() ** 2 * m / (m - 1))
    var = max(se**2 if se > 0 else 0.0, linear)
    return float(np.clip(p * (1 - p) / var, 1.0, max(1.0, min(kish, n)))) if var > 0 else max(1.0, min(kish, n))


def weighted_self_preference(
    consensus: Any,
    judge: Any,
    weights: Any,
    *,
    scale: Any,
    producer_model: Any,
    producer_family: Any,
    judge_model: str,
    judge_family: str | None,
    clusters: Any = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Same-model and same-family effects (weighted mean residual minus that of other families), with intervals.

    The weighted counterpart of :func:`~workbench.stats.bias.self_preference`
    with the same entry keys; the p-value is that of the bootstrap (twice the
    smaller share of resampled effects on either side of 0), as the OLS of the
    unweighted report assumes equal-probability items.
    """
    values = check_scale(scale)
    check_bootstrap_options(resamples, seed, level)
    c = score_codes(consensus, name="consensus", scale=values)
    j = score_codes(judge, name="judge", scale=values)
    models = pd.Series(np.asarray(producer_model, dtype=object)).fillna("").astype(str).str.strip().str.casefold()
    families = pd.Series(np.asarray(producer_family, dtype=object)).fillna("").astype(str).str.strip().str.casefold()
    n_all = check_same_length(consensus=c, judge=j, producer_model=models.to_numpy(),
                              producer_family=families.to_numpy())
    w_all = check_weights(weights, n_all)
    groups_all, _ = cluster_codes(clusters, n_all)
    keep = (c >= 0) & (j >= 0)
    r = (values[j[keep]] - values[c[keep]]).astype(np.float64)
    w = w_all[keep]
    fam, mod = families.to_numpy()[keep], models.to_numpy()[keep]
    family_key = (str(judge_family).strip().casefold() or None) if judge_family is not None else None
    known = fam != ""
    same_family = known & (fam == family_key) if family_key else np.zeros(len(r), bool)
    other = known & (fam != family_key) if family_key else np.zeros(len(r), bool)
    same_model = (mod == judge_model.strip().casefold()) & ~other if family_key else np.zeros(len(r), bool)
    groups = np.unique(groups_all[keep], return_inverse=True)[1]
    n_clusters = int(groups.max()) + 1 if groups.size else 0
    columns = np.column_stack([np.bincount(groups, weights=x, minlength=n_clusters)
                               for mask in (same_model, same_family, other) for x in (w * r * mask, w * mask)]) \
        if len(r) else np.zeros((0, 6))
    sums = resample_sums(columns, resamples=resamples, seed=seed) if n_clusters >= 2 else None
    out: dict[str, Any] = {"judge_model": judge_model, "judge_family": judge_family, "n_items": int(len(r)),
                           "bootstrap": {"resamples": int(resamples), "seed": int(seed), "cluster": True,
                                         "level": float(level)}}
    for idx, (name, mask) in enumerate((("same_model", same_model), ("same_family", same_family))):
        entry: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n": int(mask.sum()),
                                 "n_other_family": int(other.sum()), "p_value": None, "ols_coefficient": None,
                                 "measurable": False, "undefined_resamples": 0, "reason": None}
        if family_key is None:
            entry["reason"] = "the judge has no family, so same-family items cannot be told from others"
        elif not mask.any() or not other.any():
            entry["reason"] = ("no labeled item was produced by " + ("the judge's own model or family" if not mask.any()
                                                                     else "another family")
                               + ", so self-preference is not measurable")
        else:
            value = float((w * r * mask).sum() / (w * mask).sum() - (w * r * other).sum() / (w * other).sum())
            entry.update(value=value, measurable=True)
            if sums is not None:
                with np.errstate(divide="ignore", invalid="ignore"):
                    s = sums[:, 2 * idx] / sums[:, 2 * idx + 1] - sums[:, 4] / sums[:, 5]
                finite = s[np.isfinite(s)]
                if finite.size >= 2:
                    low, high = np.quantile(finite, [(1 - level) / 2, 1 - (1 - level) / 2])
                    p = 2 * min((finite <= 0).mean(), (finite >= 0).mean())
                    entry.update(ci_low=float(low), ci_high=float(high), p_value=float(min(1.0, p)),
                                 undefined_resamples=int(s.size - finite.size))
            else:
                entry["reason"] = "all items belong to one task cluster, so no interval can be computed"
        out[name] = entry
    return out


def weighted_one_sided_t(d: Any, weights: Any, epsilon: float) -> float:
    """p-value of H0 ``mean(d) >= epsilon`` against ``mean(d) < epsilon`` for a weighted (Hajek) mean of ``d``.

    The standard error is the linearised one of a ratio estimator,
    ``sqrt(n / (n - 1) * sum(w^2 (d - m)^2)) / sum(w)``; equal weights give
    exactly the one-sample t-test the alternative-annotator test uses.

    >>> from scipy.stats import ttest_1samp
    >>> d = [0, 1, 0, 0, 1, 0]
    >>> bool(abs(weighted_one_sided_t(d, [1] * 6, 0.5) - ttest_1samp(d, 0.5, alternative="less").pvalue) < 1e-12)
    True
    """
    from scipy.stats import t

    d = np.asarray(d, dtype=np.float64)
    w = check_weights(weights, len(d))
    n = len(d)
    if n < 2:
        return float("nan")
    m = float((w * d).sum() / w.sum())
    se = float(np.sqrt(n / (n - 1) * (w**2 * (d - m) ** 2).sum()) / w.sum())
    if se == 0:
        return 0.0 if m < epsilon else (float("nan") if m == epsilon else 1.0)
    return float(t.cdf((m - epsilon) / se, n - 1))
