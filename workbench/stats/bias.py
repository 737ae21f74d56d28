"""Self-preference: does the judge grade its own model, or its own family, more leniently?

The residual ``r = judge - consensus`` measures leniency item by item. The
``same_model`` effect is the mean residual on items produced by the judge's
own model minus the mean residual on items from other families; the
``same_family`` effect uses all items from the judge's family instead. Each
comes with an interval (by default from the Dirichlet-process posterior over the task clusters with a prior of
one item, :mod:`workbench.stats.intervals.posterior`; see :data:`INTERVAL` and :func:`_posterior`) and, for a p-value, an
OLS of the residual on the same-X indicator with category fixed effects and
cluster-robust standard errors (statsmodels' ``cov_type="cluster"``, computed through its pieces:
:func:`cluster_robust_ols`).

An effect with no same-X items (or no other-family items) is reported as not
measurable, never as zero: absence of evidence is not absence of bias.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.stats._common import (check_bootstrap_options, check_same_length, check_scale, cluster_codes,
    score_codes, special_functions)
from workbench.stats.intervals.bootstrap import bca_interval, expanded_level, percentile_interval, resample_sums
from workbench.stats.intervals.methods import SELF_PREFERENCE_INTERVAL
from workbench.stats.intervals.posterior import PRIOR_ITEMS, cluster_weights, posterior_interval, prior_atoms

#: Interval of the effects, one of INTERVALS (the default and why: :mod:`workbench.stats.intervals.methods`).
INTERVAL = SELF_PREFERENCE_INTERVAL
INTERVALS = ("posterior", "expanded", "percentile", "bca", "studentized")


@dataclass(slots=True)
class Effect:
    """One self-preference effect (same model or same family): how much more lenient than humans the judge is on
    those items than on other families' (:func:`self_preference`, whose ``Returns`` describes each field)."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    n_other_family: int = 0
    p_value: float | None = None
    ols_coefficient: float | None = None
    measurable: bool = False
    undefined_resamples: int = 0
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class SelfPreference:
    """Both effects of a judge, with the judge's names, the items behind them and the bootstrap's settings."""

    judge_model: str
    judge_family: str | None
    n_items: int
    bootstrap: dict[str, Any]
    same_model: Effect
    same_family: Effect

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


def self_preference(
    consensus: Any,
    judge: Any,
    *,
    scale: Any,
    producer_model: Any,
    producer_family: Any,
    judge_model: str,
    judge_family: str | None,
    category: Any = None,
    clusters: Any = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = INTERVAL,
) -> dict[str, Any]:
    """Same-model and same-family leniency of a judge, with intervals and p-values.

    Parameters
    ----------
    consensus, judge : array-like of int, shape (n_items,)
        Labels aligned by position; items missing either are left out.
    scale : sequence of int
        Scale values, lowest first; residuals are in its units.
    producer_model, producer_family : array-like of str, shape (n_items,)
        Who produced each item. Names are compared case-insensitively; an item
        with a missing family is in neither group.
    judge_model : str
        The judge's bare model name, as producers' models are named:
        ``gpt-4o`` for the judge ``openai/gpt-4o``, ``<model>`` for
        ``openai-api/<service>/<model>``. The caller strips the provider
        prefix (``workbench.core.models.parse_model(spec.model).model``); this
        module reads no model-name grammar.
    judge_family : str or None
        The judge's family; None makes both effects not measurable.
    category : array-like of str, shape (n_items,), optional
        Item category, entered as fixed effects in the OLS.
    clusters : array-like, shape (n_items,), optional
        Task id per item, for the bootstrap and the cluster-robust errors;
        None makes every item its own cluster.
    resamples, seed, level
        Bootstrap settings, as in
        :func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`.
    interval : {"posterior", "expanded", "percentile", "bca", "studentized"}
        How the effects' intervals are made: the posterior over task clusters (the default,
        :func:`_posterior`), or read off the cluster bootstrap.

    Returns
    -------
    dict
        ``same_model`` and ``same_family``: each {"value", "ci_low",
        "ci_high", "n", "n_other_family", "p_value", "ols_coefficient",
        "measurable", "undefined_resamples", "reason"}, where ``value`` is
        the difference in mean
        residual (scale units; above 0 = more lenient to its own), ``n`` the
        same-X items, ``p_value`` the two-sided cluster-robust p-value of
        the indicator's OLS coefficient ``ols_coefficient`` (the effect within
        categories), and ``undefined_resamples`` the resamples that drew no
        same-X or no other-family item (left out of the interval); ``reason``
        may also explain a missing p-value. Not measurable: ``value``, interval, p-value None,
        ``measurable`` False and ``reason`` says why. Also ``judge_model``
        (bare name), ``judge_family``, ``n_items``, ``bootstrap``.
    """
    values = check_scale(scale)
    check_bootstrap_options(resamples, seed, level)
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(map(repr, INTERVALS))}, got {interval!r}")
    c = score_codes(consensus, name="consensus", scale=values)
    j = score_codes(judge, name="judge", scale=values)
    models = _names(producer_model, "producer_model")
    families = _names(producer_family, "producer_family")
    lengths = {"consensus": c, "judge": j, "producer_model": models, "producer_family": families}
    if category is not None:
        categories = pd.Series(_names(category, "category"), dtype=object).fillna("default").to_numpy(dtype=object)
        lengths["category"] = categories
    else:
        categories = np.full(len(c), "default", dtype=object)
    n_all = check_same_length(**lengths)
    groups_all, _ = cluster_codes(clusters, n_all)
    if not isinstance(judge_model, str) or not judge_model.strip():
        raise ValueError(f"judge_model must be the judge's bare model name such as 'gpt-4o', got {judge_model!r}")
    bare = judge_model.strip()
    keep = (c >= 0) & (j >= 0)
    residual = (values[j[keep]] - values[c[keep]]).astype(np.float64)
    fam_key = _keys(families[keep])
    known = fam_key != ""
    family_key = None if judge_family is None or pd.isna(judge_family) else str(judge_family).strip().casefold()
    family_key = family_key or None
    model_key = _keys(models[keep])
    same_family = known & (fam_key == family_key) if family_key else np.zeros(len(residual), bool)
    other = known & (fam_key != family_key) if family_key else np.zeros(len(residual), bool)
    same_model = (model_key == bare.casefold()) & ~other if family_key else np.zeros(len(residual), bool)
    kept_clusters, groups = np.unique(groups_all[keep], return_inverse=True)
    n_clusters = len(kept_clusters)

    masks = {"same_model": same_model, "same_family": same_family}
    per_cluster = np.column_stack([
        np.bincount(groups, weights=w, minlength=n_clusters) for mask in (same_model, same_family, other)
        for w in (residual * mask, mask.astype(np.float64))
    ]) if len(residual) else np.zeros((0, 6))
    samples = None
    effects = {}
    for name, mask in masks.items():
        entry = effects[name] = _effect(name, residual, mask, other, family_key, bare)
        if not entry.measurable:
            continue
        if n_clusters >= 2:
            if interval == "posterior":
                low, high, undefined = _posterior(residual, mask, other, groups, n_clusters, entry.value,
                                                  values, draws=resamples, seed=seed, level=level)
            elif interval == "studentized":
                low, high, undefined = _studentized(residual, mask, other, groups, n_clusters, entry.value,
                                                    resamples=resamples, seed=seed, level=level)
            else:
                if samples is None:
                    sums = resample_sums(per_cluster, resamples=resamples, seed=seed)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        other_mean = sums[:, 4] / sums[:, 5]
                        samples = {"same_model": sums[:, 0] / sums[:, 1] - other_mean,
                                   "same_family": sums[:, 2] / sums[:, 3] - other_mean}
                if interval == "expanded":
                    # the units behind the effect: clusters holding same-X items, or other-family ones
                    units = min(np.count_nonzero(np.bincount(groups, weights=mask, minlength=n_clusters)),
                                np.count_nonzero(np.bincount(groups, weights=other, minlength=n_clusters)))
                    low, high, undefined = percentile_interval(samples[name], expanded_level(level, units))
                elif interval == "bca":
                    jackknife, weights = _jackknife(per_cluster)
                    low, high, undefined = bca_interval(samples[name], entry.value, jackknife[name], weights, level)
                else:
                    low, high, undefined = percentile_interval(samples[name], level)
            entry.ci_low, entry.ci_high, entry.undefined_resamples = low, high, undefined
        else:
            entry.reason = "all items belong to one task cluster, so no interval or p-value can be computed"
        _add_ols_p_value(entry, residual, mask, other, categories[keep], groups, n_clusters)
    return SelfPreference(bare, judge_family, int(len(residual)),
                          {"resamples": int(resamples), "seed": int(seed), "cluster": True, "level": float(level)},
                          *effects.values()).to_json()


def _posterior(residual: np.ndarray, same: np.ndarray, other: np.ndarray, groups: np.ndarray, n_clusters: int,
               point: float, values: np.ndarray, *, draws: int, seed: int, level: float) -> tuple[float, float, int]:
    """Interval of a difference of two mean residuals from the Dirichlet-process posterior over task clusters.

    Each draw weighs the clusters by Dirichlet(1, ..., 1) weights (Rubin's 1981 Bayesian bootstrap of clusters)
    and adds, to each of the two groups, prior atoms of total concentration half an item whose residuals are
    those of a uniformly drawn cell of the K x K table (judge minus consensus): the posterior bootstrap of
    :mod:`workbench.stats.intervals.posterior` (Ferguson 1973; Lyddon, Walker and Holmes 2018). The expanded percentile
    interval, the default before it, covered the effect on real data (Play Favorites, all nine judges, golden sets
    of 50 items drawn by item, by prompt or by whole prompts) in 75% to 91% of golden sets: most residuals are 0
    and a sample without the rare non-zero ones has resamples without them too; the posterior's covered 92% or
    more at 50 to 400 items (``benchmarks/coverage_categories.py``, ``benchmarks/README.md``).
    """
    def by_cluster(w: np.ndarray) -> np.ndarray:
        return np.bincount(groups, weights=w, minlength=n_clusters)

    columns = np.column_stack([by_cluster(residual * same), by_cluster(same.astype(np.float64)),
                               by_cluster(residual * other), by_cluster(other.astype(np.float64))])
    rng = np.random.default_rng(seed)
    kinds, weights = cluster_weights(columns, draws=draws, rng=rng)
    sums = weights @ kinds
    mean_size = len(residual) / n_clusters
    cell_residuals = (values[None, :] - values[:, None]).ravel().astype(np.float64)
    means = []
    for total, count in ((sums[:, 0], sums[:, 1]), (sums[:, 2], sums[:, 3])):
        a, where = prior_atoms(draws=draws, cells=cell_residuals.size, concentration=PRIOR_ITEMS / 2 / mean_size,
                               rng=rng)
        mass = a * mean_size
        with np.errstate(divide="ignore", invalid="ignore"):
            means.append((total + (mass * cell_residuals[where]).sum(axis=1)) / (count + mass.sum(axis=1)))
    return posterior_interval(means[0] - means[1], point, level)


def _studentized(residual: np.ndarray, same: np.ndarray, other: np.ndarray, groups: np.ndarray, n_clusters: int,
                 point: float, *, resamples: int, seed: int, level: float) -> tuple[float, float, int]:
    """Studentized (bootstrap-t) interval of a difference of two means over clustered items.

    Each resample's standard error is the cluster-robust one (a sandwich over
    clusters, with the G / (G - 1) correction), computed from per-cluster
    sums and cross-products that are linear in the cluster multiplicities, so
    it costs one more matrix product, not a nested bootstrap (Efron and
    Tibshirani 1993, ch. 12.5; Davison and Hinkley 1997, ch. 5.2).
    """
    def by_cluster(w: np.ndarray) -> np.ndarray:
        return np.bincount(groups, weights=w, minlength=n_clusters)

    s_a, n_a = by_cluster(residual * same), by_cluster(same.astype(np.float64))
    s_b, n_b = by_cluster(residual * other), by_cluster(other.astype(np.float64))
    columns = np.column_stack([s_a, n_a, s_a * s_a, s_a * n_a, n_a * n_a, s_b, n_b, s_b * s_b, s_b * n_b, n_b * n_b,
                               s_a * s_b, s_a * n_b, n_a * s_b, n_a * n_b])
    sums = resample_sums(columns, resamples=resamples, seed=seed)
    diff, se = _difference_and_se(sums, n_clusters)
    _, se_hat = _difference_and_se(columns.sum(axis=0)[None], n_clusters)
    if not se_hat[0] > 0:
        return percentile_interval(diff, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (diff - point) / se
    q_low, q_high, undefined = percentile_interval(t, level)  # quantiles of the finite t statistics
    return float(point - q_high * se_hat[0]), float(point - q_low * se_hat[0]), undefined


def _difference_and_se(sums: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Difference of the two means and its cluster-robust standard error, row by row of summed cluster columns."""
    (s_a, n_a, s_aa, s_an, n_aa, s_b, n_b, s_bb, s_bn, n_bb, s_ab, s_a_nb, n_a_sb, n_ab) = sums.T
    with np.errstate(divide="ignore", invalid="ignore"):
        m_a, m_b = s_a / n_a, s_b / n_b
        aa = s_aa - 2 * m_a * s_an + m_a**2 * n_aa      # sum over clusters of (S_a - m_a N_a)^2
        bb = s_bb - 2 * m_b * s_bn + m_b**2 * n_bb
        ab = s_ab - m_b * s_a_nb - m_a * n_a_sb + m_a * m_b * n_ab
        var = (aa / n_a**2 - 2 * ab / (n_a * n_b) + bb / n_b**2) * n_clusters / (n_clusters - 1)
        return m_a - m_b, np.sqrt(np.clip(var, 0, None))


def _jackknife(per_cluster: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Both effects with one cluster left out, per kind of cluster, and the count of each kind."""
    kinds, counts = np.unique(per_cluster, axis=0, return_counts=True)
    left = per_cluster.sum(axis=0)[None] - kinds
    with np.errstate(divide="ignore", invalid="ignore"):
        other_mean = left[:, 4] / left[:, 5]
        effects = {"same_model": left[:, 0] / left[:, 1] - other_mean,
                   "same_family": left[:, 2] / left[:, 3] - other_mean}
    return effects, counts.astype(np.float64)


def _effect(name: str, residual: np.ndarray, mask: np.ndarray, other: np.ndarray,
            family_key: str | None, bare: str) -> Effect:
    entry = Effect(n=int(mask.sum()), n_other_family=int(other.sum()))
    what = "the judge's own model" if name == "same_model" else "the judge's family"
    if family_key is None:
        entry.reason = "the judge has no family, so same-family items cannot be told from others"
    elif not mask.any():
        who = f"model {bare!r}" if name == "same_model" else f"family {family_key!r}"
        entry.reason = (f"no item was produced by {what} ({who}), so self-preference is not measurable; "
                        "add items from it to the golden set")
    elif not other.any():
        entry.reason = "no item was produced by another family, so there is nothing to compare with"
    else:
        entry.value, entry.measurable = float(residual[mask].mean() - residual[other].mean()), True
    return entry


def _add_ols_p_value(entry: Effect, residual, mask, other, categories, groups, n_clusters) -> None:
    """The cluster-robust OLS p-value of the same-X indicator with category fixed effects, or why there is none."""
    rows = mask | other
    y = residual[rows]
    indicator = mask[rows].astype(np.float64)
    cat_codes, cat_names = pd.factorize(pd.Series(categories[rows], dtype=object), sort=True)
    dummies = np.eye(len(cat_names))[cat_codes][:, 1:]
    x = np.column_stack([np.ones(len(y)), indicator, dummies])
    group_ids = np.unique(groups[rows], return_inverse=True)[1]
    if len(np.unique(group_ids)) < 2:
        entry.reason = entry.reason or "fewer than two task clusters, so no cluster-robust p-value"
    elif np.linalg.matrix_rank(x) < x.shape[1]:
        entry.reason = ("every category holds only same-family or only other-family items, so the category "
                        "fixed effects absorb the effect and no p-value can be computed")
    elif len(y) <= x.shape[1]:  # statsmodels' small-sample factor (n - 1) / (n - k) divides by zero
        entry.reason = "too few items for the OLS of the effect within categories, so no p-value"
    elif np.ptp(y) == 0:
        entry.reason = "every residual is the same, so the OLS has no variation to test"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params, p_values = cluster_robust_ols(y, x, group_ids)
        p = float(p_values[1])
        entry.p_value, entry.ols_coefficient = (p if np.isfinite(p) else None), float(params[1])


def cluster_robust_ols(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients and two-sided p-values of an OLS of ``y`` on ``x`` with cluster-robust (CR1) errors.

    The same floats as ``statsmodels.regression.linear_model.OLS(y, x).fit(cov_type="cluster",
    cov_kwds={"groups": groups})``'s ``params`` and ``pvalues``, by statsmodels' own steps (its pseudo-inverse
    and its cluster sandwich, below), without importing statsmodels: its model classes pull in scipy.stats and the
    formula machinery (half a second of every computed report), and even its tools module is 0.08 s.
    ``groups`` are integer cluster codes.

    Examples
    --------
    >>> x = np.column_stack([np.ones(6), [0, 0, 0, 1, 1, 1]])
    >>> params, p = cluster_robust_ols(np.array([0., 1., 0., 2., 3., 2.]), x, np.array([0, 0, 1, 1, 2, 2]))
    >>> [round(float(v), 4) for v in params]
    [0.3333, 2.0]
    """
    pinv_x = _pinv(x)  # OLS.fit(method="pinv"), statsmodels' default
    normalized_cov = np.dot(pinv_x, np.transpose(pinv_x))
    params = np.dot(pinv_x, y)
    residual = y - np.dot(x, params)
    cov = _cluster_sandwich(x * residual[:, None], normalized_cov, groups)
    z = params / np.sqrt(np.diag(cov))
    # the normal reference statsmodels uses for cluster errors (use_t=False)
    return params, special_functions().ndtr(-np.abs(z)) * 2


def _pinv(x: np.ndarray, rcond: float = 1e-15) -> np.ndarray:
    """The pseudo-inverse as ``statsmodels.tools.tools.pinv_extended`` computes it (numpy's, step for step)."""
    u, s, vt = np.linalg.svd(np.asarray(x).conjugate(), False)
    cutoff = rcond * np.maximum.reduce(s)
    s = np.where(s > cutoff, 1.0 / np.where(s > cutoff, s, 1.0), 0.0)
    return np.dot(np.transpose(vt), np.multiply(s[:, np.newaxis], np.transpose(u)))


def _cluster_sandwich(scores: np.ndarray, bread: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """CR1 covariance as ``statsmodels.stats.sandwich_covariance.cov_cluster((scores, bread), groups)`` computes
    it: the scores summed by cluster (bincount), their cross-product between two breads, and the small-sample
    factor G / (G - 1) * (n - 1) / (n - k)."""
    n_groups = len(np.unique(groups))
    nobs, k_params = scores.shape
    sums = np.array([np.bincount(groups, weights=scores[:, col]) for col in range(k_params)]).T
    meat = np.dot(sums.T, sums)
    cov = np.dot(np.dot(bread, meat), bread.T)
    cov *= n_groups / (n_groups - 1.0) * ((nobs - 1.0) / float(nobs - k_params))
    return cov


def _keys(names: np.ndarray) -> np.ndarray:
    """Names compared case-insensitively; missing ones become ''.

    Each distinct name is folded once (a golden set has a handful of producers and 10,000 items).

    >>> _keys(np.array([" GPT-4o", None, "gpt-4o", float("nan")], dtype=object)).tolist()
    ['gpt-4o', '', 'gpt-4o', '']
    """
    folded = {name: "" if pd.isna(name) else str(name).strip().casefold() for name in set(names)}
    out = np.empty(len(names), dtype=object)
    out[:] = [folded[name] for name in names]
    return out


def _names(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (pd.Series, pd.Index)):
        arr = values.to_numpy(dtype=object)
    else:
        arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one entry per item), got shape {arr.shape}")
    return arr
