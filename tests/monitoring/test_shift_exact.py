"""The shift alarm's tests (issue 51, item 2): the exact conditional test of the category mix and its Monte Carlo
p-value against exact enumeration, its size at tail levels where Pearson's chi-square (the code before) is too
liberal, its power against the exact test's, the spending over windows, the KS test of input lengths, and the
promises on real data (Play Favorites' source datasets as categories; ``validation/promises/shift.py``): false
alarms over calm replays of 30 and 90 days, a planted shift found in the first shifted window.

Exact answers are sums over every table with the same margins (``itertools``), so the tolerances below are the
Monte Carlo error of the draws and nothing else.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, chi2_contingency, ks_2samp

from validation.promises import shift as ps
from workbench.stats.monitoring.shift import (
    BOUND_SHARE,
    POWER,
    SCREEN,
    category_shift,
    category_shifts,
    length_shift,
    mixture_bound,
    monte_carlo_p,
    pearson,
    spent_alpha,
)

needs_data = pytest.mark.skipif(not ps.available(), reason=f"real data not present at {ps.DATA}")
CALM_REPLAYS = 10_000  # per traffic; why so many: see test_calm_replays_keep_the_false_alarm_promise
SEED = 51


def tables(totals, n):
    """Every window row of size ``n`` under column ``totals``, with its probability given the margins."""
    big_n = sum(totals)
    out = []
    for x in itertools.product(*(range(min(c, n) + 1) for c in totals)):
        if sum(x) == n:
            out.append((x, math.prod(math.comb(c, a) for c, a in zip(totals, x)) / math.comb(big_n, n)))
    return out


def statistic(x, totals) -> float:
    return sum(a * a / c for a, c in zip(x, totals))  # Pearson's, up to terms fixed by the margins


def exact_p(window, totals) -> float:
    s = statistic(window, totals)
    return sum(p for x, p in tables(totals, sum(window)) if statistic(x, totals) >= s * (1 - 1e-12))


def old_p(golden, window) -> float:
    """The test before issue 51: Pearson's chi-square, categories expected below 5 pooled into one."""
    g, w = [a for a, b in zip(golden, window) if a + b], [b for a, b in zip(golden, window) if a + b]
    n_g, n_w = sum(g), sum(w)
    small = [(a + b) * min(n_g, n_w) / (n_g + n_w) < 5 for a, b in zip(g, w)]
    if any(small) and not all(small):
        g = [a for a, s in zip(g, small) if not s] + [sum(a for a, s in zip(g, small) if s)]
        w = [b for b, s in zip(w, small) if not s] + [sum(b for b, s in zip(w, small) if s)]
    return float(chi2_contingency(np.array([g, w]), correction=False)[1])


# -- the statistic and the Monte Carlo p-value -----------------------------------------------------------------

def test_pearson_is_scipys_chi_square():
    rng = np.random.default_rng(0)
    for _ in range(50):
        g, w = rng.integers(0, 30, 5), rng.integers(0, 30, 5)
        g[rng.integers(5)] = w[rng.integers(5)] = 0
        keep = (g + w) > 0
        want = chi2_contingency(np.array([g[keep], w[keep]]), correction=False)[0]
        assert float(pearson(w[None, :], g)[0]) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("golden, window", [((6, 4, 3, 2), (1, 3, 4, 2)), ((10, 2, 1), (3, 4, 2)),
                                            ((5, 5, 5, 5, 5), (0, 2, 3, 6, 1)), ((20, 8), (4, 6))])
def test_monte_carlo_p_is_the_exact_p_within_its_error(golden, window):
    """40,000 draws without the sequential stop: within 4 binomial standard errors of the exact p-value (summed
    over every table of the margins); with the sequential stop at h = 400 exceedances, h / draws within 4
    relative standard errors sqrt((1 - p) / h)."""
    totals = [a + b for a, b in zip(golden, window)]
    want = exact_p(window, totals)
    assert 0.01 < want < 0.9  # the cases are neither trivial nor in the far tail, so both errors are tight
    draws = 40_000
    fixed = monte_carlo_p(window, totals, level=POWER / draws, rng=np.random.default_rng(1), exceedances=10 ** 9)
    assert fixed.draws == draws
    assert abs(fixed.p_value - want) <= 4 * math.sqrt(want * (1 - want) / draws) + 1 / draws
    stopped = monte_carlo_p(window, totals, level=1e-6, rng=np.random.default_rng(2), exceedances=400)
    assert stopped.draws < 400 / want * 1.5
    assert abs(stopped.p_value / want - 1) <= 4 * math.sqrt((1 - want) / 400)


def test_the_sequential_stop_comes_when_the_window_can_no_longer_reject():
    """h = POWER: a calm window stops after a few draws; a shifted one draws all B = ceil(POWER / level)."""
    totals = [40, 30, 30]
    calm = monte_carlo_p([4, 3, 3], totals, level=1e-4, rng=np.random.default_rng(3))
    assert calm.draws < 100 and calm.p_value == POWER / calm.draws
    far = monte_carlo_p([20, 0, 0], totals, level=1e-4, rng=np.random.default_rng(3))
    assert far.draws == math.ceil(POWER / 1e-4) and far.p_value == pytest.approx(1 / (far.draws + 1))


@pytest.mark.parametrize("totals, n", [((8, 6, 4), 7), ((10, 3, 2, 1), 6), ((12, 12), 10)])
def test_the_mixture_bound_is_a_valid_p_value_exactly(totals, n):
    """P(bound <= u) <= u at every u, summed exactly over the multivariate hypergeometric (Hoeffding + Markov)."""
    rows = tables(totals, n)
    bounds = [mixture_bound(x, totals) for x, _ in rows]
    for u in sorted(set(bounds)) + [1e-3, 0.01, 0.05, 0.2, 0.5]:
        assert sum(p for (_, p), b in zip(rows, bounds) if b <= u) <= u * (1 + 1e-12)


# -- the whole test's size at tail levels, against the code before ---------------------------------------------

def conditional_sizes(totals, n, level):
    """Given the margins: the share of tables that alarm (the seeded draws, as the report runs them), what the
    Monte Carlo test rejects on average over draws (from each table's exact p-value), its standard deviation
    over draws, the old chi-square's share, and the mass of the least likely tables left out (together below
    level / 1000; each quantity above may be off by at most that)."""
    rows = tables(totals, n)
    stats = np.array([statistic(x, totals) for x, _ in rows])
    probs = np.array([p for _, p in rows])
    exact = np.array([probs[stats >= s * (1 - 1e-12)].sum() for s in stats])
    rare = np.argsort(probs)
    left_out = set(rare[np.cumsum(probs[rare]) <= level / 1000].tolist())
    draws = math.ceil(POWER / ((1 - BOUND_SHARE) * level))
    names = [chr(97 + j) for j in range(len(totals))]
    seen = mean = var = old = 0.0
    for i, ((x, p), p_exact) in enumerate(zip(rows, exact)):
        if i in left_out:
            continue
        golden = [c - a for c, a in zip(totals, x)]
        t = category_shift(dict(zip(names, golden)), dict(zip(names, x)), level=level)
        # rejection probability over the draws: the bound alone decides, the screen never rejects, the draws reject
        # when at most POWER - 1 of B reach the observed statistic
        chance = {"mixture bound": 1.0, "chi-square": 0.0}.get(t.test, float(binom.cdf(POWER - 1, draws, p_exact)))
        seen += p * t.shifted
        mean += p * chance
        var += p * p * chance * (1 - chance)
        old += p * (old_p(golden, x) < level)
    return seen, mean, math.sqrt(var), old, float(probs[list(left_out)].sum())


@pytest.mark.slow
@pytest.mark.parametrize("totals, n, level, old_over", [
    ((377, 41, 42), 60, 1e-3, 1.6),  # the window's expected counts 49, 5.3 and 5.5: nothing pooled
    ((377, 41, 42), 60, 1e-4, 2.0),
    ((300, 36, 20, 18), 48, 1e-3, 1.8),  # expected 34, 4.1, 2.3 and 2.0: the old code pooled the last three
])
def test_the_size_holds_at_tail_levels_where_chi_square_did_not(totals, n, level, old_over):
    """Exact sizes given the margins (every table summed): the Monte Carlo test rejects at most ``level`` on
    average over its draws, the report's seeded draws are within 4 standard deviations of that, and the old
    chi-square rejected ``old_over`` times the level or more (1.68x, 2.14x and 1.86x measured)."""
    seen, mean, sd, old, left_out = conditional_sizes(totals, n, level)
    print(f"\n{totals} n={n} at {level:g}: seeded {seen:.3g}, over draws {mean:.3g} +/- {sd:.2g}, old {old:.3g}")
    assert mean + left_out <= level
    assert abs(seen - mean) <= 4 * sd + left_out
    assert old >= old_over * level


# -- power, and what each window costs -------------------------------------------------------------------------

@pytest.mark.slow
@needs_data
def test_power_on_a_planted_shift_is_the_exact_tests():
    """60-trace windows against the replays' approval golden set, mtbench raised from 9% to 35%, at the 8th
    window's level: the alarm agrees with the exact conditional test (exact p by ``ps.exact_tail``) on every
    window whose exact p is not within a factor 10 below or 3 above the Monte Carlo share of the level, no
    window the exact test rejects is screened out, and the alarms' count is within 4 sd of its expectation over
    the draws."""
    rows = ps.load()
    golden = np.bincount(rows.codes[np.random.default_rng(2026).permutation(len(rows.codes))[:ps.GOLDEN]],
                         minlength=len(rows.names))
    shares = np.bincount(rows.codes, minlength=len(rows.names)) / len(rows.codes)
    mt = rows.names.index("mtbench")
    planted = shares * 0.65 / (1 - shares[mt])
    planted[mt] = 0.35
    level = spent_alpha(8)
    mc_level = (1 - BOUND_SHARE) * level
    draws = math.ceil(POWER / mc_level)
    windows = np.random.default_rng(4).multinomial(60, planted, size=60)
    tests = category_shifts(dict(zip(rows.names, golden.tolist())),
                            [dict(zip(rows.names, w.tolist())) for w in windows], [level] * len(windows))
    exact = np.array([ps.exact_tail(golden + w, 60, statistic(w, golden + w) * (1 - 1e-12)) for w in windows])
    alarms = np.array([t.shifted for t in tests])
    clear = (exact < mc_level / 10) | (exact > 3 * mc_level)
    assert (alarms[clear] == (exact[clear] < mc_level)).all()
    assert not any(t.test == "chi-square" for t, p in zip(tests, exact) if p < level)
    chance = np.array([1.0 if t.test == "mixture bound" else 0.0 if t.test == "chi-square"
                       else binom.cdf(POWER - 1, draws, p) for t, p in zip(tests, exact)])
    print(f"\npower: exact test {np.mean(exact < level):.2f}, alarm {alarms.mean():.2f} "
          f"(expected {chance.mean():.2f}) of {len(windows)} windows")
    assert 0.3 < np.mean(exact < level) < 0.95  # a shift the test can miss, so the comparison means something
    assert abs(alarms.sum() - chance.sum()) <= 4 * math.sqrt((chance * (1 - chance)).sum())


def test_what_each_window_uses_and_costs():
    """A calm window: the chi-square screen, no draws; a gross shift: the mixture bound, no draws; a window near
    its level: the Monte Carlo test with its draws. Each window's test is the same alone or with others, and on
    every run (its draws are seeded from its own counts and level)."""
    golden = {"a": 97, "b": 91, "c": 76, "d": 72, "e": 37, "f": 27}
    calm, gross, near = {"a": 15, "b": 14, "c": 11, "d": 11, "e": 5, "f": 4}, {"f": 60}, \
        {"a": 12, "b": 10, "c": 9, "d": 8, "e": 19, "f": 2}
    level = spent_alpha(30)
    tests = category_shifts(golden, [calm, gross, near], [level] * 3)
    assert [(t.test, t.draws > 0) for t in tests] == [("chi-square", False), ("mixture bound", False),
                                                      ("monte-carlo", True)]
    assert tests[0].p_value >= SCREEN * level and tests[1].shifted and tests[1].moved == "f"
    assert tests == [category_shift(golden, w, level=level) for w in (calm, gross, near)]
    assert category_shifts(golden, [near, calm], [level] * 2)[0] == tests[2]
    assert category_shift({"a": 3}, {"a": 5}, level=0.01) is None and category_shift({}, {"a": 5}, level=0.01) is None
    with pytest.raises(ValueError, match="negative"):
        category_shift(golden, {"a": -1, "b": 5}, level=level)
    with_new = category_shift(golden, {**calm, "g": 3}, level=level)  # a category the golden set never saw
    assert with_new.moved == "g" and with_new.window_value == pytest.approx(3 / 63)


# -- the spending over windows ---------------------------------------------------------------------------------

def test_the_spending_stays_below_alpha_over_any_number_of_windows():
    """Partial sums of alpha_k = 6 alpha / (pi^2 k^2) stay below alpha and the rest after K windows lies between
    6 alpha / (pi^2 (K + 1)) and 6 alpha / (pi^2 K) (the integral bounds of sum 1/k^2), so the union bound holds
    for every horizon, however long."""
    k = np.arange(1, 1_000_001)
    rest = 0.05 - np.cumsum([spent_alpha(int(i), 0.05) for i in k])
    assert (rest > 0).all()
    scale = 6 * 0.05 / math.pi ** 2
    assert (rest <= scale / k * (1 + 1e-9)).all() and (rest[:100_000] >= scale / (k[:100_000] + 1)).all()
    with pytest.raises(ValueError):
        spent_alpha(0)


# -- input lengths: Kolmogorov-Smirnov ------------------------------------------------------------------------

def _permutation_p(golden, window) -> float:
    """The exact permutation p-value of the KS distance: every split of the pooled values into the two sizes
    (the distance of each split from its empirical CDFs at the ends of runs of equal values)."""
    pooled = np.concatenate([golden, window])
    splits = np.zeros((math.comb(len(pooled), len(golden)), len(pooled)), bool)
    for row, idx in enumerate(itertools.combinations(range(len(pooled)), len(golden))):
        splits[row, list(idx)] = True
    order = np.argsort(pooled, kind="stable")
    values, first = pooled[order], splits[:, order]
    ends = np.r_[values[1:] != values[:-1], True]
    distance = np.abs(np.cumsum(first, axis=1)[:, ends] / len(golden)
                      - np.cumsum(~first, axis=1)[:, ends] / len(window)).max(axis=1)
    observed = ks_2samp(golden, window).statistic
    assert distance[0] == pytest.approx(observed, abs=1e-12)  # the first split is the observed one: as SciPy's
    return float(np.mean(distance >= observed - 1e-12))


def test_ks_is_exact_without_ties_and_conservative_with_them():
    """Distinct values: the p-value is the exact permutation p-value; tied values (lengths on a few values): it
    is at least the exact permutation p-value of the tied data, so it stays valid."""
    rng = np.random.default_rng(6)
    for _ in range(5):
        g, w = rng.normal(0, 1, 5), rng.normal(0.8, 1, 6)
        t = length_shift(g, w, level=0.05)
        assert t.test == "ks exact" and t.p_value == pytest.approx(_permutation_p(g, w), abs=1e-9)
    for _ in range(5):
        g, w = rng.integers(0, 3, 6).astype(float), rng.integers(1, 4, 5).astype(float)
        assert length_shift(g, w, level=0.05).p_value >= _permutation_p(g, w) - 1e-9


def test_ks_says_when_it_falls_back_to_the_asymptotic_p_value():
    """Sizes whose exact sum SciPy cannot do (two large primes): the asymptotic p-value, recorded as such."""
    rng = np.random.default_rng(7)
    t = length_shift(rng.normal(0, 1, 46_337), rng.normal(0, 1, 46_349), level=0.01)
    assert t.test == "ks asymptotic" and 0 < t.p_value <= 1
    assert length_shift([1.0, 2.0], [], level=0.01) is None


@pytest.mark.slow
def test_ks_asymptotic_p_value_is_within_a_few_percent_of_the_exact_one():
    """Where SciPy falls back: its asymptotic p-value over the exact one, for p-values between 2e-7 and 1e-2 on
    window sizes 60 to 9,000 (golden sets of 400 and 2,000): 0.99 to 1.023 measured."""
    ratios = [r.ratio for r in ps.ks_ratios()]
    assert len(ratios) > 200
    assert 0.98 <= min(ratios) and max(ratios) <= 1.03


# -- the chi-square's tail on the replays' golden set ---------------------------------------------------------

def test_exact_tail_sums_every_table():
    """The measurement's meet-in-the-middle sum equals the brute-force sum over every table."""
    for totals, n in (((7, 5, 4, 3), 8), ((6, 5, 4, 3, 2), 9), ((9, 1), 4)):
        for threshold in (2.0, 4.0, 6.0):
            want = sum(p for x, p in tables(totals, n) if statistic(x, totals) >= threshold * (1 - 1e-12))
            assert ps.exact_tail(totals, n, threshold) == pytest.approx(want, rel=1e-10, abs=1e-15)


@needs_data
def test_chi_square_is_too_liberal_in_the_tail_with_60_traces_a_window():
    """The replays' approval golden set against a 60-trace window at the data's mix (expected counts 4.2 to 16):
    the exact tail at the chi-square critical value of alpha_30 is 1.6x alpha_30 (why the alarm does not use it)."""
    (r,) = ps.chi_square_ratios(windows=(60,), at=(30,))
    assert r.min_expected == pytest.approx(4.17, abs=0.01)
    assert 1.55 <= r.ratio <= 1.7


@pytest.mark.slow
@needs_data
def test_chi_square_tail_on_the_replays_tables():
    """The figures behind using chi-square only as a screen: over 60- and 300-trace windows at the levels of
    windows 1, 7, 30, 90 and 365, the exact tail is never below 0.7 of the nominal (0.71 measured: a window the
    screen passes at 10x its level is far from an alarm); with 60 traces it is too liberal from alpha_7 on and
    increasingly so, with 300 conservative throughout, and with 2,100-trace windows (expected counts >= 29, rows
    of unequal size) still 1.08x at alpha_30."""
    ratios = ps.chi_square_ratios()
    assert len(ratios) == 10 and min(r.ratio for r in ratios) >= 0.7
    small, large = [r.ratio for r in ratios if r.window == 60], [r.ratio for r in ratios if r.window == 300]
    assert small == sorted(small) and min(small[1:]) > 1  # too liberal from alpha_7 on, more so further out
    assert max(large) <= 1  # 21 expected and more, rows of similar size: conservative at every level
    (wide,) = ps.chi_square_ratios(windows=(2100,), at=(30,))
    assert wide.min_expected >= 28.9 and 1.07 <= wide.ratio <= 1.1


# -- the promises on real data ---------------------------------------------------------------------------------

@needs_data
def test_a_few_calm_replays_stay_quiet_and_a_gross_shift_is_found():
    rows = ps.load()
    assert ps.calm_replay(rows, np.random.default_rng(0), days=30, per_day=60) is None
    assert ps.shifted_replay(rows, np.random.default_rng(0), days=30, per_day=60, shift_day=7)[7:] == [True] * 23


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("per_day", ps.RATES)
def test_calm_replays_keep_the_false_alarm_promise(per_day):
    """10,000 calm replays of 90 days (each its own random golden set of 400 and stream; the first 30 days are
    the 30-day replay): the one-sided 95% Clopper-Pearson upper bound of the share that alarmed is <= 5% at both
    horizons. Why 10,000: the alarm spends its whole alpha (the alpha_k over 30 days sum to 4.9%), and pilot runs
    on other seeds (4,000 and 8,000 replays) found 4.1% to 4.4% alarmed; at 4.3% the bound falls below 5% with
    probability 0.95 only from about 10,000 replays (200 would need at most 4 alarms)."""
    rates = ps.calm_rates(per_day, CALM_REPLAYS, SEED)
    print(f"\n{per_day} a day: " + ", ".join(f"{h} days {rates.alarmed[h]} of {rates.replays} (upper bound "
                                              f"{rates.upper(h):.2%})" for h in ps.HORIZONS))
    for h in ps.HORIZONS:
        assert rates.upper(h) <= 0.05


@pytest.mark.slow
@needs_data
def test_a_planted_shift_is_found_in_its_first_window():
    """All traffic from mtbench (9% before) from day 8 of 30 and from day 81 of 90, at 60 and 300 traces a day:
    raised in the first shifted window of each of 50 replays (alarms before the shift are false alarms, counted
    by the calm replays)."""
    for row in ps.detection_rows(50, SEED):
        assert row.holds, row
