"""Simulating a labeling campaign: how many labels random and active order need to reach the gate's decision.

A *pool* is a golden set whose every item already has its human label (the
consensus) and its judge score, so the full-pool value of every gate
measurement is known. A campaign labels items in some order, checkpoint by
checkpoint, and stops when every check of the gate is decided from the
labeled items (its interval lies wholly on one side of its threshold) or one
is decisively failed; its decision is then compared with the decision on the
whole pool. Random order labels items in a random order with equal
weights; active order labels in the order of
:func:`~workbench.stats.planning.queue_priority` with Neyman inclusion
probabilities, re-planned as checks are decided, and estimates with
inverse-probability weights (:mod:`workbench.stats.intervals.weighted`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from workbench.stats.agreement import agreement_metrics
from workbench.stats.planning import (CHECK_TARGETS, COUNT_TARGETS, human_given_judge_by_group, neyman_inclusion,
    band_decision, stratum_deviations, threshold_decision)
from workbench.stats.intervals.records import MetricInterval
from workbench.stats.intervals.weighted import weighted_agreement_with_intervals, weighted_self_preference


@dataclass(frozen=True)
class Pool:
    consensus: np.ndarray
    judge: np.ndarray
    clusters: np.ndarray
    category: np.ndarray
    family: np.ndarray
    model: np.ndarray
    judge_model: str
    judge_family: str
    scale: tuple[int, ...] = (-1, 0, 1)
    pass_threshold: int = 0

    @property
    def size(self) -> int:
        return len(self.consensus)


@dataclass(frozen=True)
class GateRule:
    """The gate's thresholds (the defaults of ``workbench.calibration.gate.Policy``)."""

    min_items: int = 50
    min_agreement_lower: float = 0.667
    min_class_items: int = 10
    min_tpr_lower: float = 0.5
    min_tnr_lower: float = 0.5
    max_self_preference: float = 0.10


@dataclass
class Campaign:
    order: str
    labels: int
    decision: bool | None  # True: calibrated; False: not; None: not decided before the pool ran out
    correct: bool = False


@dataclass(frozen=True, slots=True)
class PoolValues:
    """The full-pool value of each gate measurement: what a campaign's decision is checked against."""

    krippendorff_alpha_ordinal: float
    tpr: float
    tnr: float
    same_family: float

    def to_json(self) -> dict[str, float]:
        return asdict(self)  # the fields in the JSON's key order


@dataclass(frozen=True, slots=True)
class GateEstimates:
    """The gate's measurements estimated from the labeled items, with intervals; ``n_pos`` and ``n_neg`` count
    consensus passes and fails, ``family_in_pool`` whether any pool item is of the judge's family."""

    krippendorff_alpha_ordinal: MetricInterval
    tpr: MetricInterval
    tnr: MetricInterval
    same_family: MetricInterval
    n_items: int
    n_pos: int
    n_neg: int
    family_in_pool: bool

    def to_json(self) -> dict[str, Any]:
        return {"krippendorff_alpha_ordinal": self.krippendorff_alpha_ordinal.to_json(), "tpr": self.tpr.to_json(),
                "tnr": self.tnr.to_json(), "same_family": self.same_family.to_json(), "n_items": self.n_items,
                "n_pos": self.n_pos, "n_neg": self.n_neg, "family_in_pool": self.family_in_pool}


def pool_values(pool: Pool) -> dict[str, float]:
    """The full-pool value of each gate measurement (:class:`PoolValues` as JSON)."""
    return full_pool(pool).to_json()


def full_pool(pool: Pool) -> PoolValues:
    """The full-pool value of each gate measurement."""
    m = agreement_metrics(pool.consensus, pool.judge, scale=pool.scale, pass_threshold=pool.pass_threshold)
    same = np.char.lower(pool.family.astype(str)) == pool.judge_family.lower()
    r = (pool.judge - pool.consensus).astype(float)
    effect = float(r[same].mean() - r[~same].mean()) if same.any() and (~same).any() else float("nan")
    return PoolValues(m["krippendorff_alpha_ordinal"], m["tpr"], m["tnr"], effect)


def pool_decision(pool: Pool, rule: GateRule = GateRule()) -> bool:
    v = full_pool(pool)
    bias_ok = not np.isfinite(v.same_family) or abs(v.same_family) <= rule.max_self_preference
    return bool(v.krippendorff_alpha_ordinal >= rule.min_agreement_lower and v.tpr >= rule.min_tpr_lower
                and v.tnr >= rule.min_tnr_lower and bias_ok)


def estimates(pool: Pool, idx: np.ndarray, weights: np.ndarray, *, resamples: int, seed: int) -> dict[str, Any]:
    """Estimates with intervals from the labeled items ``idx`` with weights (ones for random order), as JSON."""
    return gate_estimates(pool, idx, weights, resamples=resamples, seed=seed).to_json()


def gate_estimates(pool: Pool, idx: np.ndarray, weights: np.ndarray, *, resamples: int, seed: int) -> GateEstimates:
    """Estimates with intervals from the labeled items ``idx`` with weights (ones for random order)."""
    a = weighted_agreement_with_intervals(pool.consensus[idx], pool.judge[idx], pool.clusters[idx], weights,
                                          scale=pool.scale, pass_threshold=pool.pass_threshold,
                                          resamples=resamples, seed=seed)
    sp = weighted_self_preference(pool.consensus[idx], pool.judge[idx], weights, scale=pool.scale,
                                  producer_model=pool.model[idx], producer_family=pool.family[idx],
                                  judge_model=pool.judge_model, judge_family=pool.judge_family,
                                  clusters=pool.clusters[idx], resamples=resamples, seed=seed)
    metrics, denominators, family = a["metrics"], a["denominators"], sp["same_family"]
    alpha, tpr, tnr = (MetricInterval(**metrics[name]) for name in ("krippendorff_alpha_ordinal", "tpr", "tnr"))
    same_family = MetricInterval(family["value"], family["ci_low"], family["ci_high"])
    return GateEstimates(alpha, tpr, tnr, same_family, a["n_items"], denominators["n_pos"], denominators["n_neg"],
                         bool((np.char.lower(pool.family.astype(str)) == pool.judge_family.lower()).any()))


def check_states(est: GateEstimates, rule: GateRule = GateRule()) -> dict[str, bool | None]:
    """Each check: True (decided pass), False (decided fail) or None (undecided), keyed by ``CHECK_TARGETS``."""
    def side(m: MetricInterval, threshold: float) -> bool | None:  # as `workbench plan` reads it
        return threshold_decision(m.value, m.ci_low, m.ci_high, threshold)

    alpha = side(est.krippendorff_alpha_ordinal, rule.min_agreement_lower)
    tpr = side(est.tpr, rule.min_tpr_lower) if est.n_pos >= rule.min_class_items else None
    tnr = side(est.tnr, rule.min_tnr_lower) if est.n_neg >= rule.min_class_items else None
    sf = est.same_family
    if not est.family_in_pool:
        bias = True  # no item of the judge's family anywhere: not measurable, and no label will change that
    else:
        bias = band_decision(sf.value, sf.ci_low, sf.ci_high, rule.max_self_preference)
    return {"agreement": alpha, "tpr": tpr, "tnr": tnr, "self_preference": bias}


def decide(est: GateEstimates, rule: GateRule = GateRule()) -> bool | None:
    """The gate's decision if every check is decided (or one decisively failed), else None."""
    checks = check_states(est, rule).values()
    if any(c is False for c in checks):
        return False
    if all(c is True for c in checks) and est.n_items >= rule.min_items:
        return True
    return None


def active_design(pool: Pool, *, expected_labels: float, floor: float = 0.25,
                  labeled: np.ndarray | None = None,
                  checks: tuple[str, ...] = CHECK_TARGETS + COUNT_TARGETS) -> np.ndarray:
    """Neyman inclusion probabilities of every pool item, strata = judge score x family x category.

    ``labeled`` (indices with known labels) sharpens P(human | judge) in each family x category group; without
    it the prior of :func:`~workbench.stats.planning.human_given_judge` is used.
    """
    idx = np.zeros(0, dtype=int) if labeled is None else labeled
    same = np.char.lower(pool.family.astype(str)) == pool.judge_family.lower()
    group = np.array([f"{f}|{c}" for f, c in zip(same, pool.category)], dtype=object)
    cond = human_given_judge_by_group(pool.judge[idx], pool.consensus[idx], group[idx], item_judge=pool.judge,
                                      item_group=group, scale=pool.scale)
    dev = stratum_deviations(pool.judge, same, cond, scale=pool.scale, pass_threshold=pool.pass_threshold,
                             checks=checks, by_item=True)
    strata = [f"{g}|{s}" for s, g in zip(pool.judge, group)]
    return neyman_inclusion(strata, dev, expected_labels=min(expected_labels, pool.size), floor=floor)


def oracle_design(pool: Pool, *, expected_labels: float, floor: float = 0.25, labeled: np.ndarray | None = None,
                  checks: tuple[str, ...] = CHECK_TARGETS + COUNT_TARGETS) -> np.ndarray:
    """:func:`active_design` with each stratum's deviation computed from the pool's true labels and values.

    No queue can know them: Neyman allocation over the same strata (score x family x category) for the same
    checks as if every label were known, the reference against which the active design is measured (not a
    bound: it minimises each check's variance at a fixed number of labels, not the labels to a sequential
    decision). ``labeled`` is accepted for the signature of :func:`active_design` and not needed.
    """
    values = np.asarray(pool.scale)
    truth = np.eye(len(values))[np.searchsorted(values, pool.consensus)]
    same = np.char.lower(pool.family.astype(str)) == pool.judge_family.lower()
    v = full_pool(pool)
    dev = stratum_deviations(pool.judge, same, truth, scale=pool.scale, pass_threshold=pool.pass_threshold,
                             checks=checks, by_item=True, tpr=v.tpr, tnr=v.tnr)
    strata = np.unique([f"{s}|{f}|{c}" for s, f, c in zip(pool.judge, same, pool.category)], return_inverse=True)[1]
    rms = np.sqrt(np.bincount(strata, weights=dev**2) / np.bincount(strata))  # S_h: root mean square per stratum
    return neyman_inclusion(strata, rms[strata], expected_labels=min(expected_labels, pool.size), floor=floor)


def campaign(pool: Pool, order: str, *, seed: int, step: int = 10, resamples: int = 200,
             rule: GateRule = GateRule(), expected_labels: float | None = None, truth: bool | None = None,
             max_labels: int | None = None, replan: bool = True, warmup: bool = False,
             oracle: bool = False) -> Campaign:
    """Label the pool in ``order`` ("random" or "active") until the gate is decided; the labels it took.

    Active order serves ``v / pi`` lowest first under a Neyman design; with ``replan`` (what a lead does with
    ``golden-set queue --order active`` again when ``plan`` advises it) a new phase with fresh uniforms starts
    whenever the undecided checks (and the class counts still short) differ from those the design serves, and
    every labeled item is weighted by :func:`phased_inclusion`. With ``warmup``
    the first labels (up to the gate's minimum of items) are served in random order and the first design is
    planned from them, as when a lead switches the queue to active once some labels are in. With ``oracle``
    the designs are :func:`oracle_design`'s. A campaign not decided by ``max_labels`` counts as labeling the
    whole pool (and reaching its decision).
    """
    if order not in ("random", "active"):
        raise ValueError(f"order must be 'random' or 'active', got {order!r}")
    rng = np.random.default_rng(seed)
    n = pool.size
    truth = pool_decision(pool, rule) if truth is None else truth
    expected = expected_labels or n / 4
    design = oracle_design if oracle else active_design
    rate = np.ones(n) if order == "random" or warmup else design(pool, expected_labels=expected)
    served = None if order == "random" or warmup else CHECK_TARGETS + COUNT_TARGETS  # what the design serves
    v = rng.random(n)
    included = np.zeros(n, dtype=bool)
    sequence: list[int] = []
    phases: list[tuple[np.ndarray, float]] = []
    threshold = 0.0
    result = Campaign(order, n, None)
    last = min(n, max_labels or n)
    while len(sequence) < last:
        want = min(last, max(rule.min_items, len(sequence) + step))
        free = np.flatnonzero(~included)
        priority = v[free] / rate[free]
        take = free[np.argsort(priority)][: want - len(sequence)]
        included[take] = True
        sequence.extend(take.tolist())
        threshold = max(threshold, float((v[take] / rate[take]).max()))
        idx = np.array(sequence)
        weights = 1.0 / phased_inclusion(0.0, phases + [(rate, threshold)])[idx]
        est = gate_estimates(pool, idx, weights, resamples=resamples, seed=seed)
        decision = decide(est, rule)
        if decision is not None:
            result.labels, result.decision = len(sequence), decision
            break
        states = check_states(est, rule)
        open_now = tuple(name for name, state in states.items() if state is None) or CHECK_TARGETS
        wanted = open_now + tuple(name for name, c in (("find_fails", est.n_neg), ("find_passes", est.n_pos))
                                  if c < rule.min_class_items)
        if order == "active" and replan and wanted != served:
            phases.append((rate, threshold))
            rate = design(pool, expected_labels=expected, labeled=idx, checks=wanted)
            v, threshold, served = rng.random(n), 0.0, wanted
    if result.decision is None:
        result.decision = truth  # labeling everything gives the pool's own decision
    result.correct = result.decision == truth
    return result


def phased_inclusion(first_share: float, phases: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Inclusion probability of every item after a uniform first phase and design phases served in ``v / rate``.

    An item is in the first phase (labels in random order, before the queue went active) with probability
    ``f0``; in design phase ``p``, with its own uniforms ``v``, when ``v <= s_p * rate_p`` (``s_p`` the largest
    ``v / rate_p`` that phase served). The phases are independent draws, so
    ``pi = 1 - (1 - f0) * prod_p (1 - min(1, s_p * rate_p))``.

    >>> phased_inclusion(0.1, [(np.array([0.2, 0.8]), 1.0)]).round(2).tolist()
    [0.28, 0.82]
    """
    missed = np.full(len(phases[0][0]) if phases else 0, 1.0 - first_share)
    for rate, threshold in phases:
        missed = missed * (1.0 - np.minimum(1.0, threshold * np.asarray(rate, dtype=np.float64)))
    return 1.0 - missed


def summarize(runs: list[Campaign]) -> dict[str, float]:
    labels = np.array([r.labels for r in runs], dtype=float)
    return {"runs": len(runs), "mean_labels": float(labels.mean()), "median_labels": float(np.median(labels)),
            "wrong_rate": float(np.mean([not r.correct for r in runs]))}

