"""Inverse-probability-weighted estimators: properties, and a planted oversampling they undo."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.features.demo.generator import DATA_DIR
from workbench.stats import agreement_metrics, alternative_annotator_test, human_ceiling
from workbench.stats.intervals.weighted import weighted_agreement_with_intervals, weighted_self_preference

from .pools import demo_pool

SCALE = (-1, 0, 1)


def test_equal_weights_give_the_unweighted_values_and_scaling_changes_nothing() -> None:
    pool = demo_pool(n_items=400, fail_share=0.2, seed=2)
    point = agreement_metrics(pool.consensus, pool.judge, scale=SCALE, pass_threshold=0)
    ones = weighted_agreement_with_intervals(pool.consensus, pool.judge, pool.clusters, np.ones(400), scale=SCALE,
                                             pass_threshold=0, resamples=200)
    sevens = weighted_agreement_with_intervals(pool.consensus, pool.judge, pool.clusters, np.full(400, 7.0),
                                               scale=SCALE, pass_threshold=0, resamples=200)
    for name in ("exact_agreement", "cohen_kappa", "krippendorff_alpha_ordinal", "tpr", "tnr", "mean_signed_error"):
        assert ones["metrics"][name]["value"] == pytest.approx(point[name])
        assert sevens["metrics"][name] == pytest.approx(ones["metrics"][name])


def test_equal_weights_give_the_unweighted_alternative_annotator_test() -> None:
    rows = [json.loads(line) for line in
            (DATA_DIR / "golden_sets" / "demo" / "demo-patch-quality" / "labels.jsonl").read_text().splitlines()]
    labels = pd.DataFrame(rows)[["item_id", "rater", "score"]]
    judge = labels.groupby("item_id")["score"].max()  # a lenient stand-in judge
    plain = alternative_annotator_test(labels, judge, scale=SCALE, min_items=20)
    weighted = alternative_annotator_test(labels, judge, scale=SCALE, min_items=20,
                                          weights=pd.Series(3.0, index=judge.index))
    assert plain["raters"], plain["reason"]
    for a, b in zip(plain["raters"], weighted["raters"]):
        assert b["p_value"] == pytest.approx(a["p_value"], rel=1e-9)
        assert b["advantage_probability"] == pytest.approx(a["advantage_probability"])


def test_weights_undo_a_planted_oversampling() -> None:
    """Judge-fail items drawn 5x as often: the unweighted TNR and same-family effect are off, the weighted not."""
    pool = demo_pool(n_items=4000, fail_share=0.15, seed=9, self_preference=0.3, error=0.15)
    full_tnr = agreement_metrics(pool.consensus, pool.judge, scale=SCALE, pass_threshold=0)["tpr"]
    same = pool.family == "openai"
    r = (pool.judge - pool.consensus).astype(float)
    full_effect = r[same].mean() - r[~same].mean()
    pi = np.where(pool.judge < 0, 0.5, 0.1)
    plain, weighted, eff_plain, eff_weighted = [], [], [], []
    for seed in range(20):
        take = np.random.default_rng(seed).random(pool.size) < pi
        w = 1 / pi[take]
        a = weighted_agreement_with_intervals(pool.consensus[take], pool.judge[take], pool.clusters[take], w,
                                              scale=SCALE, pass_threshold=0, resamples=50)
        weighted.append(a["metrics"]["tpr"]["value"])
        plain.append(agreement_metrics(pool.consensus[take], pool.judge[take], scale=SCALE, pass_threshold=0)["tpr"])
        kw = dict(scale=SCALE, producer_model=pool.model[take], producer_family=pool.family[take],
                  judge_model="gpt-4o", judge_family="openai", resamples=50)
        eff_weighted.append(weighted_self_preference(pool.consensus[take], pool.judge[take], w, **kw)
                            ["same_family"]["value"])
        eff_plain.append(weighted_self_preference(pool.consensus[take], pool.judge[take], np.ones(take.sum()), **kw)
                         ["same_family"]["value"])
    assert abs(np.mean(weighted) - full_tnr) < 0.01 < abs(np.mean(plain) - full_tnr)
    assert abs(np.mean(eff_weighted) - full_effect) < 0.02 < abs(np.mean(eff_plain) - full_effect)


def _two_reviewers(pool, seed: int = 1) -> tuple[pd.DataFrame, pd.Series, np.ndarray]:
    """Two reviewers per item, each right 90% of the time, else one step off (kept on the scale)."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"i{k}" for k in range(pool.size)])
    rows = []
    for i, truth in zip(ids, pool.consensus):
        for rater in ("ana", "ben"):
            off = 0 if rng.random() < 0.9 else (1 if truth < 1 and (truth == -1 or rng.random() < 0.5) else -1)
            rows.append({"item_id": i, "rater": rater, "score": int(truth + off)})
    return pd.DataFrame(rows), pd.Series(pool.judge, index=ids), ids


@pytest.mark.slow
def test_the_paired_interval_of_judge_minus_human_agreement_covers() -> None:
    """The plan decides the gate's comparison with the reviewers by (judge-human - human-human) +/- 1.96 se, se
    from the per-item differences: over 300 samples of 80 items, in random order and in a design drawing the items
    the judge scores -1 five times as often (weighted), the interval covers the whole set's difference."""
    pool = demo_pool(n_items=3000, fail_share=0.15, seed=5, error=0.15)
    labels, judge, ids = _two_reviewers(pool)
    full = human_ceiling(labels, judge, scale=SCALE)
    truth = full["judge_human_pairwise_agreement"] - full["human_pairwise_agreement"]
    pi = pd.Series(np.where(pool.judge < 0, 0.5, 0.1), index=ids)
    for design in ("random", "oversampled"):
        hits, runs = 0, 300
        for seed in range(runs):
            rng = np.random.default_rng(seed)
            if design == "random":
                take, weights = rng.choice(ids, size=80, replace=False), None
            else:  # Poisson sampling at pi, then the first 80 in random order
                drawn = ids[rng.random(pool.size) < pi.to_numpy()]
                take, weights = rng.choice(drawn, size=80, replace=False), 1 / pi
            h = human_ceiling(labels[labels["item_id"].isin(set(take))], judge, scale=SCALE, weights=weights)
            d = h["judge_human_pairwise_agreement"] - h["human_pairwise_agreement"]
            hits += abs(d - truth) <= 1.96 * h["judge_minus_human_se"]
        assert hits / runs >= 0.93, (design, hits / runs)


def test_weighted_pairwise_agreements_undo_a_planted_oversampling() -> None:
    """The gate's like-for-like comparison (judge-human against human-human pairwise agreement) on a sample that
    draws the items the judge scores -1 five times as often: unweighted, the judge looks worse than it is on the
    whole set (it errs most there); weighted, both numbers come back to the whole set's; equal weights change
    nothing."""
    pool = demo_pool(n_items=3000, fail_share=0.15, seed=5, error=0.15)
    labels, judge, ids = _two_reviewers(pool)
    full = human_ceiling(labels, judge, scale=SCALE)
    same = human_ceiling(labels, judge, scale=SCALE, weights=pd.Series(4.0, index=ids))
    for name in ("human_pairwise_agreement", "judge_human_pairwise_agreement"):
        assert same[name] == pytest.approx(full[name])
    pi = pd.Series(np.where(pool.judge < 0, 0.5, 0.1), index=ids)
    plain, weighted = [], []
    for seed in range(40):
        take = ids[np.random.default_rng(seed).random(pool.size) < pi.to_numpy()]
        sample = labels[labels["item_id"].isin(set(take))]
        plain.append(human_ceiling(sample, judge, scale=SCALE)["judge_human_pairwise_agreement"])
        weighted.append(human_ceiling(sample, judge, scale=SCALE, weights=1 / pi)["judge_human_pairwise_agreement"])
    truth = full["judge_human_pairwise_agreement"]
    assert abs(np.mean(weighted) - truth) < 0.015 < abs(np.mean(plain) - truth), (np.mean(plain), np.mean(weighted),
                                                                                 truth)
    with pytest.raises(ValueError, match="weights must be positive"):
        human_ceiling(labels, judge, scale=SCALE, weights=pd.Series(0.0, index=ids))


def test_bad_weights_are_refused_by_position() -> None:
    with pytest.raises(ValueError, match="position 1"):
        weighted_agreement_with_intervals([0, 1], [0, 1], None, [1.0, 0.0], scale=(0, 1), pass_threshold=1)


def test_phased_inclusion_matches_the_frequency_of_inclusion() -> None:
    """Labels in random order first, then two design phases, each served in its own v / rate order up to its
    threshold: each item's share of the samples that hold it is the formula's probability."""
    from workbench.stats.label_simulation import phased_inclusion

    rng = np.random.default_rng(0)
    n, first, thresholds = 40, 8, (1.5, 0.8)
    rates = [rng.uniform(0.05, 0.6, n), rng.uniform(0.05, 0.9, n)]
    counts = np.zeros(n)
    draws = 20_000
    for _ in range(draws):
        included = np.zeros(n, dtype=bool)
        included[rng.permutation(n)[:first]] = True
        for rate, s in zip(rates, thresholds):
            included |= rng.random(n) / rate <= s
        counts += included
    expected = phased_inclusion(first / n, list(zip(rates, thresholds)))
    assert np.abs(counts / draws - expected).max() < 0.015
