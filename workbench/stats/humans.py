"""The human ceiling: how well the reviewers agree with each other, and the judge with them.

A judge cannot be expected to agree with the consensus more than careful
humans agree among themselves; these numbers put its agreement in that light,
and compare judge and humans like for like (same items, same pairing).
"""

from __future__ import annotations

from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from workbench.stats._common import as_score_map, check_frame, check_scale, score_codes

LABEL_COLUMNS = ("item_id", "rater", "score")


def labels_frame(human: dict[Any, dict[Any, Any]]) -> pd.DataFrame:
    """``{item: {rater: score}}`` as the long frame :func:`human_ceiling` reads (item_id, rater, score); built column
    by column, which pandas converts at once rather than row by row."""
    items, raters, scores = [], [], []
    for item, by_rater in human.items():
        items.extend([item] * len(by_rater))
        raters.extend(by_rater)
        scores.extend(by_rater.values())
    if not items:  # columns of no rows are objects, as pandas makes them from no rows
        return pd.DataFrame([], columns=list(LABEL_COLUMNS))
    return pd.DataFrame(dict(zip(LABEL_COLUMNS, (items, raters, scores))))


def human_ceiling(labels: pd.DataFrame, judge: Any = None, *, scale: Any, weights: Any = None) -> dict[str, Any]:
    """Agreement among the human raters, and of the judge with each of them.

    Parameters
    ----------
    labels : pandas.DataFrame
        Long form, one row per label, columns ``item_id``, ``rater``, ``score``
        (a value of ``scale``). Rows with a missing score are ignored.
    judge : mapping or pandas.Series from item_id to score, optional
        The judge's score per item; missing scores are ignored.
    scale : sequence of int
        Scale values, lowest first.
    weights : mapping or pandas.Series from item_id to weight, optional
        Item weights ``1 / pi`` when the labeled items are a designed sample (the active queue): the two
        pairwise numbers are then weighted means over items (Hajek), describing the whole golden set rather
        than the items the design chose. Alpha among the raters stays unweighted. A missing item weighs 1.

    Returns
    -------
    dict
        ``krippendorff_alpha_ordinal``: ``krippendorff.alpha(reliability_data=
        raters x items, level_of_measurement="ordinal", value_domain=scale)``
        over all labels;
        ``human_pairwise_agreement``: for each item with at least two labels,
        the share of pairs of its labels that are equal, averaged over items;
        ``judge_human_pairwise_agreement``: on the same items, the share of
        the item's human labels equal to the judge's score, averaged over
        items (None without a judge). When a judge is given, both pairwise
        numbers use only items the judge scored, so they compare like for
        like; a judge that behaves like one more rater scores the same as the
        humans in expectation.
        ``judge_minus_human_se``: the standard error of judge-human minus human-human agreement, paired by
        item (None without a judge or with fewer than two such items);
        ``n_items_pairwise``: items behind the two pairwise numbers;
        ``n_items``, ``n_raters``, ``n_labels``: all labels given;
        ``reasons``: {name: sentence} for each NaN number.

    Examples
    --------
    >>> labels = pd.DataFrame({"item_id": [1, 1, 2, 2, 3, 3], "rater": list("ababab"),
    ...                        "score": [1, 1, 0, -1, 0, 0]})
    >>> r = human_ceiling(labels, {1: 1, 2: -1, 3: 0}, scale=(-1, 0, 1))
    >>> round(r["human_pairwise_agreement"], 3), round(r["judge_human_pairwise_agreement"], 3)
    (0.667, 0.833)
    """
    values = check_scale(scale)
    frame = check_labels(labels, values)
    k = len(values)
    reasons: dict[str, str] = {}
    item_idx, items = pd.factorize(frame["item_id"])
    raters = pd.factorize(frame["rater"], sort=True)[1]

    alpha = _alpha_over_raters(frame, values, reasons)

    counts = np.zeros((len(items), k), dtype=np.int64)
    np.add.at(counts, (item_idx, frame["_code"].to_numpy()), 1)
    m = counts.sum(axis=1)
    use = m >= 2
    judge_codes = None
    if judge is not None:
        judge_codes = judge_codes_for(judge, items, values)
        use &= judge_codes >= 0

    human = judge_human = float("nan")
    difference_se = None
    n_pairwise = int(use.sum())
    if n_pairwise == 0:
        why = ("no item has labels from two raters" if judge is None
               else "no item scored by the judge has labels from two raters")
        reasons["human_pairwise_agreement"] = why
        if judge is not None:
            reasons["judge_human_pairwise_agreement"] = why
    else:
        cu, mu = counts[use], m[use]
        w = None
        if weights is not None:
            w = pd.Series(weights, dtype="float64").reindex(items[use]).fillna(1.0).to_numpy()
            if not np.isfinite(w).all() or (w <= 0).any():
                raise ValueError("weights must be positive and finite (1 / inclusion probability), one per item")
        per_human = (cu * (cu - 1)).sum(axis=1) / (mu * (mu - 1))
        human = float(np.average(per_human, weights=w))
        if judge_codes is not None:
            per_judge = cu[np.arange(len(cu)), judge_codes[use]] / mu
            judge_human = float(np.average(per_judge, weights=w))
            difference_se = _paired_se(per_judge - per_human, w)

    return {
        "krippendorff_alpha_ordinal": alpha,
        "human_pairwise_agreement": human,
        "judge_human_pairwise_agreement": judge_human if judge is not None else None,
        "judge_minus_human_se": difference_se,
        "n_items_pairwise": n_pairwise,
        "n_items": int(len(items)),
        "n_raters": int(len(raters)),
        "n_labels": int(len(frame)),
        "reasons": reasons,
    }


def _paired_se(d: np.ndarray, w: np.ndarray | None) -> float | None:
    """Standard error of the (weighted) mean of per-item differences, items as independent draws.

    ``n / (n - 1) * sum(w^2 (d - mean)^2) / (sum w)^2``: the usual ``s / sqrt(n)`` with equal weights, the
    linearised Hajek variance with unequal ones.
    """
    n = len(d)
    if n < 2:
        return None
    w = np.ones(n) if w is None else w
    mean = np.average(d, weights=w)
    return float(np.sqrt(n / (n - 1) * np.sum(w**2 * (d - mean) ** 2) / np.sum(w) ** 2))


def check_labels(labels: Any, values: np.ndarray) -> pd.DataFrame:
    """Validated copy of a long label frame with a ``_code`` column (scale position); drops missing scores."""
    frame = check_frame(labels, name="labels", columns=LABEL_COLUMNS)
    frame = frame.loc[~pd.isna(frame["score"]), list(LABEL_COLUMNS)].copy()
    if frame["item_id"].isna().any() or frame["rater"].isna().any():
        raise ValueError("labels has a row without an item_id or a rater; every label needs both")
    frame["_code"] = score_codes(frame["score"], name="labels", scale=values)
    # frame.duplicated(["item_id", "rater"]) on one integer key a label: the same flags, a fraction of the time
    items, raters = pd.factorize(frame["item_id"])[0], pd.factorize(frame["rater"])[0]
    dup = pd.Series(items.astype(np.int64) * (int(raters.max(initial=0)) + 1) + raters).duplicated().to_numpy()
    if dup.any():
        row = frame[dup].iloc[0]
        raise ValueError(
            f"rater {row['rater']!r} labeled item {row['item_id']!r} more than once; keep one label per rater and item"
        )
    return frame


def _alpha_over_raters(frame: pd.DataFrame, values: np.ndarray, reasons: dict[str, str]) -> float:
    name = "krippendorff_alpha_ordinal"
    item_idx = pd.factorize(frame["item_id"])[0]
    pairable = frame[np.bincount(item_idx)[item_idx] >= 2] if len(frame) else frame
    if pairable.empty:
        reasons[name] = "no item has labels from two raters, so agreement among raters cannot be measured"
        return float("nan")
    if pairable["_code"].nunique() < 2:
        only = int(values[pairable["_code"].iloc[0]])
        reasons[name] = (f"every label on items with two or more raters is {only}, "
                         "so alpha has no variation to measure")
        return float("nan")
    matrix = _rater_by_item(pairable)
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                                    value_domain=values.tolist()))


def _rater_by_item(frame: pd.DataFrame) -> np.ndarray:
    """Scores as a raters x items matrix (NaN where a rater did not label an item), raters and items sorted.

    ``frame.pivot(index="rater", columns="item_id", values="score").to_numpy(dtype=float)``, filled directly
    from the sorted codes of both columns (labels are unique per rater and item: :func:`check_labels`).
    """
    rater_codes, raters = pd.factorize(frame["rater"], sort=True)
    item_codes, items = pd.factorize(frame["item_id"], sort=True)
    matrix = np.full((len(raters), len(items)), np.nan)
    matrix[rater_codes, item_codes] = frame["score"].to_numpy(dtype=np.float64)
    return matrix


def judge_codes_for(judge: Any, items: pd.Index, values: np.ndarray) -> np.ndarray:
    """Scale positions of the judge's scores for ``items`` (-1 where it has none)."""
    judge_map = as_score_map(judge, name="judge")
    codes = pd.Series(score_codes(judge_map.to_numpy(dtype=object), name="judge", scale=values),
                      index=judge_map.index)
    return codes.reindex(items).fillna(-1).to_numpy(dtype=np.int64)
