"""Estimates that describe the whole golden set when its labels came from the active queue: each label's
inclusion probability, and the inverse-probability-weighted agreement, self-preference and alt-test.

The active queue (``workbench.features.planning.active_queue``) decides which items reviewers are served first;
the probabilities it recorded are read back here, so a calibration report weighs each label by how likely its item
was to be labeled at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.core.models import GoldenSetRecord
from workbench.store import Store
from workbench.store import active_queue as q


@dataclass(frozen=True, slots=True)
class ActiveDesign:
    """The golden set's active-queue design as stored (``store.active_queue.design``): the rubric and judge it
    serves, its phase, and the share of items labeled (in random order) before it went active."""

    golden_set_id: int
    phase: int
    rubric_name: str
    judge_id: str
    expected_labels: float
    labeled_before: float
    checks: list[str]
    created_by: str | None
    created_at: str


def active_design(store: Store, golden_set_id: int) -> ActiveDesign | None:
    row = q.design(store, golden_set_id)
    return ActiveDesign(**row) if row else None


def item_inclusion(store: Store, gs: GoldenSetRecord, rubric_name: str) -> dict[str, float]:
    """item_id -> inclusion probability, when any label of the set came from the active queue (else empty).

    With the design in this database the probability is exact for its phases: a share ``f0`` of the items
    was labeled (in random order) before the queue went active, and each design phase served its items up to
    the priority ``s_p``, so ``pi = 1 - (1 - f0) prod_p (1 - min(1, s_p rate_p))``
    (:func:`workbench.stats.label_simulation.phased_inclusion`). Labels imported without the design keep the
    probabilities they recorded, which a ratio estimator needs only up to a common factor.
    """
    from workbench.stats.label_simulation import phased_inclusion

    by_label = q.label_inclusion(store, gs.id, rubric_name)
    if not by_label:
        return {}
    ids = list(store.item_pks(gs.id))
    d = active_design(store, gs.id)
    thresholds = q.served_thresholds(store, gs.id, rubric_name) if d and d.rubric_name == rubric_name else {}
    if not thresholds:  # no design here (the labels were imported): what they recorded
        recorded: dict[str, float] = {}
        for (item_id, _), p in by_label.items():
            recorded[item_id] = min(p, recorded.get(item_id, 1.0))
        fallback = max(recorded.values())
        return {i: recorded.get(i, fallback) for i in ids}
    rates = q.phase_rates(store, gs.id)
    phases = [(np.array([rates[p].get(i, 1.0) for i in ids]), s) for p, s in sorted(thresholds.items())]
    pi = phased_inclusion(float(d.labeled_before), phases)
    return dict(zip(ids, pi.tolist()))


def weighted_estimates(ids: list[str], c: np.ndarray, j: np.ndarray, sub, inclusion: dict[str, float], *,
                       spec, scale: list[int], pass_threshold: int, resamples: int, seed: int, labels, scored,
                       epsilon: float, alt_metric: str) -> tuple[dict, dict, dict, dict]:
    """(agreement, self-preference, alt-test, sampling design) with inverse-probability weights, for the report."""
    import pandas as pd

    from workbench.stats import alternative_annotator_test
    from workbench.stats.intervals import weighted

    w = weighted.inverse_probability_weights([inclusion[i] for i in ids]) if ids else np.zeros(0)
    clusters = sub["task_id"].to_numpy()
    agreement = weighted.weighted_agreement_with_intervals(c, j, clusters, w, scale=scale,
                                                           pass_threshold=pass_threshold, resamples=resamples,
                                                           seed=seed)
    bias = weighted.weighted_self_preference(c, j, w, scale=scale, producer_model=sub["producer_model"].to_numpy(),
                                             producer_family=sub["producer_family"].to_numpy(),
                                             judge_model=spec.model_name, judge_family=spec.family,
                                             clusters=clusters, resamples=resamples, seed=seed)
    alt = alternative_annotator_test(labels, scored, scale=scale, epsilon=epsilon, metric=alt_metric,
                                     weights=1.0 / pd.Series(inclusion, dtype=float))
    design = {"design": "active", "estimator": "Hajek ratio, weights 1 / inclusion probability",
              "interval": weighted.INTERVAL, "kish_effective_n": agreement["design"]["kish_effective_n"],
              "weighted": ["metrics", "self_preference", "alt_test", "human_ceiling.human_pairwise_agreement",
                           "human_ceiling.judge_human_pairwise_agreement"],
              "unweighted": ["human_ceiling.krippendorff_alpha_ordinal", "per_category", "noise", "drift"]}
    return agreement, bias, alt, design
