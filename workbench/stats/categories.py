"""Agreement per category, with intervals, and the categories where the judge is worse than on the rest.

Each category gets the same intervals as the whole golden set
(:func:`~workbench.stats.bootstrap.agreement_with_intervals` on its items).
A category is flagged when its exact agreement is below that of all other
items: Newcombe's hybrid score interval for the difference of two
proportions (Newcombe 1998, method 10: the floats of
``statsmodels.stats.proportion.confint_proportions_2indep(method="newcomb")``),
on effective counts (each side divided by its cluster design effect), at a
Bonferroni-adjusted level so that testing every category keeps the family
error rate at ``1 - level``. Score intervals keep their coverage for a
category of a handful of items, where a bootstrap of the difference would
flag one disagreeing item as "significantly worse".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import agreement_with_intervals
from .proportion import newcombe_difference_interval

#: The per-category measurements shown beside each category.
CATEGORY_METRICS = ("exact_agreement", "krippendorff_alpha_ordinal", "mean_signed_error")


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
        As in :func:`~workbench.stats.bootstrap.agreement_with_intervals`.

    Returns
    -------
    dict
        {category: {"n_items", "exact_agreement", "krippendorff_alpha_ordinal",
        "mean_signed_error" (each {"value", "ci_low", "ci_high"}), "reasons",
        "worse_than_rest": {"difference", "ci_low", "ci_high", "level",
        "significant", "reason"}}}, categories in sorted order. The
        difference is the category's exact agreement minus that of every other
        item; ``significant`` is True when its whole interval is below 0.
    """
    c = np.asarray(consensus)
    j = np.asarray(judge)
    cats = pd.Series(np.asarray(categories, dtype=object)).fillna("default").astype(str).to_numpy(dtype=object)
    groups = np.arange(len(c)) if clusters is None else np.asarray(clusters, dtype=object)
    names = sorted(set(cats))
    flag_level = 1 - (1 - level) / max(1, len(names))
    reports = {}
    for name in names:
        mask = cats == name
        r = agreement_with_intervals(c[mask], j[mask], groups[mask], scale=scale, pass_threshold=pass_threshold,
                                     resamples=resamples, seed=seed, level=level)
        reports[name] = (mask, r)
    out: dict[str, dict[str, Any]] = {}
    for name, (mask, r) in reports.items():
        entry = {"n_items": r["n_items"], **{m: r["metrics"][m] for m in CATEGORY_METRICS},
                 "reasons": {m: r["reasons"][m] for m in CATEGORY_METRICS if m in r["reasons"]}}
        rest = [reports[o][1] for o in names if o != name]
        entry["worse_than_rest"] = _worse_than_rest(r, rest, flag_level)
        out[name] = entry
    return out


def _worse_than_rest(cat: dict[str, Any], rest: list[dict[str, Any]], level: float) -> dict[str, Any]:
    result: dict[str, Any] = {"difference": None, "ci_low": None, "ci_high": None, "level": level,
                              "significant": False, "reason": None}
    n_rest = sum(r["n_items"] for r in rest)
    if not rest or n_rest == 0 or cat["n_items"] == 0:
        result["reason"] = "no other category to compare with"
        return result
    agree_rest = sum(r["metrics"]["exact_agreement"]["value"] * r["n_items"] for r in rest if r["n_items"])
    deff_rest = (sum(r["metrics"]["exact_agreement"].get("design_effect", 1.0) * r["n_items"] for r in rest
                     if r["n_items"]) / n_rest)
    m = cat["metrics"]["exact_agreement"]
    n_eff = cat["n_items"] / m.get("design_effect", 1.0)
    n_rest_eff = n_rest / deff_rest
    p_cat, p_rest = m["value"], agree_rest / n_rest
    low, high = newcombe_difference_interval(p_cat * n_eff, n_eff, p_rest * n_rest_eff, n_rest_eff, level=level)
    result.update(difference=float(p_cat - p_rest), ci_low=float(low), ci_high=float(high),
                  significant=bool(high < 0))
    return result
