"""The closed-form Wilson and Newcombe intervals, and the BCa and expanded-percentile quantiles read through
scipy.special, against published values and against the library calls they replace, float for float.

The library calls (statsmodels' proportion intervals, scipy.stats' norm and t) stay the reference: the closed
forms exist only so that a page or the CLI need not import them (seconds), and a report must not change by a bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.stats.intervals.bootstrap import bca_interval, expanded_level
from workbench.stats.intervals.proportion import (jeffreys_modified, newcombe_difference_interval, proportion_interval,
                                                  wilson_interval)

LEVELS = st.sampled_from([0.95, 0.9, 0.99, 1 - 0.05 / 2, 1 - 0.05 / 3, 1 - 0.05 / 4, 1 - 0.05 / 7, 0.8])


# Newcombe's tables print 4 decimals, which puts none of our values further than 0.23% from the printed figure
# (0.0061 for 0.006113 is the widest): 0.5% relative admits that printing and fails a figure moved by 1%, where half
# a unit of the last decimal (abs=5e-5) would let 0.0061 move by 0.8%. A printed 0 must be exactly 0.
PRINTED_4_DECIMALS = 5e-3


def test_wilson_reproduces_newcombes_published_single_proportion_intervals():
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Stat Med 17:857-872, table II,
    # method 3 (the score interval)
    for (count, nobs), (low, high) in {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                                       (0, 20): (0.0, 0.1611), (1, 29): (0.0061, 0.1718)}.items():
        got = wilson_interval(count, nobs)
        assert got == pytest.approx((low, high), rel=PRINTED_4_DECIMALS, abs=0.0), (count, nobs)


def test_newcombe_reproduces_the_published_differences():
    # Newcombe (1998), "Interval estimation for the difference between independent proportions", Stat Med
    # 17:873-890, method 10, examples (a) and (b)
    assert newcombe_difference_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), rel=PRINTED_4_DECIMALS,
                                                                         abs=0.0)
    assert newcombe_difference_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), rel=PRINTED_4_DECIMALS,
                                                                       abs=0.0)


@settings(max_examples=300, deadline=None)
@given(nobs=st.floats(0.05, 5000), share=st.floats(0, 1), level=LEVELS)
def test_wilson_gives_statsmodels_floats(nobs, share, level):
    from statsmodels.stats.proportion import proportion_confint

    count = share * nobs
    assert wilson_interval(count, nobs, level=level) == proportion_confint(count, nobs, alpha=1 - level,
                                                                           method="wilson")


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 4000), p=st.floats(0, 1), deff=st.floats(1, 20), level=LEVELS)
def test_wilson_proportion_interval_gives_statsmodels_floats(n, p, deff, level):
    from statsmodels.stats.proportion import proportion_confint

    n_eff = n / deff
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method="wilson")
    assert proportion_interval(p, n, level=level, deff=deff, method="wilson") == (float(np.clip(low, 0.0, p)),
                                                                                  float(np.clip(high, p, 1.0)))


def _modified_jeffreys_through_scipy_stats(count, nobs, level):
    """Brown, Cai and DasGupta (2001), section 4.1.2, written out with scipy.stats: the Jeffreys posterior's
    quantiles, the exact bound (alpha/2)**(1/n) at x = 0 or n, and the open end at x = 1 or n - 1."""
    from scipy.stats import beta

    tail = (1 - level) / 2
    low, high = beta.ppf(tail, count + 0.5, nobs - count + 0.5), beta.ppf(1 - tail, count + 0.5, nobs - count + 0.5)
    if count >= nobs:
        low = tail ** (1 / nobs)
    elif count <= 1:
        low = 0.0
    if count <= 0:
        high = 1 - tail ** (1 / nobs)
    elif count >= nobs - 1:
        high = 1.0
    return low, high


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 4000), k=st.integers(0, 4000), deff=st.sampled_from([1.0, 1.5, 3.7]), level=LEVELS)
def test_the_default_interval_is_the_smallest_holding_wilson_and_modified_jeffreys(n, k, deff, level):
    from statsmodels.stats.proportion import proportion_confint

    p = min(k, n) / n
    n_eff = n / deff
    w = proportion_confint(p * n_eff, n_eff, alpha=1 - level, method="wilson")
    j = _modified_jeffreys_through_scipy_stats(p * n_eff, n_eff, level)
    low, high = proportion_interval(p, n, level=level, deff=deff)
    assert low == pytest.approx(min(max(min(w[0], j[0]), 0.0), p), abs=1e-12)
    assert high == pytest.approx(max(min(max(w[1], j[1]), 1.0), p), abs=1e-12)


def test_modified_jeffreys_reproduces_statsmodels_jeffreys_and_the_exact_end():
    from statsmodels.stats.proportion import proportion_confint

    for count in (2, 5, 7.5):  # away from the ends the modification changes nothing
        low, high = jeffreys_modified(count, 10.0)
        assert (float(low), float(high)) == pytest.approx(proportion_confint(count, 10, method="jeffreys"), abs=1e-12)
    # at 0 of n the bound is Clopper-Pearson's; at 1 of 1 the lower bound is (alpha/2)**(1/1)
    assert proportion_interval(0.0, 10) == pytest.approx((0.0, proportion_confint(0, 10, method="beta")[1]), abs=1e-12)
    assert proportion_interval(1.0, 1) == pytest.approx((0.025, 1.0), abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(n1=st.floats(0.5, 3000), s1=st.floats(0, 1), n2=st.floats(0.5, 3000), s2=st.floats(0, 1), level=LEVELS)
def test_newcombe_gives_statsmodels_floats(n1, s1, n2, s2, level):
    from statsmodels.stats.proportion import confint_proportions_2indep

    expected = confint_proportions_2indep(s1 * n1, n1, s2 * n2, n2, method="newcomb", compare="diff",
                                          alpha=1 - level)
    assert newcombe_difference_interval(s1 * n1, n1, s2 * n2, n2, level=level) == tuple(map(float, expected))


def _bca_through_scipy_stats(samples, point, jackknife, weights, level):
    """The BCa interval as written before, with scipy.stats' norm: the reference for the float-for-float check."""
    from scipy.stats import norm

    finite = samples[np.isfinite(samples)]
    below = (np.count_nonzero(finite < point) + 0.5 * np.count_nonzero(finite == point)) / finite.size
    z0 = norm.ppf(below)
    centred = np.average(jackknife, weights=weights) - jackknife
    spread = float(np.sum(weights * centred**2))
    accel = float(np.sum(weights * centred**3)) / (6 * spread**1.5) if spread > 0 else 0.0
    tail = (1 - level) / 2
    z = norm.ppf([tail, 1 - tail])
    adjusted = norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(finite, np.clip(adjusted, 0, 1))
    return float(low), float(high)


@pytest.mark.parametrize("seed", range(40))
def test_bca_gives_the_floats_of_scipy_stats(seed):
    rng = np.random.default_rng(seed)
    samples = rng.normal(rng.uniform(-1, 1), rng.uniform(0.01, 2), size=int(rng.integers(50, 3000)))
    skew = rng.exponential(size=int(rng.integers(3, 200))) * rng.choice([-1, 1])
    weights = rng.integers(1, 50, size=skew.size).astype(float)
    point, level = float(np.quantile(samples, rng.uniform(0.2, 0.8))), float(rng.choice([0.9, 0.95, 0.99]))
    low, high, _ = bca_interval(samples, point, skew, weights, level)
    assert (low, high) == _bca_through_scipy_stats(samples, point, skew, weights, level)


@pytest.mark.parametrize("n", [2, 3, 5, 12, 20, 57, 200, 1999, 10_000])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_expanded_level_gives_the_floats_of_scipy_stats(n, level):
    from scipy.stats import norm, t

    expected = float(1 - 2 * norm.cdf(-np.sqrt(n / (n - 1)) * t.ppf(1 - (1 - level) / 2, n - 1)))
    assert expanded_level(level, n) == expected
