"""The statistics of selective judging against published values, hand computations and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from workbench.stats.selective import (choose_threshold, clopper_pearson_lower, confidence_from_repeats,
                                       min_kept_to_reach, start_size, threshold_grid)


def test_clopper_pearson_published_and_closed_forms():
    # 5 of 10: the exact two-sided 95% interval is (0.1871, 0.8129) (Clopper and Pearson 1934; e.g. Agresti and
    # Coull 1998, Am Stat 52:119-126): its lower end is the one-sided bound at risk 0.025
    assert clopper_pearson_lower(5, 10, 0.025) == pytest.approx(0.1871, abs=5e-5)
    # all n agree: the bound is risk ** (1 / n); none agree: 0
    for n in (1, 7, 29, 300):
        assert clopper_pearson_lower(n, n, 0.05) == pytest.approx(0.05 ** (1 / n), rel=1e-9)
    assert clopper_pearson_lower(0, 40, 0.05) == 0.0
    # the same as statsmodels' 'beta' interval (two-sided at 2 * risk)
    from statsmodels.stats.proportion import proportion_confint
    for k, n in ((17, 20), (90, 100), (3, 9)):
        assert clopper_pearson_lower(k, n, 0.05) == pytest.approx(proportion_confint(k, n, 0.1, "beta")[0], abs=1e-9)


def test_min_kept_by_hand():
    # 0.9 ** 28 = 0.0523 > 0.05 >= 0.9 ** 29 = 0.0471: 29 items that all agree are the fewest to show 90%
    assert 0.9 ** 28 > 0.05 >= 0.9 ** 29
    assert min_kept_to_reach(0.9, 0.05) == 29
    assert min_kept_to_reach(0.9, 0.05, 0.9) is None  # agreement at the target never clears it
    n = min_kept_to_reach(0.85, 0.1, 0.925)
    assert clopper_pearson_lower(math.floor(0.925 * n), n, 0.1) >= 0.85
    assert clopper_pearson_lower(math.floor(0.925 * (n - 1)), n - 1, 0.1) < 0.85
    # the start: twice the perfect-agreement floor; at 0.9 / 0.05, 58 kept with one miss (57 agreeing) pass
    assert start_size(0.9, 0.05) == 58
    assert clopper_pearson_lower(57, 58, 0.05) >= 0.9 > clopper_pearson_lower(56, 58, 0.05)


def test_fixed_sequence_by_hand_stops_at_the_first_failure():
    """Thresholds 0.9, 0.8, 0.7, 0.6 keep 60, 80, 100, 120 items. Agreements 60/60, 76/80, 80/100, 118/120: the
    third test fails, so the threshold is 0.8, even though 0.6 (118/120) would clear the target on its own."""
    conf = np.repeat([0.9, 0.8, 0.7, 0.6], [60, 20, 20, 20])
    agree = np.concatenate([np.ones(60), np.r_[np.ones(16), np.zeros(4)], np.r_[np.ones(4), np.zeros(16)],
                            np.ones(20)]).astype(bool)
    target, risk = 0.85, 0.1
    assert start_size(target, risk) <= 60  # the sequence starts at the highest threshold
    r = choose_threshold(conf, agree, target=target, risk=risk)
    bounds = [clopper_pearson_lower(k, n, risk) for k, n in ((60, 60), (76, 80), (80, 100), (98, 120))]
    assert bounds[0] >= target and bounds[1] >= target and bounds[2] < target
    assert [s.threshold for s in r.steps] == [0.9, 0.8, 0.7]  # nothing tested after the failure
    assert [s.lower_bound for s in r.steps] == pytest.approx(bounds[:3])
    assert (r.threshold, r.n_kept, r.n_agree) == (0.8, 80, 76)
    assert r.coverage == pytest.approx(80 / 120) and r.agreement == pytest.approx(0.95)
    assert r.lower_bound == pytest.approx(bounds[1]) and r.guaranteed


def test_the_sequence_starts_where_enough_items_are_kept():
    """The trap: a few very confident items, one wrong. Starting on them (5 kept) fails at once; the sequence
    starts at the start size instead and finds the threshold keeping most items."""
    rng = np.random.default_rng(1)
    conf = np.r_[np.full(5, 0.99), rng.uniform(0.5, 0.9, 295)]
    agree = np.r_[[True, True, True, True, False], rng.random(295) < 0.97]
    r = choose_threshold(conf, agree, target=0.85, risk=0.1)
    assert r.steps[0].n_kept >= start_size(0.85, 0.1) > 5
    assert r.guaranteed and r.coverage > 0.9


def test_no_threshold_says_how_many_more_labels():
    conf = np.linspace(0, 1, 40)
    agree = np.ones(40, dtype=bool)
    r = choose_threshold(conf, agree, target=0.95, risk=0.05)  # 40 items, all agree: 0.05 ** (1/40) = 0.928
    assert not r.guaranteed and r.threshold is None
    at_least, about = r.more_labels()
    assert at_least == min_kept_to_reach(0.95, 0.05) - 40 == 59 - 40
    assert about == at_least  # observed agreement is perfect: the estimate is the floor


def test_grid_depends_on_confidences_only_and_respects_the_start():
    conf = np.random.default_rng(2).random(500)
    grid = threshold_grid(conf, min_kept=100, steps=20)
    assert grid == sorted(grid, reverse=True) and len(grid) <= 20
    assert (conf >= grid[0]).sum() >= 100 and grid[-1] == conf.min()


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=300),
       st.floats(0.55, 0.97), st.floats(0.01, 0.5))
def test_properties(rows, target, risk):
    conf = np.array([c for c, _ in rows])
    agree = np.array([a for _, a in rows])
    r = choose_threshold(conf, agree, target=target, risk=risk)
    passed = [s.passed for s in r.steps]
    assert all(passed[:-1])  # every test before the last passed (it stops at the first failure)
    if r.guaranteed:
        assert r.lower_bound >= target and r.lower_bound <= r.agreement
        kept = conf >= r.threshold
        assert (r.n_kept, r.n_agree) == (kept.sum(), (kept & agree).sum())
    else:
        assert r.coverage == 0 and r.more_labels()[0] >= 1


def test_repeats():
    assert confidence_from_repeats(0, [0, 0, 1]) == pytest.approx(2 / 3)
    assert confidence_from_repeats(0, [1]) is None


def test_validity_by_simulation_with_a_planted_judge():
    """A judge whose chance of agreeing rises with its confidence (p = 0.6 + 0.4 c): over 400 calibration sets
    the true agreement above the chosen threshold (known exactly here) is below the target in at most risk of
    them, up to binomial noise (one-sided 99%: risk * S + 2.33 sd)."""
    rng = np.random.default_rng(3)
    target, risk, S = 0.9, 0.1, 400
    failures = 0
    for _ in range(S):
        conf = rng.random(400)
        agree = rng.random(400) < 0.6 + 0.4 * conf
        r = choose_threshold(conf, agree, target=target, risk=risk)
        if r.guaranteed:
            t = r.threshold  # true agreement on c >= t: mean of 0.6 + 0.4 c over U(t, 1) = 0.6 + 0.2 (1 + t)
            failures += 0.6 + 0.2 * (1 + t) < target
    assert failures <= risk * S + 2.33 * math.sqrt(S * risk * (1 - risk))
