"""Pass rates on new items graded by an approved judge, corrected for the judge's errors.

* Rogan-Gladen (1978): a judge with true positive rate TPR and true negative
  rate TNR on the golden set, observing a pass rate ``p_obs`` on new items,
  implies a true pass rate ``(p_obs + TNR - 1) / (TPR + TNR - 1)``, clipped to
  [0, 1]. Its interval carries the uncertainty of all three estimates: TPR,
  TNR and ``p_obs`` are drawn from their Jeffreys beta posteriors (a
  parametric bootstrap), so a golden set with few failing items gives a wide
  TNR rather than a TNR of 1 in every resample. The rate is refused, with a
  reason, when the Youden index ``J = TPR + TNR - 1`` cannot be told apart
  from 0 (see :data:`YOUDEN_MARGIN`).
* Prediction-powered inference (Angelopoulos et al. 2023, Science 382;
  "PPI++", Angelopoulos, Duchi and Zrnic 2023) when some new items also
  carry human labels: the judge's mean on all items, corrected by the mean
  judge-minus-human error on the labeled ones, with lambda chosen to
  minimise the variance. Matches ``ppi_py.ppi_mean_ci`` and
  ``ppi_mean_pointestimate`` (z-interval, ``np.std`` with ddof 0); refused,
  with a reason, when too few or one-sided human labels make the z-interval
  meaningless (see :data:`PPI_MIN_LABELED`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.stats._common import (check_bootstrap_options, check_level, check_pass_threshold, check_scale,
    cluster_codes)
from workbench.stats.intervals.bootstrap import percentile_interval
from workbench.stats.intervals.records import MetricInterval

# The correction divides by J = TPR + TNR - 1. It is refused unless the lower
# end of J's interval clears this margin: at J = 0.05 an error of 0.01 in the
# observed pass rate becomes an error of 0.2 in the corrected one, so below it
# the interval is shaped by the clipping to [0, 1] more than by the data.
YOUDEN_MARGIN = 0.05

# Prediction-powered inference is refused with fewer human labels than this:
# its z-interval plugs in a standard deviation estimated from the labeled
# items, whose relative error (about 1 / sqrt(2n)) is 22% at ten items and
# 32% at five, so below ten the stated level means little.
PPI_MIN_LABELED = 10

# Jeffreys prior Beta(1/2, 1/2) for every binomial proportion drawn here.
_JEFFREYS = 0.5


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


@dataclass(slots=True)
class CorrectedPassRate:
    """The judge's pass rate on new items corrected for its errors on the golden set (:func:`corrected_pass_rate`,
    whose ``Returns`` describes each field); ``design_effect`` holds ``tpr``, ``tnr`` and, with new clusters,
    ``new``."""

    n_golden: int
    n_pos: int
    n_neg: int
    n_new: int
    bootstrap: dict[str, Any]
    raw: MetricInterval = field(default_factory=MetricInterval.nan)
    corrected: MetricInterval = field(default_factory=MetricInterval.nan)
    youden: MetricInterval = field(default_factory=MetricInterval.nan)
    tpr: float = float("nan")
    tnr: float = float("nan")
    design_effect: dict[str, float] = field(default_factory=lambda: {"tpr": float("nan"), "tnr": float("nan")})
    undefined_resamples: int = 0
    refused: bool = False
    reason: str | None = None

    def refuse(self, reason: str) -> dict[str, Any]:
        """The result withheld for ``reason``, as JSON."""
        self.refused, self.reason = True, reason
        return self.to_json()

    def to_json(self) -> dict[str, Any]:
        return {"raw": self.raw.to_json(), "corrected": self.corrected.to_json(), "youden": self.youden.to_json(),
                "tpr": self.tpr, "tnr": self.tnr, "n_golden": self.n_golden, "n_pos": self.n_pos,
                "n_neg": self.n_neg, "n_new": self.n_new, "design_effect": dict(self.design_effect),
                "bootstrap": self.bootstrap, "undefined_resamples": self.undefined_resamples,
                "refused": self.refused, "reason": self.reason}


def corrected_pass_rate(
    golden_human_pass: Any,
    golden_judge_pass: Any,
    new_judge_pass: Any,
    *,
    golden_clusters: Any = None,
    design_effect: tuple[float, float] | None = None,
    new_clusters: Any = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Raw and Rogan-Gladen corrected pass rate of new items, with intervals that carry the golden set's uncertainty.

    The corrected rate is ``(p_obs + TNR - 1) / (TPR + TNR - 1)`` clipped to
    [0, 1] (Rogan and Gladen 1978), with TPR and TNR measured on the golden
    set and ``p_obs`` the judge's pass rate on the new items. All three are
    estimates, and the interval carries all three: each of ``resamples``
    draws takes TPR from its Jeffreys posterior ``Beta(TP + 1/2, FN + 1/2)``,
    TNR from ``Beta(TN + 1/2, FP + 1/2)`` and ``p_obs`` from
    ``Beta(x + 1/2, n - x + 1/2)``, independently (the golden set and the new
    items are separate samples), and the interval is the percentile interval
    of the corrected rates of the draws. This is a parametric bootstrap from
    the posteriors rather than a resampling of the golden items: a resample
    of a golden set with one failing item has TNR = 1 or undefined, which
    gives the interval no width, whereas its posterior is wide. (Drawing
    from a posterior *inside* each resample counts the sampling variance
    twice: in simulation it covered 99-100% at a nominal 95%, with intervals
    half as wide again.)

    The correction divides by the Youden index ``J = TPR + TNR - 1``. It is
    refused, with a reason, when J is not above 0, or when the lower end of
    J's interval is not above :data:`YOUDEN_MARGIN`: then the golden set
    cannot tell the judge from one that guesses, and the corrected interval
    would reflect the clipping to [0, 1] more than the data.

    Parameters
    ----------
    golden_human_pass, golden_judge_pass : array-like of bool, shape (n_golden,)
        On the golden set: whether the consensus passes, and whether the
        judge passes, item by item.
    new_judge_pass : array-like of bool, shape (n_new,)
        Whether the judge passes each new item.
    golden_clusters : array-like, optional
        Task id per golden item. Items of one task are not independent; the
        counts of each class are divided by that class's design effect
        (Kish 1965), estimated from the clusters, before they enter the beta
        posteriors, so a class's effective size is what its tasks support
        (the effective-sample-size device of Korn and Graubard 1998). Where
        the clusters show no variation (every item of the class judged
        alike), the design effect is the mean cluster size, the largest it
        can be, so each task counts once.
    design_effect : (float, float), optional
        Design effects of TPR and TNR (each at least 1) known from elsewhere,
        e.g. an exported bundle, which has the counts but not the tasks. Not
        together with ``golden_clusters``.
    new_clusters : array-like, optional
        Task id per new item. Repeats of one task (a model run several times
        on it) are not independent: the observed pass count and the number of
        new items are divided by their design effect under this clustering
        (as for the golden set above) before they enter ``p_obs``'s beta
        posterior and the raw rate's interval.
    resamples : int, default 2000
        Number of posterior draws.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; recorded in the result.
    level : float, default 0.95
        Confidence level of every interval.

    Returns
    -------
    dict
        ``raw``: {"value", "ci_low", "ci_high"}, the observed pass rate with
        its Jeffreys interval (Brown, Cai and DasGupta 2001);
        ``corrected``: {"value", "ci_low", "ci_high"}, NaN interval when
        refused (the value is then the bare point estimate, not to be shown
        as a result); ``youden``: {"value", "ci_low", "ci_high"} of
        J = TPR + TNR - 1; ``tpr``, ``tnr`` (golden set point estimates);
        ``n_golden``, ``n_pos``, ``n_neg`` (golden items whose consensus
        passes, fails), ``n_new``; ``design_effect``: {"tpr", "tnr"} (and
        ``new`` with ``new_clusters``);
        ``bootstrap``: {"resamples", "seed", "cluster", "level", "method"};
        ``undefined_resamples``: draws with J <= 0, left out of the
        corrected interval (at most a few once J has passed the refusal
        check); ``refused``: whether the corrected rate is withheld;
        ``reason``: None, or a sentence saying why.

    References
    ----------
    Rogan WJ, Gladen B (1978). Estimating prevalence from the results of a
    screening test. American Journal of Epidemiology 107(1), 71-76.

    Lang Z, Reiczigel J (2014). Confidence limits for prevalence of disease
    adjusted for estimated sensitivity and specificity. Preventive
    Veterinary Medicine 113(1), 13-22. (Intervals that ignore the
    uncertainty of estimated sensitivity and specificity under-cover; their
    adjusted Wald interval is the frequentist counterpart of the draws here.)

    Flor M, Weiss M, Selhorst T, Mueller-Graf C, Greiner M (2020).
    Comparison of Bayesian and frequentist methods for prevalence
    estimation under misclassification. BMC Public Health 20, 1135.

    Brown LD, Cai TT, DasGupta A (2001). Interval estimation for a binomial
    proportion. Statistical Science 16(2), 101-133.

    Korn EL, Graubard BI (1998). Confidence intervals for proportions with
    small expected number of positive counts estimated from survey data.
    Survey Methodology 24(2), 193-201.

    Examples
    --------
    >>> golden_human = [True] * 60 + [False] * 40
    >>> golden_judge = [True] * 54 + [False] * 6 + [True] * 12 + [False] * 28
    >>> r = corrected_pass_rate(golden_human, golden_judge, [True] * 330 + [False] * 170, resamples=1000)
    >>> round(r["corrected"]["value"], 3), r["refused"]
    (0.6, False)
    >>> r["corrected"]["ci_high"] - r["corrected"]["ci_low"] > 3 * (r["raw"]["ci_high"] - r["raw"]["ci_low"])
    True
    """
    check_bootstrap_options(resamples, seed, level)
    human = _bools(golden_human_pass, "golden_human_pass")
    judged = _bools(golden_judge_pass, "golden_judge_pass")
    new = _bools(new_judge_pass, "new_judge_pass")
    if len(human) != len(judged):
        raise ValueError(f"golden_human_pass has {len(human)} items but golden_judge_pass has {len(judged)}; "
                         "give both for every golden item")
    if golden_clusters is not None and design_effect is not None:
        raise ValueError("give golden_clusters or design_effect, not both: the design effect is estimated from "
                         "the clusters")
    groups, n_clusters = cluster_codes(golden_clusters, len(human))
    n_pos, n_neg = int(human.sum()), int((~human).sum())
    result = CorrectedPassRate(
        int(len(human)), n_pos, n_neg, int(len(new)),
        {"resamples": int(resamples), "seed": int(seed), "cluster": golden_clusters is not None,
         "level": float(level), "method": "parametric: Jeffreys beta posteriors of TPR, TNR and p_obs"})
    if len(new) == 0:
        return result.refuse("there are no new items to grade")
    x, n = int(new.sum()), len(new)
    if new_clusters is not None:
        new_groups, n_new_clusters = cluster_codes(new_clusters, n)
        deff_new = _design_effect(new, np.ones(n, bool), new_groups, n_new_clusters)
        result.design_effect.update(new=deff_new)
        x, n = x / deff_new, n / deff_new  # effective counts: what the tasks support
    result.raw = _jeffreys_interval(x, n, level)
    result.raw.value = float(new.mean())
    if n_pos == 0 or n_neg == 0:
        which = "fail" if n_neg == 0 else "pass"
        return result.refuse(f"no golden item has a {which}ing consensus label, so the judge's "
                             f"{'TNR' if which == 'fail' else 'TPR'} is unknown and the rate cannot be corrected")

    tp = int((human & judged).sum())
    tn = int((~human & ~judged).sum())
    fn, fp = n_pos - tp, n_neg - tn
    tpr, tnr = tp / n_pos, tn / n_neg
    if golden_clusters is not None:
        deff = (_design_effect(judged, human, groups, n_clusters), _design_effect(~judged, ~human, groups, n_clusters))
    else:
        deff = _check_design_effect(design_effect)
    youden = tpr + tnr - 1
    result.tpr, result.tnr = tpr, tnr
    result.design_effect.update(tpr=deff[0], tnr=deff[1])
    result.corrected.value = rogan_gladen(x / n, tpr=tpr, tnr=tnr)

    rng = np.random.default_rng(seed)
    p_draws = rng.beta(x + _JEFFREYS, n - x + _JEFFREYS, size=resamples)
    tpr_draws = rng.beta(tp / deff[0] + _JEFFREYS, fn / deff[0] + _JEFFREYS, size=resamples)
    tnr_draws = rng.beta(tn / deff[1] + _JEFFREYS, fp / deff[1] + _JEFFREYS, size=resamples)
    youden_draws = tpr_draws + tnr_draws - 1
    j_low, j_high, _ = percentile_interval(youden_draws, level)
    result.youden = MetricInterval(youden, j_low, j_high)

    if not youden > 0:
        return result.refuse(f"TPR + TNR = {tpr + tnr:.3f} is not above 1: the judge does no better than chance "
                             "on the golden set, so its pass rate cannot be corrected")
    if not j_low > YOUDEN_MARGIN:
        return result.refuse(_youden_reason(youden, j_low, level, n_pos, n_neg,
                                            weaker="TNR" if tnr_draws.var() > tpr_draws.var() else "TPR"))
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(youden_draws > 0, np.clip((p_draws + tnr_draws - 1) / youden_draws, 0, 1), np.nan)
    result.corrected.ci_low, result.corrected.ci_high, result.undefined_resamples = percentile_interval(theta, level)
    return result.to_json()


def golden_design_effects(golden_human_pass: Any, golden_judge_pass: Any, golden_clusters: Any) -> dict[str, float]:
    """Design effects of TPR and TNR under the golden set's task clustering, for ``corrected_pass_rate``.

    An exported bundle keeps the confusion matrix but not the tasks; storing
    these two numbers with it lets grading treat the golden items as the
    clustered sample they are (pass them as ``design_effect``).

    Returns
    -------
    dict
        ``tpr``, ``tnr``: each at least 1; NaN when the golden set has no
        item of that class.

    Examples
    --------
    >>> human = [True, True, False, False] * 5
    >>> golden_design_effects(human, human, None)  # every item its own task, judged correctly
    {'tpr': 1.0, 'tnr': 1.0}
    """
    human = _bools(golden_human_pass, "golden_human_pass")
    judged = _bools(golden_judge_pass, "golden_judge_pass")
    if len(human) != len(judged):
        raise ValueError(f"golden_human_pass has {len(human)} items but golden_judge_pass has {len(judged)}; "
                         "give both for every golden item")
    groups, n_clusters = cluster_codes(golden_clusters, len(human))
    return {name: _design_effect(hit, member, groups, n_clusters) if member.any() else float("nan")
            for name, hit, member in (("tpr", judged, human), ("tnr", ~judged, ~human))}


def _youden_reason(youden: float, low: float, level: float, n_pos: int, n_neg: int, *, weaker: str) -> str:
    shown = (f"the judge's Youden index TPR + TNR - 1 is {youden:.2f}, and its {level:.0%} interval reaches down "
             f"to {low:.2f} (the correction needs it above {YOUDEN_MARGIN})")
    if youden <= 2 * YOUDEN_MARGIN:
        return (f"{shown}: the judge is barely better than chance, so dividing by the index would turn small "
                "errors in the observed pass rate into large ones; the pass rate is not corrected")
    scarce = "failing" if weaker == "TNR" else "passing"
    return (f"{shown}: with {n_pos} passing and {n_neg} failing golden items the judge cannot be told apart from "
            f"one that guesses, so the pass rate is not corrected; label more {scarce} golden items to pin down "
            f"the judge's {weaker}")


def _design_effect(hit: np.ndarray, member: np.ndarray, groups: np.ndarray, n_clusters: int) -> float:
    """Design effect of the proportion of ``hit`` among ``member`` items under task clustering.

    The cluster variance is the linearised variance of a ratio estimator
    (Kish 1965, ch. 6), over the clusters that hold members, divided by the
    binomial one and kept in [1, mean cluster size]: the upper end is the
    design effect when every task's items agree, so that each task counts
    as one observation, and it is also what is returned when there is no
    variation to estimate from (a rate of 0 or 1, or one cluster).
    """
    hits = np.bincount(groups, weights=(hit & member).astype(float), minlength=n_clusters)
    sizes = np.bincount(groups, weights=member.astype(float), minlength=n_clusters)
    hits, sizes = hits[sizes > 0], sizes[sizes > 0]
    total, g = sizes.sum(), len(sizes)
    rate = hits.sum() / total
    upper = max(1.0, total / g)
    if g < 2 or rate in (0.0, 1.0):
        return float(upper)
    cluster_variance = g / (g - 1) * np.sum((hits - rate * sizes) ** 2) / total**2
    return float(np.clip(cluster_variance / (rate * (1 - rate) / total), 1.0, upper))


def _check_design_effect(design_effect: Any) -> tuple[float, float]:
    if design_effect is None:
        return 1.0, 1.0
    try:
        pair = tuple(float(d) for d in design_effect)
    except (TypeError, ValueError):
        pair = ()
    if len(pair) != 2 or not all(np.isfinite(d) and d >= 1 for d in pair):
        raise ValueError(f"design_effect must be a pair (TPR's, TNR's) of numbers of at least 1, got {design_effect!r}")
    return pair


def _jeffreys_interval(successes: int, n: int, level: float) -> MetricInterval:
    """Observed proportion with its Jeffreys interval, the end at 0 or 1 fixed there (Brown, Cai and DasGupta 2001)."""
    from scipy.stats import beta as beta_dist

    tail = (1 - level) / 2
    a, b = successes + _JEFFREYS, n - successes + _JEFFREYS
    low = 0.0 if successes == 0 else float(beta_dist.ppf(tail, a, b))
    high = 1.0 if successes == n else float(beta_dist.ppf(1 - tail, a, b))
    return MetricInterval(successes / n, low, high)


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

    The judge's mean over the unlabeled items plus the mean human-minus-judge
    difference ("rectifier") on the labeled ones (Angelopoulos et al. 2023),
    with the judge's weight lambda tuned as in PPI++ (Angelopoulos, Duchi and
    Zrnic 2023). Matches ``ppi_py.ppi_mean_ci`` and
    ``ppi_py.ppi_mean_pointestimate``.

    The z-interval rests on the central limit theorem for the labeled items,
    so it is refused, with a reason, when they cannot support it: fewer than
    :data:`PPI_MIN_LABELED` labeled items, every labeled item with the same
    human label (the rectifier then has no variation and the interval no
    width), or no unlabeled item (the labels alone are then the estimate).

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
        ``y``, as in ``ppi_py``; NaN when refused), ``lambda``,
        ``n_labeled``, ``n_unlabeled``, ``level``, ``refused``, ``reason``
        (None, why the estimate is refused, or why lambda fell back to 0).

    References
    ----------
    Angelopoulos AN, Bates S, Fannjiang C, Jordan MI, Zrnic T (2023).
    Prediction-powered inference. Science 382(6671), 669-674.

    Angelopoulos AN, Duchi JC, Zrnic T (2023). PPI++: Efficient
    prediction-powered inference. arXiv:2311.01453.
    """
    check_level(level)
    y_arr, yh, yu = (_floats(v, name) for v, name in ((y, "y"), (yhat, "yhat"), (yhat_unlabeled, "yhat_unlabeled")))
    if len(y_arr) != len(yh):
        raise ValueError(f"y has {len(y_arr)} items but yhat has {len(yh)}; give the judge's prediction for each")
    if lam is not None and (isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1):
        raise ValueError(f"lam must be a number (0 to 1) or None for power tuning, got {lam!r}")
    n, big_n = len(y_arr), len(yu)
    result: dict[str, Any] = {"estimate": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
                              "lambda": float("nan"), "n_labeled": n, "n_unlabeled": big_n, "level": float(level),
                              "refused": False, "reason": None}
    refusal = _ppi_refusal(y_arr, big_n)
    if refusal:
        result.update(refused=True, reason=refusal)
        return result
    reason = None
    if lam is None:
        # ppi_py _calc_lam_glm, one dimension: lambda = cov(Y, Yhat) / ((1 + n / N) * var(all Yhat)).
        covariance = np.mean((y_arr - y_arr.mean()) * (yh - yh.mean()))
        variance = np.var(np.concatenate([yh, yu]), ddof=1)
        if variance > 0:
            lam = float(np.clip(covariance / ((1 + n / big_n) * variance), 0, 1))
        else:
            lam, reason = 0.0, "the judge gave every item the same prediction, so it carries no information; lambda = 0"
    lam = float(lam)
    estimate = float(np.mean(lam * yu) + np.mean(y_arr - lam * yh))
    se = float(np.sqrt(np.std(lam * yu) ** 2 / big_n + np.std(y_arr - lam * yh) ** 2 / n))
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - level) / 2)
    half = float(z * se)
    result.update(estimate=estimate, ci_low=estimate - half, ci_high=estimate + half, reason=reason)
    result["lambda"] = lam
    return result


def _ppi_refusal(y: np.ndarray, n_unlabeled: int) -> str | None:
    n = len(y)
    if n < PPI_MIN_LABELED:
        return (f"only {n} of the new items carry a human label; prediction-powered inference needs at least "
                f"{PPI_MIN_LABELED} for its interval to mean anything, so label more of them")
    if np.unique(y).size < 2:
        return (f"all {n} human-labeled new items have the same label ({y[0]:g}), so the labels show nothing of the "
                "judge's errors on the other side and the interval would have no width; label more of the new items")
    if n_unlabeled == 0:
        return ("every new item carries a human label, so the human pass rate itself is the estimate; "
                "prediction-powered inference is for items the humans did not label")
    return None


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
