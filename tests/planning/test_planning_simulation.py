"""Planner formulas against the issue's published figures, and simulations at the statistics level (slow, bounded)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.stats import planning as sp
from workbench.stats.label_simulation import active_design, campaign, estimates, pool_decision, pool_values, summarize
from workbench.stats.planning import queue_priority

from .pools import demo_pool


def test_sample_sizes_match_the_standard_formulas() -> None:
    # the figures: kappa 0.8 +/- 0.10 needs ~139 items at 50% prevalence, ~400 at 10%; TPR 0.9 +/- 0.05: 139
    assert sp.kappa_items_for_halfwidth(0.8, 0.5, 0.10) == 139
    assert 400 <= sp.kappa_items_for_halfwidth(0.8, 0.1, 0.10) <= 415
    assert sp.items_for_proportion_halfwidth(0.9, 0.05) == 139
    # a rarer class always needs more items for the same kappa interval
    assert sp.kappa_items_for_halfwidth(0.8, 0.05, 0.1) > sp.kappa_items_for_halfwidth(0.8, 0.2, 0.1)


def test_neyman_inclusion_keeps_every_item_in_play() -> None:
    rng = np.random.default_rng(0)
    strata = rng.integers(0, 6, 1000)
    dev = np.where(strata == 0, 5.0, 0.0)  # all the variance in one stratum
    pi = sp.neyman_inclusion(strata, dev, expected_labels=100, floor=0.25)
    assert pi.min() == pytest.approx(0.25 * 100 / 1000)
    assert pi.sum() == pytest.approx(100)
    assert pi[strata == 0].min() > pi[strata != 0].max()


@pytest.mark.slow
def test_weighted_intervals_cover_the_full_pool_value() -> None:
    """Active-design samples of 250 items from a 2,000-item pool (10% fails, a planted same-family effect of 0.2):
    each weighted interval holds the pool's value in at least 93% of 200 samples."""
    pool = demo_pool(n_items=2000, fail_share=0.1, seed=5, self_preference=0.2)
    truth = pool_values(pool)
    pi = active_design(pool, expected_labels=250)
    assert pi.max() / pi.min() > 2  # a design far from uniform
    hits = {k: 0 for k in truth}
    runs = 200
    for seed in range(runs):
        u = np.random.default_rng(1000 + seed).random(pool.size)
        idx = np.argsort(queue_priority(u, pi))[:250]
        est = estimates(pool, idx, 1 / pi[idx], resamples=300, seed=seed)
        for k, v in truth.items():
            hits[k] += est[k]["ci_low"] <= v <= est[k]["ci_high"]
    coverage = {k: h / runs for k, h in hits.items()}
    assert min(coverage.values()) >= 0.93, coverage


@pytest.mark.slow
@pytest.mark.parametrize("pool_args, at_most", [
    # 10% fails, 1,000 items: measured over 64 campaigns 35-37% fewer (README "Fewer labels to a verdict"); over
    # four blocks of 32 seeds, looking every 25 items, 24-42% from the start and 17-40% after the switch, so 15%
    # holds for any block (the 30% is not reached on every pool, which the README's table shows)
    (dict(n_items=1000, fail_share=0.1, seed=11), 0.85),
    # 5% fails, the judge's family not in the pool (self-preference not measurable): TNR, decided last in random
    # order for want of consensus fails, is where the allocation pays most; the 30% (measured 47-54%)
    (dict(n_items=2000, fail_share=0.05, seed=3, judge_family="meta"), 0.7),
], ids=["10pct-fails", "5pct-fails-family-absent"])
def test_active_order_reaches_the_pools_decision_with_fewer_labels(pool_args, at_most) -> None:
    """The active queue from the first label, and the first 50 labels in random order then the active queue, each
    re-planned when the checks it serves are no longer the undecided ones, reach the whole pool's decision with
    at most ``at_most`` of random order's labels and no more wrong decisions (32 campaigns each)."""
    pool = demo_pool(**pool_args)
    truth = pool_decision(pool)
    random_runs = summarize([campaign(pool, "random", seed=s, truth=truth, max_labels=800) for s in range(32)])
    for warmup in (False, True):
        active_runs = summarize([campaign(pool, "active", seed=s, truth=truth, max_labels=800, warmup=warmup)
                                 for s in range(32)])
        assert active_runs["mean_labels"] <= at_most * random_runs["mean_labels"], (warmup, active_runs,
                                                                                    random_runs)
        assert active_runs["wrong_rate"] <= random_runs["wrong_rate"]


@pytest.mark.slow
def test_planned_items_for_a_width_match_the_simulation() -> None:
    """From a pilot of 100 random items, the planned items for an alpha interval 0.1 wide are within 25% of the
    median number a simulated random-order campaign needs."""
    pool = demo_pool(n_items=3000, fail_share=0.3, seed=7, error=0.15)
    width, needed = 0.1, []
    predicted = []
    for seed in range(8):
        order = np.random.default_rng(seed).permutation(pool.size)
        pilot = estimates_alpha(pool, order[:100], seed)
        predicted.append(sp.items_for_width(pilot["se"], 100, width))
        for n in range(100, pool.size, 20):
            if estimates_alpha(pool, order[:n], seed)["width"] <= width:
                needed.append(n)
                break
    ratio = np.median(predicted) / np.median(needed)
    assert 0.75 <= ratio <= 1.25, (predicted, needed)


def estimates_alpha(pool, idx, seed) -> dict:
    from workbench.stats.intervals.weighted import weighted_agreement_with_intervals

    a = weighted_agreement_with_intervals(pool.consensus[idx], pool.judge[idx], pool.clusters[idx], np.ones(len(idx)),
                                          scale=pool.scale, pass_threshold=pool.pass_threshold, resamples=300,
                                          seed=seed)
    m = a["metrics"]["krippendorff_alpha_ordinal"]
    return {"se": a["standard_errors"]["krippendorff_alpha_ordinal"], "width": m["ci_high"] - m["ci_low"]}


def test_true_label_allocation_serves_only_where_the_judge_errs() -> None:
    """The bound of the README's table: with the pool's true labels, Neyman allocation for agreement puts every
    label it can on the one stratum where the judge errs (judge +1, category b); the exact strata share one lower
    rate (the Hajek estimator's variable is the distance minus its pool mean, which an exact item still has)."""
    from workbench.stats.label_simulation import Pool, oracle_design

    rng = np.random.default_rng(3)
    n = 600
    judge = rng.choice([-1, 0, 1], n)
    category = np.where(rng.random(n) < 0.5, "a", "b").astype(object)
    consensus = judge.copy()
    errs = (judge == 1) & (category == "b")
    consensus[errs] = rng.choice([-1, 0, 1], errs.sum())
    pool = Pool(consensus=consensus, judge=judge, clusters=np.arange(n).astype(object), category=category,
                family=np.array(["x"] * n), model=np.array(["m"] * n), judge_model="j", judge_family="none")
    pi = oracle_design(pool, expected_labels=60, checks=("agreement",))
    assert pi[errs].min() > 3 * pi[~errs].max()
    assert np.ptp(pi[~errs]) == pytest.approx(0) and pi[~errs].min() > 0.25 * 60 / n
    assert pi.sum() == pytest.approx(60)


def test_conditional_by_group_follows_a_groups_own_errors() -> None:
    """A judge that errs on every 'hard' item it scores +1 and never on 'easy' ones: with 200 labels per group the
    hard group's P(human = +1 | judge +1) falls near 0 and the easy group's stays near 1; a group with no label
    keeps the pooled estimate."""
    judge = np.array([1] * 400)
    human = np.array([-1] * 200 + [1] * 200)
    group = np.array(["hard"] * 200 + ["easy"] * 200)
    p = sp.human_given_judge_by_group(judge, human, group, item_judge=[1, 1, 1], item_group=["hard", "easy", "new"],
                                      scale=(-1, 0, 1))
    pooled = sp.human_given_judge(judge, human, scale=(-1, 0, 1))[2]
    assert p[0, 2] < 0.05 and p[1, 2] > 0.95
    assert p[2] == pytest.approx(pooled)
    assert p.sum(axis=1) == pytest.approx(np.ones(3))
