"""The Alternative Annotator Test: may the judge replace a human rater?

Calderon, Reichart and Dror (2025), "The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with
LLMs", ACL 2025; procedure as in the authors' ``alt_test`` (github
nitaytech/AltTest, ``alt_test_example.ipynb``) and DESIGN section 5:

1. keep items with at least two human labels and a judge score;
2. for each rater with at least ``min_items`` kept items, and each of their
   items, score the judge and the rater against the *other* raters of the
   item (``accuracy``: share of the others' labels equal to the score;
   ``neg_rmse``: minus the root mean squared difference from them);
3. per item, ``W_judge = 1[S_judge >= S_rater]`` and ``W_rater = 1[S_rater >=
   S_judge]``; a one-sided one-sample t-test (``scipy.stats.ttest_1samp``,
   ``alternative="less"``) of ``d = W_rater - W_judge`` against ``epsilon``;
4. Benjamini-Yekutieli at ``q`` across raters (``statsmodels`` ``multipletests``,
   ``method="fdr_by"``); the winning rate is the share of raters rejected and
   the judge passes when it is at least 0.5; the advantage probability is the
   mean over raters of ``mean(W_judge)``.

Scores are compared through exact integer numerators (the others' count of
matches, or sum of squared differences, over the same number of others), so
ties are ties exactly as in the reference implementation.

The t-test and the correction are computed by :func:`ttest_less_pvalue` and
:func:`benjamini_yekutieli_rejections`, which give the library calls' floats
(tests/stats/ hold them to it) without their import time.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.stats._common import check_scale, special_functions
from workbench.stats.humans import check_labels, judge_codes_for

#: Suggested epsilon by kind of rater (Calderon et al. 2025, FAQ).
EPSILON_BY_RATER = {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}

ALIGNMENT_METRICS = ("accuracy", "neg_rmse")


@dataclass(slots=True)
class RaterTest:
    """One rater's one-sided test that the judge aligns with the other raters at least as well as this rater,
    less ``epsilon``; ``rejected`` after the Benjamini-Yekutieli step across raters."""

    rater: Any
    n_items: int
    p_value: float
    advantage_probability: float
    rejected: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"rater": self.rater, "n_items": self.n_items, "p_value": self.p_value, "rejected": self.rejected,
                "advantage_probability": self.advantage_probability}


@dataclass(frozen=True, slots=True)
class SkippedRater:
    """A rater with too few items that another rater also labeled and the judge scored."""

    rater: Any
    n_items: int

    def to_json(self) -> dict[str, Any]:
        return {"rater": self.rater, "n_items": self.n_items}


@dataclass(slots=True)
class AltTest:
    """The alternative-annotator test (:func:`alternative_annotator_test`, whose ``Returns`` describes each field)."""

    epsilon: float
    metric: str
    q: float
    min_items: int
    n_items: int
    winning_rate: float | None = None
    advantage_probability: float | None = None
    passed: bool | None = None
    raters: list[RaterTest] = field(default_factory=list)
    skipped_raters: list[SkippedRater] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "metric": self.metric, "q": self.q, "min_items": self.min_items,
                "winning_rate": self.winning_rate, "advantage_probability": self.advantage_probability,
                "passed": self.passed, "raters": [r.to_json() for r in self.raters],
                "skipped_raters": [r.to_json() for r in self.skipped_raters], "n_raters": len(self.raters),
                "n_items": self.n_items, "reason": self.reason}


def alternative_annotator_test(
    labels: pd.DataFrame,
    judge: Any,
    *,
    scale: Any,
    epsilon: float = 0.2,
    metric: str = "accuracy",
    q: float = 0.05,
    min_items: int = 30,
    weights: Any = None,
) -> dict[str, Any]:
    """Run the alternative-annotator test of a judge against the human raters.

    Parameters
    ----------
    labels : pandas.DataFrame
        Long form human labels, columns ``item_id``, ``rater``, ``score``.
    judge : mapping or pandas.Series from item_id to score
        The judge's scores; missing ones are ignored.
    scale : sequence of int
        Scale values, lowest first (scores are checked against it).
    epsilon : float, default 0.2
        The cost-benefit allowance given to the judge: 0.2 for expert raters,
        0.15 skilled, 0.1 crowd workers.
    metric : {"accuracy", "neg_rmse"}, default "accuracy"
        How a score is aligned with the other raters' labels; ``neg_rmse``
        for wide numeric scales.
    q : float, default 0.05
        False discovery rate of the Benjamini-Yekutieli correction.
    min_items : int, default 30
        Raters with fewer kept items are skipped (the t-test needs them).
    weights : mapping or pandas.Series from item_id to weight, optional
        Inverse inclusion probabilities of items drawn with unequal
        probabilities (the active queue): each rater's mean of ``d`` and its
        standard error become those of the Hajek ratio estimator
        (:func:`~workbench.stats.intervals.weighted.weighted_one_sided_t`), and the
        advantage probability a weighted mean. None: the unweighted test.

    Returns
    -------
    dict
        ``epsilon``, ``metric``, ``q``, ``min_items``;
        ``winning_rate`` (share of qualifying raters whose null was
        rejected), ``advantage_probability`` and ``passed``
        (``winning_rate >= 0.5``), all None when no rater qualifies;
        ``raters``: one row per qualifying rater, sorted by rater, with
        ``rater``, ``n_items``, ``p_value``, ``rejected``,
        ``advantage_probability``;
        ``skipped_raters``: [{"rater", "n_items"}] with too few items;
        ``n_raters`` (qualifying), ``n_items`` (items kept);
        ``reason``: None, or why the test could not run.
    """
    values = check_scale(scale)
    if metric not in ALIGNMENT_METRICS:
        raise ValueError(f"metric must be one of {ALIGNMENT_METRICS}, got {metric!r}")
    if not isinstance(epsilon, (int, float)) or not 0 <= epsilon < 1:
        raise ValueError(f"epsilon must be a number in [0, 1) such as 0.2, got {epsilon!r}")
    if not isinstance(q, (int, float)) or not 0 < q < 1:
        raise ValueError(f"q must be a false discovery rate strictly between 0 and 1 such as 0.05, got {q!r}")
    if not isinstance(min_items, (int, np.integer)) or min_items < 2:
        raise ValueError(f"min_items must be an integer of at least 2 such as 30, got {min_items!r}")

    frame = check_labels(labels, values)
    item_idx, items = pd.factorize(frame["item_id"])
    judge_codes = judge_codes_for(judge, items, values)
    k = len(values)
    counts = np.zeros((len(items), k), dtype=np.int64)
    np.add.at(counts, (item_idx, frame["_code"].to_numpy()), 1)
    kept_item = (counts.sum(axis=1) >= 2) & (judge_codes >= 0)

    rows = kept_item[item_idx]
    own = frame["_code"].to_numpy()[rows]
    judged = judge_codes[item_idx[rows]]
    item_counts = counts[item_idx[rows]]
    if metric == "accuracy":
        # Matches among the other raters: the rater's own label is not among them.
        rater_match = item_counts[np.arange(len(own)), own] - 1
        judge_match = item_counts[np.arange(len(own)), judged] - (judged == own)
        judge_wins, rater_wins = judge_match >= rater_match, rater_match >= judge_match
    else:
        v = values.astype(np.int64)
        sq = (v[:, None] - v[None, :]) ** 2  # squared distance between scale positions' values
        rater_ss = (item_counts * sq[own]).sum(axis=1)
        judge_ss = (item_counts * sq[judged]).sum(axis=1) - sq[judged, own]
        judge_wins, rater_wins = judge_ss <= rater_ss, rater_ss <= judge_ss

    per_label = pd.DataFrame({
        "rater": frame["rater"].to_numpy()[rows],
        "w_judge": judge_wins.astype(np.float64),
        "d": rater_wins.astype(np.float64) - judge_wins.astype(np.float64),
    })
    if weights is not None:
        per_label["weight"] = pd.Series(weights, dtype=float).reindex(items[item_idx[rows]]).to_numpy()
    result = AltTest(float(epsilon), metric, float(q), int(min_items), int(kept_item.sum()))
    all_raters = sorted(pd.unique(frame["rater"]), key=str)
    grouped = dict(tuple(per_label.groupby("rater", sort=False)))
    qualifying = []
    for rater in all_raters:
        group = grouped.get(rater)
        n = 0 if group is None else len(group)
        if n < min_items:
            result.skipped_raters.append(SkippedRater(_plain(rater), n))
        else:
            qualifying.append((rater, group))
    if not qualifying:
        result.reason = (
            f"no rater has {min_items} or more items that another rater also labeled and the judge scored"
            if len(frame) else "there are no human labels"
        )
        return result.to_json()

    for rater, group in qualifying:
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            # d constant (e.g. all ties): t = -inf gives p = 0, as in the reference; mean(d) == epsilon gives NaN.
            warnings.simplefilter("ignore", RuntimeWarning)
            if weights is None:
                p = ttest_less_pvalue(group["d"].to_numpy(), epsilon)
            else:
                from workbench.stats.intervals.weighted import weighted_one_sided_t

                p = weighted_one_sided_t(group["d"].to_numpy(), group["weight"].to_numpy(), epsilon)
        advantage = (float(group["w_judge"].mean()) if weights is None else
                     float(np.average(group["w_judge"], weights=group["weight"])))
        result.raters.append(RaterTest(_plain(rater), int(len(group)), p, advantage))
    # A NaN p-value never rejects but still counts among the m hypotheses, as in the reference.
    p_values = [r.p_value for r in result.raters]
    rejected = benjamini_yekutieli_rejections(np.where(np.isnan(p_values), 1.0, p_values), q)
    for row, rej in zip(result.raters, rejected):
        row.rejected = bool(rej)
    result.winning_rate = float(np.mean(rejected))
    result.advantage_probability = float(np.mean([r.advantage_probability for r in result.raters]))
    result.passed = result.winning_rate >= 0.5
    return result.to_json()


def ttest_less_pvalue(sample: np.ndarray, popmean: float) -> float:
    """p-value of a one-sample t-test that the mean of ``sample`` is less than ``popmean``.

    The same float as ``scipy.stats.ttest_1samp(sample, popmean, alternative="less").pvalue``, step for step
    (scipy's mean, centred second moment and Student t CDF), without importing scipy.stats: that import is
    half a second of every computed report. A constant sample gives t = -inf, +inf or NaN, as in scipy.

    Examples
    --------
    >>> round(ttest_less_pvalue(np.array([0.0, -1.0, 0.0, -1.0, 1.0, -1.0]), 0.2), 4)  # t = -1.6, 5 df
    0.0852
    """
    a = np.asarray(sample, dtype=np.float64)
    n = a.shape[0]
    centred = a - np.mean(a, keepdims=True)
    var = np.mean(centred**2) * (np.float64(n) / (np.float64(n) - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(np.mean(a) - np.float64(popmean), np.sqrt(var / n))
    return float(special_functions().stdtr(np.float64(n - 1), t))


def benjamini_yekutieli_rejections(p_values: Any, q: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at false discovery rate ``q``.

    Benjamini and Yekutieli (2001), valid under any dependence; the same booleans as
    ``statsmodels.stats.multitest.multipletests(p_values, alpha=q, method="fdr_by")[0]`` by the same
    arithmetic, without importing statsmodels (it pulls in scipy.stats).

    Examples
    --------
    >>> benjamini_yekutieli_rejections([0.001, 0.04, 0.2], 0.05).tolist()
    [True, False, False]
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p)
    ranked = np.take(p, order)
    m = len(ranked)
    thresholds = np.arange(1, m + 1) / float(m) / np.sum(1.0 / np.arange(1, m + 1))
    reject = ranked <= thresholds * q
    if reject.any():
        reject[:max(np.nonzero(reject)[0])] = True  # step-up: every smaller p-value is rejected too
    out = np.empty_like(reject)
    out[order] = reject
    return out


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
