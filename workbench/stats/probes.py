"""How much a perturbation that should not matter moves a judge: shift, flips and robustness, paired.

For each item the judge scored both as it is (``baseline``) and perturbed by a
probe (``perturbed``), the shift is ``d = perturbed - baseline`` in scale
units. Reported, each with a paired cluster-bootstrap interval (the same task
clusters drawn for both verdicts of an item, so only their difference varies):

* ``mean_shift``: mean of ``d``; above 0 the perturbation raised the scores.
  Interval: Hesterberg's expanded percentile interval, the method the
  self-preference effects use (:func:`workbench.stats.intervals.bootstrap.expanded_level`).
* ``flip_rate``: share of items whose score changed; ``robustness_rate`` is
  ``1 - flip_rate``, the share of verdicts the perturbation left alone (CALM's
  robustness rate, Ye et al. 2024). A Wilson interval on the effective number
  of items, as for the other proportions (:mod:`workbench.stats.intervals.proportion`).
* On the items with a consensus label, and for probes that leave the human
  label unchanged: ``consensus_shift``, the change in mean signed error
  against the consensus (``mean(perturbed - c) - mean(baseline - c)``), and
  ``agreement_change``, the change in exact agreement with the consensus; a
  judge pushed away from the humans shows a negative agreement change.

Whether an interval excluding 0 makes a probe "move" the judge is decided in
:mod:`workbench.calibration.gate`, once, for every front end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.stats._common import (check_bootstrap_options, check_same_length, check_scale, cluster_codes,
    score_codes)
from workbench.stats.intervals.bootstrap import expanded_level, percentile_interval, resample_sums
from workbench.stats.intervals.proportion import design_effect, proportion_interval
from workbench.stats.intervals.records import MetricInterval

NOT_ENOUGH = "fewer than two items were scored both as they are and perturbed"
ONE_CLUSTER = "all items belong to one task cluster, so the cluster bootstrap cannot show any uncertainty"


@dataclass(slots=True)
class ProbeEffect:
    """A judge's change under one probe (:func:`probe_effect`, whose ``Returns`` describes each field)."""

    mean_shift: MetricInterval
    flip_rate: MetricInterval
    robustness_rate: MetricInterval
    consensus_shift: MetricInterval
    agreement_change: MetricInterval
    n_items: int
    n_missing: int
    n_clusters: int
    n_up: int
    n_down: int
    n_consensus: int
    bootstrap: dict[str, Any]
    reasons: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mean_shift": self.mean_shift.to_json(), "flip_rate": self.flip_rate.to_json(),
                "robustness_rate": self.robustness_rate.to_json(), "consensus_shift": self.consensus_shift.to_json(),
                "agreement_change": self.agreement_change.to_json(), "n_items": self.n_items,
                "n_missing": self.n_missing, "n_clusters": self.n_clusters, "n_up": self.n_up, "n_down": self.n_down,
                "n_consensus": self.n_consensus, "bootstrap": self.bootstrap, "reasons": dict(self.reasons)}


def _nan_interval(value: float) -> MetricInterval:
    return MetricInterval(value, float("nan"), float("nan"))


def probe_effect(
    baseline: Any,
    perturbed: Any,
    clusters: Any = None,
    *,
    scale: Any,
    consensus: Any = None,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Shift, flip rate and robustness rate of a judge under one probe, with paired cluster-bootstrap intervals.

    Parameters
    ----------
    baseline, perturbed : array-like of int, shape (n_items,)
        The judge's score of each item as it is and perturbed, aligned by
        position; items missing either (unscored) are left out and counted in
        ``n_missing``.
    clusters : array-like, shape (n_items,), or None
        Task id per item (None: every item its own cluster).
    scale : sequence of int
        Scale values, lowest first.
    consensus : array-like of int, shape (n_items,), optional
        The human consensus per item (missing where unresolved); gives
        ``consensus_shift`` and ``agreement_change``.
    resamples, seed, level
        Bootstrap settings, as in
        :func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`.

    Returns
    -------
    dict
        ``mean_shift``, ``flip_rate``, ``robustness_rate``, ``consensus_shift``,
        ``agreement_change``: each {"value", "ci_low", "ci_high"} (NaN where
        undefined, with a sentence in ``reasons``); ``n_items``, ``n_missing``,
        ``n_clusters``, ``n_up``, ``n_down`` (items moved up / down),
        ``n_consensus`` (items with a consensus), ``bootstrap``, ``reasons``.

    Examples
    --------
    >>> r = probe_effect([0, 0, 1, -1] * 10, [1, 0, 1, 0] * 10, scale=(-1, 0, 1), resamples=500)
    >>> r["mean_shift"]["value"], r["flip_rate"]["value"], r["robustness_rate"]["value"]
    (0.5, 0.5, 0.5)
    >>> r["mean_shift"]["ci_low"] > 0
    True
    """
    values = check_scale(scale)
    check_bootstrap_options(resamples, seed, level)
    b = score_codes(baseline, name="baseline", scale=values)
    p = score_codes(perturbed, name="perturbed", scale=values)
    arrays = {"baseline": b, "perturbed": p}
    if consensus is not None:
        c = score_codes(consensus, name="consensus", scale=values)
        arrays["consensus"] = c
    else:
        c = np.full(len(b), -1, dtype=np.int64)
    n_all = check_same_length(**arrays)
    groups_all, _ = cluster_codes(clusters, n_all)
    keep = (b >= 0) & (p >= 0)
    b, p, c = values[b[keep]], values[p[keep]], c[keep]
    has_c = c >= 0
    cv = np.where(has_c, values[np.maximum(c, 0)], 0)
    _, groups = np.unique(groups_all[keep], return_inverse=True)
    n, n_clusters = int(keep.sum()), int(groups.max() + 1) if keep.any() else 0
    d = (p - b).astype(np.float64)
    flips = (d != 0).astype(np.float64)
    agree_change = ((p == cv) & has_c).astype(np.float64) - ((b == cv) & has_c).astype(np.float64)
    cols = np.column_stack([np.ones(n), d, flips, has_c.astype(np.float64), d * has_c, agree_change])
    per_cluster = np.zeros((n_clusters, cols.shape[1]))
    np.add.at(per_cluster, groups, cols)
    total = per_cluster.sum(axis=0)
    n_c = int(total[3])

    def ratio(num: float, den: float) -> float:
        return float(num / den) if den > 0 else float("nan")

    out = ProbeEffect(
        _nan_interval(ratio(total[1], total[0])), _nan_interval(ratio(total[2], total[0])),
        _nan_interval(ratio(total[0] - total[2], total[0])), _nan_interval(ratio(total[4], total[3])),
        _nan_interval(ratio(total[5], total[3])), n, int(n_all - n), n_clusters, int((d > 0).sum()),
        int((d < 0).sum()), n_c,
        {"resamples": int(resamples), "seed": int(seed), "cluster": True, "level": float(level),
         "interval": "expanded percentile (shifts), wilson (rates)"})
    if n < 2:
        out.reasons = {k: NOT_ENOUGH for k in ("mean_shift", "flip_rate", "robustness_rate", "consensus_shift",
                                               "agreement_change")}
        return out.to_json()
    if n_clusters < 2:
        for k in ("mean_shift", "consensus_shift", "agreement_change"):
            out.reasons[k] = ONE_CLUSTER
    else:
        sums = resample_sums(per_cluster, resamples=resamples, seed=seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = sums[:, 1] / sums[:, 0]
            flip = sums[:, 2] / sums[:, 0]
            c_shift = np.where(sums[:, 3] > 0, sums[:, 4] / sums[:, 3], np.nan)
            c_agree = np.where(sums[:, 3] > 0, sums[:, 5] / sums[:, 3], np.nan)
        wide = expanded_level(level, n_clusters)
        for key, metric, samples in (("mean_shift", out.mean_shift, shift),
                                     ("consensus_shift", out.consensus_shift, c_shift),
                                     ("agreement_change", out.agreement_change, c_agree)):
            if np.isnan(metric.value):
                out.reasons[key] = "no item has a consensus label" if key != "mean_shift" else NOT_ENOUGH
                continue
            metric.ci_low, metric.ci_high, _ = percentile_interval(samples, wide)
        deff = design_effect(out.flip_rate.value, n, float(np.var(flip, ddof=1)), n_clusters)
        low, high = proportion_interval(out.flip_rate.value, n, level=level, deff=deff)
        out.flip_rate.ci_low, out.flip_rate.ci_high, out.flip_rate.design_effect = low, high, deff
        out.robustness_rate.ci_low, out.robustness_rate.ci_high = 1 - high, 1 - low
    if n_clusters < 2:  # a proportion still has an interval: each cluster counts as one item
        low, high = proportion_interval(out.flip_rate.value, n, level=level, deff=float(n))
        out.flip_rate.ci_low, out.flip_rate.ci_high = low, high
        out.robustness_rate.ci_low, out.robustness_rate.ci_high = 1 - high, 1 - low
    return out.to_json()
