"""Agreement per category, with intervals that hold on small and uneven categories, and the weak categories.

Each category gets its value of every metric of the whole golden set. Its intervals:

* exact agreement: the Wilson interval on the effective number of items, as for the whole set
  (:func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`);
* Krippendorff's alpha and the mean signed error: the Dirichlet-process posterior over the category's task
  clusters with a prior of one item (:mod:`workbench.stats.intervals.posterior`). A category is small, and its alpha is
  decided by a few items off the common label; on real data with categories of 12 to 200 items the cluster
  bootstrap's BCa intervals covered the category's own value in as few as 42% of golden sets (alpha) and 61%
  (mean signed error), the posterior's in 93% or more in every pool, design and size measured
  (``benchmarks/coverage_categories.py``, ``benchmarks/README.md``);
* a category whose items all belong to one task cluster: nothing shows how its value would vary from task to
  task, so alpha and the mean signed error get the whole range the metric can take, and a reason says why.

A category with fewer items than ``min_category_items`` (the gate policy's, default 10) keeps its values but gets
no interval and is not tested against the rest; ``reason`` says why. From that size up every metric with a value
has an interval, and one never has zero width while the draws differ.

A category is flagged when its exact agreement is below that of all other items: Newcombe's hybrid score
interval for the difference of two proportions (Newcombe 1998, method 10: the floats of
``statsmodels.stats.proportion.confint_proportions_2indep(method="newcomb")``), on effective counts (each side
divided by its cluster design effect), at a Bonferroni-adjusted level over the categories tested, so that testing
every category keeps the family error rate at ``1 - level``. Score intervals keep their coverage for a category
of a handful of items, where a bootstrap of the difference would flag one disagreeing item as "significantly
worse".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.stats._common import cluster_codes, score_codes
from workbench.stats.agreement import stacked_metrics
from workbench.stats.intervals.bootstrap import agreement_with_intervals
from workbench.stats.intervals.methods import CATEGORY_INTERVAL
from workbench.stats.intervals.posterior import PRIOR_ITEMS, confusion_draws, posterior_interval
from workbench.stats.intervals.proportion import METHOD as PROPORTION_METHOD
from workbench.stats.intervals.proportion import newcombe_difference_interval
from workbench.stats.intervals.records import MetricInterval

#: The per-category measurements shown beside each category.
CATEGORY_METRICS = ("exact_agreement", "krippendorff_alpha_ordinal", "mean_signed_error")
#: The metrics whose per-category interval is the posterior's (exact agreement keeps its Wilson interval).
POSTERIOR_METRICS = ("krippendorff_alpha_ordinal", "mean_signed_error")
#: Default of the gate policy's ``min_category_items``: a smaller category gets no interval.
MIN_CATEGORY_ITEMS = 10


@dataclass(frozen=True, slots=True)
class WorseThanRest:
    """The category's exact agreement minus that of every other item, with Newcombe's interval at ``level``;
    ``significant`` when the whole interval is below 0."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    significant: bool
    reason: str | None

    @classmethod
    def not_tested(cls, level: float, reason: str) -> WorseThanRest:
        return cls(None, None, None, level, False, reason)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(slots=True)
class CategoryAgreement:
    """One category's agreement: ``metrics`` holds :data:`CATEGORY_METRICS` by name, ``intervals`` how each
    interval is made, ``reason`` why the category has no interval (None if it has), ``reasons`` a sentence per
    metric whose value or interval is missing or to be read with care."""

    n_items: int
    n_clusters: int
    metrics: dict[str, MetricInterval]
    intervals: dict[str, str]
    reason: str | None = None
    reasons: dict[str, str] = field(default_factory=dict)
    worse_than_rest: WorseThanRest | None = None

    @classmethod
    def from_bootstrap(cls, result: dict[str, Any]) -> CategoryAgreement:
        """The category's values from :func:`agreement_with_intervals` on its items (intervals refined later)."""
        metrics, reasons = result["metrics"], result["reasons"]
        return cls(result["n_items"], result["n_clusters"],
                   {m: MetricInterval(**metrics[m]) for m in CATEGORY_METRICS},
                   {"exact_agreement": PROPORTION_METHOD, **{m: CATEGORY_INTERVAL for m in POSTERIOR_METRICS}},
                   reasons={m: reasons[m] for m in CATEGORY_METRICS if m in reasons})

    @property
    def exact_agreement(self) -> MetricInterval:
        return self.metrics["exact_agreement"]

    def to_json(self) -> dict[str, Any]:
        return {"n_items": self.n_items, "n_clusters": self.n_clusters,
                **{m: self.metrics[m].to_json() for m in CATEGORY_METRICS},
                "intervals": dict(self.intervals), "reason": self.reason, "reasons": dict(self.reasons),
                "worse_than_rest": self.worse_than_rest.to_json() if self.worse_than_rest else None}


def per_category_agreement(
    consensus: Any,
    judge: Any,
    categories: Any,
    clusters: Any = None,
    *,
    scale: Any,
    pass_threshold: int,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    min_category_items: int = MIN_CATEGORY_ITEMS,
) -> dict[str, dict[str, Any]]:
    """Agreement of the judge in each category, and whether it is worse there than elsewhere.

    Parameters
    ----------
    consensus, judge : array-like of int, shape (n_items,)
        Scores aligned by position (items with both).
    categories : array-like of str, shape (n_items,)
        The category of each item.
    clusters : array-like, shape (n_items,), optional
        Task id per item.
    scale, pass_threshold, resamples, seed, level
        As in :func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`; ``resamples`` is also the number of
        posterior draws.
    min_category_items : int, default 10
        A category with fewer items (with both labels) gets values but no interval, and is not tested against
        the rest. At least 1.

    Returns
    -------
    dict
        {category: {"n_items", "n_clusters", "exact_agreement", "krippendorff_alpha_ordinal",
        "mean_signed_error" (each {"value", "ci_low", "ci_high"}, NaN where there is none), "intervals"
        ({metric: method}), "reason" (None, or why the category has no interval), "reasons" ({metric:
        sentence} for a value or interval missing, or an interval to read with care), "worse_than_rest":
        {"difference", "ci_low", "ci_high", "level", "significant", "reason"}}}, categories in sorted order.
        The difference is the category's exact agreement minus that of every other item; ``significant`` is
        True when its whole interval is below 0.
    """
    if isinstance(min_category_items, bool) or not isinstance(min_category_items, (int, np.integer)) \
            or min_category_items < 1:
        raise ValueError(f"min_category_items must be a whole number of at least 1, got {min_category_items!r}")
    c = np.asarray(consensus)
    j = np.asarray(judge)
    cats = pd.Series(np.asarray(categories, dtype=object)).fillna("default").astype(str).to_numpy(dtype=object)
    groups = np.arange(len(c)) if clusters is None else np.asarray(clusters, dtype=object)
    names = sorted(set(cats))
    entries = {}
    for name in names:
        mask = cats == name
        entries[name] = CategoryAgreement.from_bootstrap(agreement_with_intervals(
            c[mask], j[mask], groups[mask], scale=scale, pass_threshold=pass_threshold, resamples=resamples,
            seed=seed, level=level))
    tested = [name for name in names if entries[name].n_items >= min_category_items]
    flag_level = 1 - (1 - level) / max(1, len(tested))
    for name in names:
        entry = entries[name]
        mask = cats == name
        if entry.n_items < min_category_items:
            why = too_small(entry.n_items, min_category_items)
            entry.reason = why
            for m in CATEGORY_METRICS:
                entry.metrics[m].ci_low = entry.metrics[m].ci_high = float("nan")
                entry.reasons[m] = why
            entry.worse_than_rest = WorseThanRest.not_tested(flag_level, why)
        else:
            _posterior_intervals(entry, c[mask], j[mask], groups[mask], scale=scale,
                                 pass_threshold=pass_threshold, draws=resamples, seed=seed, level=level)
            entry.worse_than_rest = _worse_than_rest(entry, [entries[o] for o in names if o != name], flag_level)
    return {name: entries[name].to_json() for name in names}


def too_small(n_items: int, min_category_items: int) -> str:
    """Why a category below ``min_category_items`` has no interval, in one sentence."""
    short = min_category_items - n_items
    return (f"{n_items} item{'s' if n_items != 1 else ''}: below min_category_items {min_category_items}, so no "
            f"interval; label {short} more item{'s' if short != 1 else ''} of this category for one")


def one_cluster(n_items: int) -> str:
    return (f"all {n_items} items of this category belong to one task cluster, so nothing shows how the value "
            "varies from task to task: the interval is the whole range the metric can take")


def _posterior_intervals(entry: CategoryAgreement, consensus: np.ndarray, judge: np.ndarray, clusters: np.ndarray, *,
                         scale: Any, pass_threshold: int, draws: int, seed: int, level: float) -> None:
    """Alpha's and the mean signed error's intervals from the posterior over the category's task clusters."""
    values = np.asarray(sorted(int(v) for v in scale), dtype=np.int64)
    k = len(values)
    pass_index = int(np.searchsorted(values, int(pass_threshold)))
    cc = score_codes(consensus, name="consensus", scale=values)
    jc = score_codes(judge, name="judge", scale=values)
    keep = (cc >= 0) & (jc >= 0)
    codes, _ = cluster_codes(clusters, len(cc))
    _, groups = np.unique(codes[keep], return_inverse=True)
    n_clusters = int(groups.max()) + 1 if groups.size else 0
    cells = k * k
    per_cluster = np.bincount(groups * cells + cc[keep] * k + jc[keep],
                              minlength=n_clusters * cells).reshape(n_clusters, cells)
    samples = None
    if n_clusters >= 2:
        samples = stacked_metrics(confusion_draws(per_cluster, draws=draws, seed=seed, prior_items=PRIOR_ITEMS),
                                  values, pass_index)
    span = float(values[-1] - values[0])
    for m in POSTERIOR_METRICS:
        metric = entry.metrics[m]
        point = metric.value
        metric.ci_low = metric.ci_high = float("nan")
        if not np.isfinite(point):
            continue  # undefined here: the reason from the point estimate stays
        entry.reasons.pop(m, None)  # the bootstrap's sentences do not describe this interval
        if samples is None:
            if entry.n_items >= 2:
                low, high = (-1.0, 1.0) if m == "krippendorff_alpha_ordinal" else (-span, span)
                metric.ci_low, metric.ci_high = min(low, point), max(high, point)
                entry.reasons[m] = one_cluster(entry.n_items)
            continue
        metric.ci_low, metric.ci_high, undefined = posterior_interval(samples[m], point, level)
        if undefined > 0.05 * draws:
            entry.reasons[m] = (f"{m} is undefined in {undefined / draws:.0%} of the posterior draws, so its "
                                   "interval describes only the rest; label more items of this category")


def _worse_than_rest(cat: CategoryAgreement, rest: list[CategoryAgreement], level: float) -> WorseThanRest:
    n_rest = sum(r.n_items for r in rest)
    if not rest or n_rest == 0 or cat.n_items == 0:
        return WorseThanRest.not_tested(level, "no other category to compare with")
    agree_rest = sum(r.exact_agreement.value * r.n_items for r in rest if r.n_items)
    deff_rest = sum(_design_effect(r) * r.n_items for r in rest if r.n_items) / n_rest
    n_eff = cat.n_items / _design_effect(cat)
    n_rest_eff = n_rest / deff_rest
    p_cat, p_rest = cat.exact_agreement.value, agree_rest / n_rest
    low, high = newcombe_difference_interval(p_cat * n_eff, n_eff, p_rest * n_rest_eff, n_rest_eff, level=level)
    return WorseThanRest(float(p_cat - p_rest), float(low), float(high), level, bool(high < 0), None)


def _design_effect(category: CategoryAgreement) -> float:
    """The design effect of the category's exact agreement (1 where its interval had none)."""
    deff = category.exact_agreement.design_effect
    return 1.0 if deff is None else deff
