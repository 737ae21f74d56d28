"""stats.monitoring: the betting test keeps its level under H0 whenever it is looked at and finds a drop; the
floor a kappa-type bound puts on mean agreement; the shift tests and their alpha spending."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from workbench.stats.monitoring import (
    agreement_scale,
    betting_test,
    category_shift,
    length_shift,
    spent_alpha,
    window_agreement,
)
from workbench.stats.selective.fixed_sequence import clopper_pearson_upper


def test_the_floor_is_where_kappa_with_the_approvals_chance_term_meets_the_bound():
    """On a sample whose marginals equal the approval's, mean agreement at the floor is kappa at the bound
    (sklearn's cohen_kappa_score, nominal and quadratic)."""
    rng = np.random.default_rng(0)
    human = rng.choice([-1, 0, 1], size=4000, p=[0.2, 0.3, 0.5])
    judge = np.where(rng.random(4000) < 0.7, human, rng.permutation(human))  # same marginals, kappa ~0.7
    cm = np.array([[np.sum((human == a) & (judge == b)) for b in (-1, 0, 1)] for a in (-1, 0, 1)])
    for metric, weights in (("cohen_kappa", None), ("cohen_kappa_quadratic", "quadratic")):
        s = agreement_scale(cm, [-1, 0, 1], metric=metric, bound=0.6)
        kappa = cohen_kappa_score(human, judge, weights=weights)
        assert s.as_metric(float(s.agreement(judge, human).mean())) == pytest.approx(kappa, abs=1e-9)
        assert s.as_metric(s.floor) == pytest.approx(0.6, abs=1e-12)


@pytest.mark.slow
def test_the_betting_test_keeps_its_level_at_the_boundary():
    """H0 at its edge (agreement exactly the floor), 1,000 labels, looked at after every one: rejected in at most
    alpha = 5% of 400 runs (+ 2.5 binomial sd)."""
    rng = np.random.default_rng(1)
    rejected = [betting_test(rng.random(1000) < 0.9, 0.9, alpha=0.05).rejected for _ in range(400)]
    assert np.mean(rejected) <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 400)


def test_the_betting_test_finds_a_drop_after_a_long_good_run():
    """1,000 labels at agreement 0.95 (floor 0.9), then 0.7: rejected within 150 labels after the drop in at least
    95% of 200 runs (99.8% of 1,000 runs when measured: median 53, 99th percentile 127), and before the drop in a
    share whose one-sided 95% Clopper-Pearson upper bound is at most alpha (Ville; 0 of those 1,000)."""
    rng = np.random.default_rng(2)
    found = early = 0
    for _ in range(200):
        x = np.concatenate([rng.random(1000) < 0.95, rng.random(300) < 0.7]).astype(float)
        t = betting_test(x, 0.9)
        early += t.crossed_at is not None and t.crossed_at < 1000
        found += t.crossed_at is not None and 1000 <= t.crossed_at < 1150
    assert found >= 0.95 * 200
    assert clopper_pearson_upper(early, 200, 0.05) <= 0.05


def test_window_agreement_interval_holds_the_point():
    s = agreement_scale([[30, 5], [5, 60]], [0, 1], metric="cohen_kappa", bound=0.5)
    w = window_agreement([1, 1, 0, 1, 1, 1, 1, 0, 1, 1], s)
    assert w["ci_low"] < w["value"] < w["ci_high"] and w["n"] == 10
    assert window_agreement([], s)["value"] is None


def test_alpha_spending_sums_to_alpha():
    assert sum(spent_alpha(k, 0.05) for k in range(1, 200_000)) == pytest.approx(0.05, abs=1e-6)
    assert spent_alpha(1) > spent_alpha(2) > spent_alpha(30)


def test_shift_tests_find_a_planted_shift_and_keep_their_level():
    rng = np.random.default_rng(3)
    golden = {"a": 120, "b": 60, "c": 20}
    p = np.array([120, 60, 20]) / 200
    false = 0
    for k in range(1, 301):  # 300 windows of one epoch, no shift: any false alarm at all is the error
        counts = rng.multinomial(300, p)
        t = category_shift(golden, dict(zip("abc", counts.tolist())), level=spent_alpha(k))
        false += t.shifted
    assert false <= 1
    moved = category_shift(golden, {"a": 100, "b": 100, "c": 100}, level=spent_alpha(1))
    assert moved.shifted and moved.moved == "a"  # 60% -> 33%, the largest move
    lengths = rng.normal(150, 40, 300)
    assert length_shift(lengths, rng.normal(150, 40, 300), level=spent_alpha(1)).shifted is False
    longer = length_shift(lengths, rng.normal(230, 40, 300), level=spent_alpha(1))
    assert longer.shifted and longer.window_value > longer.golden_value


def test_weighted_ppi_covers_when_rates_follow_the_outcome():
    """Half of a window's 2,000 traces sampled at 0.5 (where the judge errs more), half at 0.05 (50 labels): the
    weighted estimate covers the true pass rate in >= 90% of 400 windows; the unweighted mean of the labels is
    biased. (With 15 labels in the thin half, 600 traces, coverage fell to 86%: the z-interval needs its labels.)"""
    from workbench.stats.monitoring.weighted import weighted_ppi

    rng = np.random.default_rng(5)
    cover, naive = [], []
    for _ in range(400):
        n = 2000
        hard = np.arange(n) < n // 2
        y = (rng.random(n) < np.where(hard, 0.5, 0.9)).astype(float)
        yhat = np.where(rng.random(n) < np.where(hard, 0.7, 0.95), y, 1 - y)
        pi = np.where(hard, 0.5, 0.05)
        lab = rng.random(n) < pi
        _, lo, hi = weighted_ppi(yhat, lab, np.where(lab, y, 0), pi)
        cover.append(lo <= y.mean() <= hi)
        naive.append(y[lab].mean() - y.mean())
    assert np.mean(cover) >= 0.90
    assert np.mean(naive) < -0.1  # the labels over-represent the hard half
