"""Agreement of a judge with the consensus label, on any integer ordinal scale.

Every metric is computed from the confusion matrix (rows = consensus, columns
= judge, in scale order). Working from the matrix rather than from the item
lists is what lets :mod:`workbench.stats.intervals.bootstrap` score thousands of
resampled matrices at once: the private :func:`stacked_metrics` takes a
``(resamples, K, K)`` stack and returns one array per metric.

The values are those of the reference implementations named in DESIGN
section 5, to floating-point precision:

* ``cohen_kappa*``: ``sklearn.metrics.cohen_kappa_score(consensus, judge,
  labels=scale, weights=None | "linear" | "quadratic")``, whose weights count
  scale *positions* (0, 1, 2, ...), not the values themselves;
* ``krippendorff_alpha_ordinal``: ``krippendorff.alpha(reliability_data=
  [consensus, judge], level_of_measurement="ordinal", value_domain=scale)``;
  with two coders and no missing values the coincidence matrix is ``C + C.T``;
* ``gwet_ac2_linear``: Gwet's AC2 with linear weights ``1 - |i - j| / (K - 1)``
  over scale positions, as ``gwet.ac1.table`` in the irrCAC R package;
* ``spearman``: ``scipy.stats.spearmanr``, i.e. the Pearson correlation of
  mid-ranks, which the matrix margins determine.

References
----------
.. [1] J. Cohen (1968). Weighted kappa. Psychological Bulletin 70(4).
.. [2] K. Krippendorff (2011). Computing Krippendorff's alpha-reliability.
.. [3] K. L. Gwet (2014). Handbook of Inter-Rater Reliability, 4th ed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.stats._common import (NO_ITEMS, ONE_ITEM, check_pass_threshold, check_same_length, check_scale,
    score_codes)

#: The agreement metrics of DESIGN section 5 (plus Gwet's AC2), in report order.
METRIC_NAMES: tuple[str, ...] = (
    "exact_agreement",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "krippendorff_alpha_ordinal",
    "gwet_ac2_linear",
    "spearman",
    "mean_signed_error",
    "tpr",
    "tnr",
)

_KAPPAS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic")


@dataclass(frozen=True)
class AgreementMetrics(Mapping):
    """Agreement metrics of one judge against the consensus.

    Behaves as a read-only ``dict`` from metric name to float; a metric that is
    undefined for these labels is NaN and ``reasons`` says why.

    Attributes
    ----------
    metrics : dict of str to float
        One entry per name in :data:`METRIC_NAMES`.
    reasons : dict of str to str
        For each NaN metric, one sentence saying why it is undefined.
    n_items : int
        Items with both a consensus label and a judge score.
    n_missing : int
        Items left out because one of the two was missing (unresolved
        consensus or unscored judgment).
    """

    metrics: dict[str, float]
    reasons: dict[str, str] = field(default_factory=dict)
    n_items: int = 0
    n_missing: int = 0

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)


def confusion_matrix(consensus: Any, judge: Any, *, scale: Any) -> np.ndarray:
    """Count consensus/judge label pairs, rows = consensus, columns = judge.

    Parameters
    ----------
    consensus, judge : array-like of int, shape (n_items,)
        Labels aligned by position. Items where either is missing (None or NaN)
        are left out.
    scale : sequence of int
        The rubric's scale values, lowest first; fixes the row and column order.

    Returns
    -------
    ndarray of int64, shape (K, K)

    Examples
    --------
    >>> confusion_matrix([-1, 0, 0, 1], [-1, 0, 1, 1], scale=(-1, 0, 1)).tolist()
    [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    """
    values = check_scale(scale)
    c, j = _paired_codes(consensus, judge, values)
    k = len(values)
    return np.bincount(c * k + j, minlength=k * k).reshape(k, k)


def agreement_metrics(consensus: Any, judge: Any, *, scale: Any, pass_threshold: int) -> AgreementMetrics:
    """Agreement of a judge's scores with the consensus labels.

    Parameters
    ----------
    consensus, judge : array-like of int, shape (n_items,)
        Labels aligned by position, each a value of ``scale``. Items where
        either is missing (None or NaN: unresolved consensus, unscored
        judgment) are left out and counted in ``n_missing``.
    scale : sequence of int
        The rubric's scale values, lowest first, e.g. ``(-1, 0, 1)``.
    pass_threshold : int
        Lowest passing value of the scale; it defines ``tpr`` and ``tnr``.

    Returns
    -------
    AgreementMetrics
        A mapping from each name in :data:`METRIC_NAMES` to a float in its
        range: ``exact_agreement``, ``tpr``, ``tnr`` in [0, 1]; kappas,
        alpha, AC2 at most 1 (1 = perfect, 0 = chance); ``spearman`` in
        [-1, 1]; ``mean_signed_error`` in scale units (above 0: the judge is
        lenient). Undefined metrics are NaN, with the reason in ``.reasons``.

    Examples
    --------
    >>> m = agreement_metrics([-1, 0, 0, 1, 1], [-1, 0, 1, 1, 1], scale=(-1, 0, 1), pass_threshold=0)
    >>> round(m["exact_agreement"], 2), round(m["mean_signed_error"], 2), m["tnr"]
    (0.8, 0.2, 1.0)
    >>> agreement_metrics([0, 0, 0], [0, 0, 0], scale=(-1, 0, 1), pass_threshold=0).reasons["cohen_kappa"]
    'consensus and judge gave every item the same label (0), so chance agreement is total and kappa is undefined'
    """
    values = check_scale(scale)
    pass_index = check_pass_threshold(pass_threshold, values)
    c_all = score_codes(consensus, name="consensus", scale=values)
    j_all = score_codes(judge, name="judge", scale=values)
    check_same_length(consensus=c_all, judge=j_all)
    both = (c_all >= 0) & (j_all >= 0)
    k = len(values)
    matrix = np.bincount(c_all[both] * k + j_all[both], minlength=k * k).reshape(k, k)
    result = _metrics_of_matrix(matrix, values, pass_index)
    return AgreementMetrics(result.metrics, result.reasons, result.n_items, n_missing=int((~both).sum()))


def metrics_from_confusion(confusion: Any, *, scale: Any, pass_threshold: int) -> AgreementMetrics:
    """The metrics of :func:`agreement_metrics` from a stored confusion matrix.

    Parameters
    ----------
    confusion : array-like of int, shape (K, K)
        Counts with rows = consensus and columns = judge, in scale order.
    scale : sequence of int
        The K scale values, lowest first.
    pass_threshold : int
        Lowest passing value of the scale.

    Returns
    -------
    AgreementMetrics
    """
    values = check_scale(scale)
    pass_index = check_pass_threshold(pass_threshold, values)
    matrix = np.asarray(confusion, dtype=np.float64)
    k = len(values)
    if matrix.shape != (k, k):
        raise ValueError(f"confusion must be a {k} x {k} matrix for a scale of {k} values, got shape {matrix.shape}")
    if (matrix < 0).any() or not np.isfinite(matrix).all():
        raise ValueError("confusion must hold non-negative counts")
    return _metrics_of_matrix(matrix, values, pass_index)


def stacked_metrics(stack: np.ndarray, values: np.ndarray, pass_index: int) -> dict[str, np.ndarray]:
    """Every metric for each matrix of a ``(B, K, K)`` stack of confusion matrices.

    The stack may hold non-integer weights (bootstrap resamples are item
    multiplicities). A metric undefined for a matrix is NaN there. Inputs are
    trusted: public functions validate before calling this.
    """
    c = np.asarray(stack, dtype=np.float64)
    if c.ndim == 2:
        c = c[None]
    k = c.shape[-1]
    idx = np.arange(k)
    diff = idx[:, None] - idx[None, :]
    n = c.sum(axis=(1, 2))
    rows = c.sum(axis=2)  # consensus margin
    cols = c.sum(axis=1)  # judge margin
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["exact_agreement"] = np.trace(c, axis1=1, axis2=2) / n

        expected = rows[:, :, None] * cols[:, None, :] / n[:, None, None]
        for name, weights in zip(_KAPPAS, ((diff != 0).astype(float), np.abs(diff), diff**2.0)):
            observed = (c * weights).sum(axis=(1, 2))
            chance = (expected * weights).sum(axis=(1, 2))
            out[name] = np.where(chance > 0, 1 - observed / chance, np.nan)

        out["krippendorff_alpha_ordinal"] = _ordinal_alpha(c)

        out["gwet_ac2_linear"] = gwet_ac(c, 1 - np.abs(diff) / (k - 1))

        out["spearman"] = _spearman(c, rows, cols, n)

        scores = values.astype(np.float64)
        signed = scores[None, :] - scores[:, None]  # judge minus consensus, cell (i, j)
        out["mean_signed_error"] = (c * signed).sum(axis=(1, 2)) / n

        passing = idx >= pass_index
        out["tpr"] = c[:, passing][:, :, passing].sum(axis=(1, 2)) / rows[:, passing].sum(axis=1)
        out["tnr"] = c[:, ~passing][:, :, ~passing].sum(axis=(1, 2)) / rows[:, ~passing].sum(axis=1)

    too_few = n < 2
    for arr in out.values():
        arr[too_few | ~np.isfinite(arr)] = np.nan
    return out


def gwet_ac(c: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gwet's AC1 (identity weights) or AC2 (other weights) of a (B, K, K) stack, two raters.

    As ``gwet.ac1.table`` of the irrCAC R package: ``pa = sum(w * C) / n``,
    ``pi_k`` = mean of the two raters' margins, ``pe = sum(w) * sum(pi_k * (1 -
    pi_k)) / (K * (K - 1))``, ``AC = (pa - pe) / (1 - pe)``.
    """
    k = c.shape[-1]
    n = c.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = (c * weights).sum(axis=(1, 2)) / n
        pi = (c.sum(axis=2) + c.sum(axis=1)) / (2 * n[:, None])
        pe = weights.sum() * (pi * (1 - pi)).sum(axis=1) / (k * (k - 1))
        return (pa - pe) / (1 - pe)


def _ordinal_alpha(c: np.ndarray) -> np.ndarray:
    # Two coders, every unit pairable: coincidences o = C + C.T and n = 2 * items.
    # Ordinal distance (Krippendorff 2011):
    #   delta(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2
    # alpha = 1 - (n - 1) * sum(o * delta) / sum(n_c * n_k * delta)
    o = c + np.swapaxes(c, 1, 2)
    nv = o.sum(axis=2)
    total = nv.sum(axis=1)
    k = c.shape[-1]
    idx = np.arange(k)
    lo = np.minimum(idx[:, None], idx[None, :])
    hi = np.maximum(idx[:, None], idx[None, :])
    cum = np.cumsum(nv, axis=1)
    between = cum[:, hi] - cum[:, lo] + nv[:, lo]
    delta = (between - (nv[:, :, None] + nv[:, None, :]) / 2) ** 2
    observed = (o * delta).sum(axis=(1, 2))
    expected = (nv[:, :, None] * nv[:, None, :] * delta).sum(axis=(1, 2))
    return np.where(expected > 0, 1 - (total - 1) * observed / expected, np.nan)


def _spearman(c: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: np.ndarray) -> np.ndarray:
    # Mid-rank of every item in label category i: items below it, plus (count + 1) / 2.
    row_rank = np.cumsum(rows, axis=1) - rows / 2 + 0.5
    col_rank = np.cumsum(cols, axis=1) - cols / 2 + 0.5
    centre = ((n + 1) / 2)[:, None]
    dr, dc = row_rank - centre, col_rank - centre
    cov = np.einsum("bij,bi,bj->b", c, dr, dc)
    var_r = (rows * dr**2).sum(axis=1)
    var_c = (cols * dc**2).sum(axis=1)
    rho = cov / np.sqrt(var_r * var_c)
    constant = ((rows > 0).sum(axis=1) < 2) | ((cols > 0).sum(axis=1) < 2)
    return np.where(constant, np.nan, np.clip(rho, -1.0, 1.0))


def _metrics_of_matrix(matrix: np.ndarray, values: np.ndarray, pass_index: int) -> AgreementMetrics:
    stacked = stacked_metrics(matrix[None].astype(np.float64), values, pass_index)
    result = {name: float(stacked[name][0]) for name in METRIC_NAMES}
    n = float(matrix.sum())
    return AgreementMetrics(result, undefined_reasons(matrix, values, pass_index, result), n_items=int(round(n)))


def undefined_reasons(matrix: np.ndarray, values: np.ndarray, pass_index: int,
                      result: Mapping[str, float]) -> dict[str, str]:
    """One sentence for each NaN metric of a single confusion matrix."""
    n = float(np.asarray(matrix).sum())
    if n == 0:
        return {name: NO_ITEMS for name in result if np.isnan(result[name])}
    if n < 2:
        return {name: ONE_ITEM for name in result if np.isnan(result[name])}
    rows, cols = matrix.sum(axis=1), matrix.sum(axis=0)
    used_rows, used_cols = np.flatnonzero(rows), np.flatnonzero(cols)
    used = np.union1d(used_rows, used_cols)
    threshold = int(values[pass_index])
    reasons: dict[str, str] = {}
    for name, value in result.items():
        if not np.isnan(value):
            continue
        if name in _KAPPAS:
            label = int(values[used[0]])
            reasons[name] = (f"consensus and judge gave every item the same label ({label}), "
                             "so chance agreement is total and kappa is undefined")
        elif name == "krippendorff_alpha_ordinal":
            reasons[name] = (f"only one scale value ({int(values[used[0]])}) occurs among the consensus and judge "
                             "labels, so alpha has no variation to measure")
        elif name == "spearman":
            side, only = ("consensus", used_rows) if len(used_rows) < 2 else ("judge", used_cols)
            reasons[name] = (f"every {side} label is {int(values[only[0]])}, "
                             "so a rank correlation is undefined")
        elif name == "tpr":
            reasons[name] = f"no item has a passing consensus label (>= {threshold}), so TPR is undefined"
        elif name == "tnr":
            reasons[name] = f"no item has a failing consensus label (< {threshold}), so TNR is undefined"
        else:
            reasons[name] = "undefined for these labels"
    return reasons


def _paired_codes(consensus: Any, judge: Any, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = score_codes(consensus, name="consensus", scale=values)
    j = score_codes(judge, name="judge", scale=values)
    check_same_length(consensus=c, judge=j)
    both = (c >= 0) & (j >= 0)
    return c[both], j[both]
