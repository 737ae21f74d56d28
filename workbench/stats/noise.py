"""Run-to-run noise of a judge (repeats of one run) and drift between runs.

Noise: the same judge configuration scoring the same item several times.
Drift: a later run of the judge (or a new rubric or model version) against an
earlier one, on the same items.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from workbench.stats._common import as_score_map, check_frame, check_same_length, check_scale, score_codes
from workbench.stats.intervals.bootstrap import paired_bootstrap_delta

REPEAT_COLUMNS = ("item_id", "repeat", "score")


@dataclass(frozen=True, slots=True)
class PassHatK:
    """pass^k at one ``k``: the chance that k repeats of an item all equal its consensus, averaged over items."""

    k: int
    value: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class RepeatNoise:
    """How much a judge's score of an item changes when it is asked again (:func:`repeat_noise`)."""

    n_items: int
    repeats: int
    flip_rate: float
    pairwise_flip_rate: float
    krippendorff_alpha_ordinal: float
    pass_hat_k: float | None
    pass_hat_k_curve: list[PassHatK]
    n_items_with_consensus: int
    n_unscored: int
    reasons: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class StuartMaxwellTest:
    """Whether two runs give each label equally often (:func:`stuart_maxwell`); ``table`` is baseline (rows) by
    candidate (columns) counts in scale order, ``reason`` why the test is trivial or undefined."""

    statistic: float
    df: int
    p_value: float
    n_items: int
    table: list[list[int]]
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class ModelVersions:
    """The model versions the API reported in each run, and whether they differ."""

    baseline: list[str]
    candidate: list[str]
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class RunDrift:
    """What changed from an earlier (baseline) to a later (candidate) run on the same items (:func:`drift`):
    ``deltas`` and ``delta_reasons`` by metric, ``bootstrap`` the paired bootstrap's settings."""

    n_items: int
    flip_rate: float
    stuart_maxwell: StuartMaxwellTest
    deltas: dict[str, dict[str, Any]]
    delta_reasons: dict[str, str]
    n_items_with_consensus: int
    bootstrap: dict[str, Any]
    model_versions: ModelVersions

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # the fields in the JSON's key order


def pass_hat_k(n: Any, c: Any, k: int) -> float:
    """pass^k of tau-bench: the chance that k draws, all from one item's repeats, all succeed.

    Mean over items of ``C(c, k) / C(n, k)`` for an item with ``n`` repeats of
    which ``c`` succeed (Yao et al. 2024, "tau-bench").

    Parameters
    ----------
    n, c : int or array-like of int
        Repeats per item and successes per item.
    k : int
        Number of draws, 1 <= k <= min(n).

    Examples
    --------
    >>> pass_hat_k(5, 3, 1), pass_hat_k(5, 3, 2), round(pass_hat_k(5, 3, 3), 10)
    (0.6, 0.3, 0.1)
    """
    n_arr, c_arr = _counts(n, c, k)
    return float(np.mean([math.comb(ci, k) / math.comb(ni, k) for ni, ci in zip(n_arr, c_arr)]))


def pass_at_k(n: Any, c: Any, k: int) -> float:
    """pass@k: the chance that at least one of k draws from an item's repeats succeeds.

    Mean over items of ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021).

    Examples
    --------
    >>> round(pass_at_k(5, 3, 2), 10)
    0.9
    """
    n_arr, c_arr = _counts(n, c, k)
    return float(np.mean([1 - math.comb(ni - ci, k) / math.comb(ni, k) for ni, ci in zip(n_arr, c_arr)]))


def repeat_noise(repeats: pd.DataFrame, *, scale: Any, consensus: Any = None) -> RepeatNoise:
    """How much a judge's score of an item changes when it is asked again.

    Parameters
    ----------
    repeats : pandas.DataFrame
        Long form, one row per judgment, columns ``item_id``, ``repeat``,
        ``score``; a missing score (unscored judgment) is left out.
    scale : sequence of int
        Scale values, lowest first.
    consensus : mapping or pandas.Series from item_id to label, optional
        Needed for ``pass_hat_k``.

    Returns
    -------
    RepeatNoise
        Computed on items with at least two scored repeats (``n_items``):
        ``flip_rate``: share of items whose repeats are not all equal (what
        the gate checks); ``pairwise_flip_rate``: mean over items of the share
        of pairs of repeats that differ (the chance that two runs disagree);
        ``krippendorff_alpha_ordinal``: ``krippendorff.alpha`` with the
        repeats as coders (rows = repeat number) and ``value_domain=scale``;
        ``pass_hat_k``: share of items with a consensus label whose every
        repeat equals it (pass^k in the tau-bench sense, k = all repeats),
        None without consensus; ``pass_hat_k_curve``: [{"k", "value"}] for k
        = 1 .. the fewest repeats of an item; ``n_items_with_consensus``;
        ``repeats``: the most repeats of an item; ``n_unscored``;
        ``reasons``: {name: sentence} for each NaN or None number.
    """
    values = check_scale(scale)
    frame = check_frame(repeats, name="repeats", columns=REPEAT_COLUMNS)
    n_unscored = int(pd.isna(frame["score"]).sum())
    frame = frame.loc[~pd.isna(frame["score"]), list(REPEAT_COLUMNS)].copy()
    frame["_code"] = score_codes(frame["score"].to_numpy(dtype=object), name="repeats", scale=values)
    if frame.duplicated(["item_id", "repeat"]).any():
        row = frame[frame.duplicated(["item_id", "repeat"])].iloc[0]
        raise ValueError(f"item {row['item_id']!r} has repeat {row['repeat']!r} twice; give each repeat once")
    sizes = frame.groupby("item_id", sort=False)["_code"].transform("size")
    frame = frame[sizes >= 2]
    reasons: dict[str, str] = {}
    if frame.empty:
        why = "no item has two or more scored repeats, so run-to-run noise cannot be measured"
        reasons.update(dict.fromkeys(("flip_rate", "pairwise_flip_rate", "krippendorff_alpha_ordinal"), why))
        if consensus is not None:
            reasons["pass_hat_k"] = why
        return RepeatNoise(0, 0, float("nan"), float("nan"), float("nan"), None, [], 0, n_unscored, reasons)

    item_idx, items = pd.factorize(frame["item_id"])
    k = len(values)
    counts = np.zeros((len(items), k), dtype=np.int64)
    np.add.at(counts, (item_idx, frame["_code"].to_numpy()), 1)
    m = counts.sum(axis=1)
    alpha = float("nan")
    if (counts.sum(axis=0) > 0).sum() < 2:
        only = int(values[np.flatnonzero(counts.sum(axis=0))[0]])
        reasons["krippendorff_alpha_ordinal"] = (f"every repeat of every item scored {only}, "
                                                 "so alpha has no variation to measure")
    else:
        matrix = frame.pivot(index="repeat", columns="item_id", values="score").to_numpy(dtype=np.float64)
        alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                                         value_domain=values.tolist()))

    n_with_consensus, hat_k, curve = 0, None, []
    if consensus is not None:
        cmap = as_score_map(consensus, name="consensus")
        ccodes = pd.Series(score_codes(cmap.to_numpy(dtype=object), name="consensus", scale=values),
                           index=cmap.index).reindex(items).fillna(-1).to_numpy(dtype=np.int64)
        has = ccodes >= 0
        n_with_consensus = int(has.sum())
        if has.any():
            n_rep = m[has]
            hits = counts[has][np.arange(int(has.sum())), ccodes[has]]
            hat_k = float(np.mean(hits == n_rep))
            curve = [PassHatK(kk, pass_hat_k(n_rep, hits, kk)) for kk in range(1, int(n_rep.min()) + 1)]
        else:
            reasons["pass_hat_k"] = "no item with repeats has a consensus label"
    return RepeatNoise(int(len(items)), int(m.max()), float(np.mean(counts.max(axis=1) < m)),
                       float(np.mean(1 - (counts * (counts - 1)).sum(axis=1) / (m * (m - 1)))), alpha, hat_k, curve,
                       n_with_consensus, n_unscored, reasons)


def stuart_maxwell(baseline: Any, candidate: Any, *, scale: Any) -> StuartMaxwellTest:
    """Stuart-Maxwell test that two runs give each label equally often.

    Calls ``statsmodels.stats.contingency_tables.SquareTable(table).homogeneity()``
    on the table of baseline (rows) by candidate (columns) labels, restricted
    to the labels involved in at least one change: a label no item moved to
    or from adds nothing to the statistic but makes its covariance matrix
    singular. ``df`` is then the number of those labels minus one.

    Parameters
    ----------
    baseline, candidate : array-like of int, shape (n_items,)
        Scores of the same items in two runs, aligned; items missing either
        are left out.
    scale : sequence of int

    Returns
    -------
    StuartMaxwellTest
        ``statistic``, ``df``, ``p_value``, ``n_items``, ``table`` (full K x K
        counts, scale order), ``reason`` (None, or why the test is trivial or
        undefined). When no item changed label the statistic is 0 and the
        p-value 1, with a reason saying so.
    """
    values = check_scale(scale)
    b = score_codes(baseline, name="baseline", scale=values)
    c = score_codes(candidate, name="candidate", scale=values)
    check_same_length(baseline=b, candidate=c)
    both = (b >= 0) & (c >= 0)
    k = len(values)
    table = np.bincount(b[both] * k + c[both], minlength=k * k).reshape(k, k)
    n_items, counts = int(both.sum()), table.tolist()
    if not both.any():
        return StuartMaxwellTest(float("nan"), 0, float("nan"), n_items, counts, "no item was scored in both runs")
    off = table - np.diag(np.diag(table))
    moved = (off.sum(axis=0) + off.sum(axis=1)) > 0
    if not moved.any():
        return StuartMaxwellTest(0.0, 0, 1.0, n_items, counts, "no item changed its label between the runs")
    sub = table[np.ix_(moved, moved)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from statsmodels.stats.contingency_tables import SquareTable  # slow to import: only when needed

        result = SquareTable(sub, shift_zeros=False).homogeneity()
    p_value = float(result.pvalue)
    singular = None if np.isfinite(p_value) else \
        "the covariance of the margin differences is singular, so the test is undefined"
    return StuartMaxwellTest(float(result.statistic), int(result.df), p_value, n_items, counts, singular)


def drift(
    consensus: Any,
    baseline: Any,
    candidate: Any,
    clusters: Any,
    *,
    scale: Any,
    pass_threshold: int,
    baseline_versions: Iterable[str] = (),
    candidate_versions: Iterable[str] = (),
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> RunDrift:
    """What changed between an earlier (baseline) and a later (candidate) run on the same items.

    Parameters
    ----------
    consensus, baseline, candidate : array-like of int, shape (n_items,)
        Aligned by position. Flip rate and Stuart-Maxwell use items scored in
        both runs; the metric changes also need a consensus label.
    clusters : array-like or None
        Task id per item, for the paired bootstrap.
    scale, pass_threshold, resamples, seed, level
        As in :func:`~workbench.stats.intervals.bootstrap.paired_bootstrap_delta`.
    baseline_versions, candidate_versions : iterable of str
        Model version strings the API reported in each run.

    Returns
    -------
    RunDrift
        ``flip_rate`` (share of items scored in both runs whose score
        changed), ``n_items`` (those items), ``stuart_maxwell`` (see
        :func:`stuart_maxwell`), ``deltas`` (the ``metrics`` of
        :func:`~workbench.stats.intervals.bootstrap.paired_bootstrap_delta`: candidate
        minus baseline with paired intervals), ``delta_reasons``,
        ``n_items_with_consensus``, ``bootstrap``, ``model_versions``:
        {"baseline": [...], "candidate": [...], "changed": bool}.
    """
    values = check_scale(scale)
    b = score_codes(baseline, name="baseline", scale=values)
    c = score_codes(candidate, name="candidate", scale=values)
    check_same_length(baseline=b, candidate=c)
    both = (b >= 0) & (c >= 0)
    sm_result = stuart_maxwell(baseline, candidate, scale=values)
    deltas = paired_bootstrap_delta(consensus, baseline, candidate, clusters, scale=values,
                                    pass_threshold=pass_threshold, resamples=resamples, seed=seed, level=level)
    base_v = sorted({str(v) for v in baseline_versions if v is not None})
    cand_v = sorted({str(v) for v in candidate_versions if v is not None})
    return RunDrift(int(both.sum()), float(np.mean(b[both] != c[both])) if both.any() else float("nan"), sm_result,
                    deltas["metrics"], deltas["reasons"], deltas["n_items"], deltas["bootstrap"],
                    ModelVersions(base_v, cand_v, base_v != cand_v))


def _counts(n: Any, c: Any, k: int) -> tuple[list[int], list[int]]:
    n_arr = np.atleast_1d(np.asarray(n)).astype(np.int64)
    c_arr = np.atleast_1d(np.asarray(c)).astype(np.int64)
    if n_arr.shape != c_arr.shape:
        n_arr, c_arr = np.broadcast_arrays(n_arr, c_arr)
    if n_arr.size == 0:
        raise ValueError("pass^k needs at least one item")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if (c_arr < 0).any() or (c_arr > n_arr).any():
        raise ValueError("each item's successes c must be between 0 and its number of repeats n")
    if (n_arr < k).any():
        raise ValueError(f"k={k} is more than the {int(n_arr.min())} repeats of some item; use k <= the fewest repeats")
    return n_arr.tolist(), c_arr.tolist()
