"""Pass rates on new items graded by an approved judge, corrected for the judge's errors.

* Rogan-Gladen (1978): a judge with true positive rate TPR and true negative
  rate TNR on the golden set, observing a pass rate ``p_obs`` on new items,
  implies a true pass rate ``(p_obs + TNR - 1) / (TPR + TNR - 1)``, clipped to
  [0, 1]. The interval resamples the golden set (re-estimating TPR and TNR)
  and the new items (re-estimating ``p_obs``) together.
* Prediction-powered inference (Angelopoulos et al. 2023, Science 382;
  "PPI++", Angelopoulos, Duchi and Zrnic 2023) when some new items also
  carry human labels: the judge's mean on all items, corrected by the mean
  judge-minus-human error on the labeled ones, with lambda chosen to
  minimise the variance. Matches ``ppi_py.ppi_mean_ci`` and
  ``ppi_mean_pointestimate`` (z-interval, ``np.std`` with ddof 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from ._common import (
    check_bootstrap_options,
    check_level,
    check_pass_threshold,
    check_scale,
    cluster_codes,
)
from .bootstrap import percentile_interval, resample_sums


def rogan_gladen(p_observed: float, *, tpr: float, tnr: float) -> float:
    """Rogan-Gladen corrected pass rate, clipped to [0, 1]; NaN when ``tpr + tnr <= 1``.

    A judge with ``tpr + tnr <= 1`` is no better than chance, and the
    correction has no meaning.

    Examples
    --------
    >>> rogan_gladen(0.625, tpr=0.75, tnr=0.75)
    0.75
    """
    youden = tpr + tnr - 1
    if not youden > 0:
        return float("nan")
    return float(min(1.0, max(0.0, (p_observed + tnr - 1) / youden)))


def corrected_pass_rate(
    golden_human_pass: Any,
    golden_judge_pass: Any,
    new_judge_pass: Any,
    *,
    golden_clusters: Any = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Raw and Rogan-Gladen corrected pass rate of new items, with bootstrap intervals.

    Parameters
    ----------
    golden_human_pass, golden_judge_pass : array-like of bool, shape (n_golden,)
        On the golden set: whether the consensus passes, and whether the
        judge passes, item by item.
    new_judge_pass : array-like of bool, shape (n_new,)
        Whether the judge passes each new item.
    golden_clusters : array-like, optional
        Task id per golden item, resampled together.
    resamples, seed, level
        Bootstrap settings; the golden items and the new items are resampled
        independently in each resample.

    Returns
    -------
    dict
        ``raw``, ``corrected``: {"value", "ci_low", "ci_high"}; ``tpr``,
        ``tnr`` (golden set); ``n_golden``, ``n_new``; ``bootstrap``;
        ``undefined_resamples`` (resamples where TPR + TNR <= 1 or a class
        was not drawn, left out of the interval); ``reason``: None, or why the
        corrected rate is undefined.
    """
    check_bootstrap_options(resamples, seed, level)
    human = _bools(golden_human_pass, "golden_human_pass")
    judged = _bools(golden_judge_pass, "golden_judge_pass")
    new = _bools(new_judge_pass, "new_judge_pass")
    if len(human) != len(judged):
        raise ValueError(f"golden_human_pass has {len(human)} items but golden_judge_pass has {len(judged)}; "
                         "give both for every golden item")
    groups, n_clusters = cluster_codes(golden_clusters, len(human))
    out: dict[str, Any] = {
        "raw": {"value": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")},
        "corrected": {"value": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")},
        "tpr": float("nan"), "tnr": float("nan"), "n_golden": int(len(human)), "n_new": int(len(new)),
        "bootstrap": {"resamples": int(resamples), "seed": int(seed), "cluster": golden_clusters is not None,
                      "level": float(level)},
        "undefined_resamples": 0, "reason": None,
    }
    if len(new) == 0:
        out["reason"] = "there are no new items to grade"
        return out
    p_obs = float(new.mean())
    out["raw"]["value"] = p_obs
    if human.all() or not human.any():
        which = "fail" if human.all() else "pass"
        out["reason"] = (f"no golden item has a {which}ing consensus label, so the judge's "
                         f"{'TNR' if which == 'fail' else 'TPR'} is unknown and the rate cannot be corrected")
    else:
        tpr = float(judged[human].mean())
        tnr = float((~judged[~human]).mean())
        out.update(tpr=tpr, tnr=tnr)
        out["corrected"]["value"] = rogan_gladen(p_obs, tpr=tpr, tnr=tnr)
        if tpr + tnr <= 1:
            out["reason"] = (f"TPR + TNR = {tpr + tnr:.3f} is not above 1: the judge does no better than chance "
                             "on the golden set, so its pass rate cannot be corrected")

    rng = np.random.default_rng(seed)
    # New items: iid resampling, so the pass count of a resample is binomial.
    p_samples = rng.binomial(len(new), p_obs, size=resamples) / len(new)
    out["raw"]["ci_low"], out["raw"]["ci_high"], _ = percentile_interval(p_samples, level)
    if np.isnan(out["corrected"]["value"]):
        return out
    # Golden items: cluster resampling of the four cells (TP, FN, FP, TN).
    cells = np.column_stack([human & judged, human & ~judged, ~human & judged, ~human & ~judged]).astype(float)
    per_cluster = np.column_stack([np.bincount(groups, weights=cells[:, i], minlength=n_clusters) for i in range(4)])
    sums = resample_sums(per_cluster, resamples=resamples, seed=int(rng.integers(2**63)))
    tp, fn, fp, tn = sums.T
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr_b, tnr_b = tp / (tp + fn), tn / (tn + fp)
        youden = tpr_b + tnr_b - 1
        theta = np.where(youden > 0, np.clip((p_samples + tnr_b - 1) / youden, 0, 1), np.nan)
    low, high, bad = percentile_interval(theta, level)
    out["corrected"].update(ci_low=low, ci_high=high)
    out["undefined_resamples"] = bad
    return out


def golden_pass_arrays(confusion: Any, *, scale: Any, pass_threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (human pass, judge pass) arrays rebuilt from a stored confusion matrix.

    For grading with an exported bundle, which carries the confusion matrix
    but not the items; the rebuilt items are treated as independent.
    """
    values = check_scale(scale)
    index = check_pass_threshold(pass_threshold, values)
    matrix = np.asarray(confusion, dtype=np.int64)
    k = len(values)
    if matrix.shape != (k, k) or (matrix < 0).any():
        raise ValueError(f"confusion must be a {k} x {k} matrix of non-negative counts, got shape {matrix.shape}")
    rows, cols = np.divmod(np.repeat(np.arange(k * k), matrix.ravel()), k)
    return rows >= index, cols >= index


def ppi_mean(y: Any, yhat: Any, yhat_unlabeled: Any, *, lam: float | None = None,
             level: float = 0.95) -> dict[str, Any]:
    """Prediction-powered estimate of a mean (e.g. a pass rate) with a z-interval.

    Parameters
    ----------
    y : array-like of float, shape (n,)
        Human labels (e.g. 1 = pass) of the new items that have them.
    yhat : array-like of float, shape (n,)
        The judge's predictions on those same items.
    yhat_unlabeled : array-like of float, shape (N,)
        The judge's predictions on the items without human labels.
    lam : float or None, default None
        Weight of the predictions: 1 is classic PPI, 0 ignores the judge
        (the mean of ``y`` alone), None tunes it to minimise the variance
        ("power tuning", clipped to [0, 1]) as ``ppi_py`` does.
    level : float, default 0.95

    Returns
    -------
    dict
        ``estimate``, ``ci_low``, ``ci_high`` (not clipped to the range of
        ``y``, as in ``ppi_py``), ``lambda``, ``n_labeled``, ``n_unlabeled``,
        ``level``, ``reason`` (None, or why lambda fell back to 0).
    """
    check_level(level)
    y_arr, yh, yu = (_floats(v, name) for v, name in ((y, "y"), (yhat, "yhat"), (yhat_unlabeled, "yhat_unlabeled")))
    if len(y_arr) != len(yh):
        raise ValueError(f"y has {len(y_arr)} items but yhat has {len(yh)}; give the judge's prediction for each")
    if len(y_arr) < 2 or len(yu) < 1:
        raise ValueError("prediction-powered inference needs at least two labeled and one unlabeled item")
    n, big_n = len(y_arr), len(yu)
    reason = None
    if lam is None:
        # ppi_py _calc_lam_glm, one dimension: lambda = cov(Y, Yhat) / ((1 + n / N) * var(all Yhat)).
        covariance = np.mean((y_arr - y_arr.mean()) * (yh - yh.mean()))
        variance = np.var(np.concatenate([yh, yu]), ddof=1)
        if variance > 0:
            lam = float(np.clip(covariance / ((1 + n / big_n) * variance), 0, 1))
        else:
            lam, reason = 0.0, "the judge gave every item the same prediction, so it carries no information; lambda = 0"
    elif isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
        raise ValueError(f"lam must be a number (0 to 1) or None for power tuning, got {lam!r}")
    lam = float(lam)
    estimate = float(np.mean(lam * yu) + np.mean(y_arr - lam * yh))
    se = float(np.sqrt(np.std(lam * yu) ** 2 / big_n + np.std(y_arr - lam * yh) ** 2 / n))
    z = norm.ppf(1 - (1 - level) / 2)
    half = float(z * se)
    return {"estimate": estimate, "ci_low": estimate - half, "ci_high": estimate + half, "lambda": lam,
            "n_labeled": n, "n_unlabeled": big_n, "level": float(level), "reason": reason}


def _bools(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        return arr
    if arr.size and not np.isin(arr, (0, 1)).all():
        bad = arr[~np.isin(arr, (0, 1))][0]
        raise ValueError(f"{name} must hold pass/fail as True/False or 1/0, got values such as {bad!r}")
    return arr.astype(bool)


def _floats(values: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers (e.g. 1 = pass, 0 = fail)") from None
    if arr.ndim != 1 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a one-dimensional array of finite numbers")
    return arr
