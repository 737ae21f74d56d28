"""The alt-test's t-test and Benjamini-Yekutieli step, the self-preference OLS, the noise floor's normal quantiles,
the bootstrap's row grouping and the human ceiling's rater x item matrix, against the library calls they replace,
float for float.

scipy.stats and statsmodels stay the reference here: the replacements exist only because importing
``scipy.stats`` (which every statsmodels model pulls in) is half a second of each computed report, and a report
must not change by a bit (tests/test_calibrate_numbers_unchanged.py checks the demo's).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.stats.alt_test import benjamini_yekutieli_rejections, ttest_less_pvalue
from workbench.stats.bias import cluster_robust_ols
from workbench.stats.intervals.bootstrap import unique_rows
from workbench.stats.humans import _rater_by_item, check_labels
from workbench.stats.power import items_for_interval_width, min_detectable_difference

LEVELS = st.sampled_from([0.95, 0.9, 0.99, 0.8, 1 - 0.05 / 3])


@settings(max_examples=200, deadline=None)
@given(wins=st.lists(st.sampled_from([-1.0, 0.0, 1.0]), min_size=2, max_size=400),
       epsilon=st.sampled_from([0.0, 0.1, 0.15, 0.2]) | st.floats(0, 0.99))
def test_ttest_less_gives_scipys_p_value(wins, epsilon):
    from scipy.stats import ttest_1samp

    d = np.array(wins)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # constant samples: scipy warns of catastrophic cancellation
        expected = float(ttest_1samp(d, epsilon, alternative="less").pvalue)
    got = ttest_less_pvalue(d, epsilon)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_ttest_less_on_a_constant_sample_is_scipys_limit():
    # every item a tie (d = 0 < epsilon): t = -inf and p = 0, as in the reference implementation of the alt-test
    assert ttest_less_pvalue(np.zeros(40), 0.2) == 0.0
    assert math.isnan(ttest_less_pvalue(np.full(40, 0.2), 0.2))  # mean equal to epsilon: 0 / 0


@settings(max_examples=200, deadline=None)
@given(p=st.lists(st.floats(0, 1) | st.sampled_from([0.0, 0.001, 0.01, 1.0]), min_size=1, max_size=30),
       q=st.sampled_from([0.05, 0.1, 0.01]))
def test_benjamini_yekutieli_rejects_what_statsmodels_rejects(p, q):
    from statsmodels.stats.multitest import multipletests

    expected = multipletests(np.array(p), alpha=q, method="fdr_by")[0]
    got = benjamini_yekutieli_rejections(p, q)
    assert got.dtype == bool and got.tolist() == expected.tolist()


def test_benjamini_yekutieli_is_a_step_up_with_the_harmonic_penalty():
    # three tests: c(3) = 1 + 1/2 + 1/3 = 11/6, thresholds q * i / (3 * 11/6) = 0.00909, 0.01818, 0.02727 at q=0.05
    assert benjamini_yekutieli_rejections([0.009, 0.5, 0.02], 0.05).tolist() == [True, False, False]
    # no p-value under its threshold: nothing rejected
    assert benjamini_yekutieli_rejections([0.027, 0.019, 0.5], 0.05).tolist() == [False, False, False]
    # the largest, 0.027, is under the third threshold: the step-up rejects all three, 0.019 and 0.02 included
    assert benjamini_yekutieli_rejections([0.027, 0.019, 0.02], 0.05).tolist() == [True, True, True]


def _design(draw_ints, n, k):
    categories = np.array(draw_ints(n, 0, k))
    x = np.column_stack([np.ones(n), np.array(draw_ints(n, 0, 1), dtype=np.float64),
                         np.eye(k + 1)[categories][:, 1:]])
    return x


@settings(max_examples=40, deadline=None)  # each statsmodels fit builds its model and results objects: ~50 ms
@given(data=st.data(), n=st.integers(8, 300), k=st.integers(0, 4), cluster_size=st.integers(1, 4))
def test_cluster_robust_ols_gives_statsmodels_coefficients_and_p_values(data, n, k, cluster_size):
    from statsmodels.regression.linear_model import OLS

    def ints(size, lo, hi):
        return data.draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size))

    x = _design(ints, n, k)
    y = np.array(ints(n, -2, 2), dtype=np.float64)
    groups = np.unique(np.arange(n) // cluster_size, return_inverse=True)[1]
    if np.linalg.matrix_rank(x) < x.shape[1] or n <= x.shape[1] or groups.max() < 1:
        return  # what bias._ols refuses before fitting
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups})
        params, p_values = cluster_robust_ols(y, x, groups)
    assert params.tolist() == fit.params.tolist()
    assert np.array_equal(p_values, fit.pvalues, equal_nan=True)


def test_cluster_robust_ols_finds_a_planted_effect_and_not_an_absent_one():
    rng = np.random.default_rng(7)
    n = 600
    indicator = (np.arange(n) % 2).astype(np.float64)
    x = np.column_stack([np.ones(n), indicator])
    groups = np.arange(n) // 3
    noise = rng.normal(0, 1, n) + np.repeat(rng.normal(0, 0.5, n // 3), 3)  # correlated within clusters
    params, p = cluster_robust_ols(0.4 * indicator + noise, x, groups)
    assert abs(params[1] - 0.4) < 0.25 and p[1] < 0.01
    _, p_null = cluster_robust_ols(noise, x, groups)
    assert p_null[1] > 0.01


@settings(max_examples=150, deadline=None)
@given(se=st.floats(0, 0.5), level=LEVELS, power=st.floats(0.01, 0.99), n=st.integers(1, 20_000),
       width=st.floats(0.005, 1))
def test_noise_floor_quantiles_are_scipy_stats_norm_ppf(se, level, power, n, width):
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - level) / 2)
    assert min_detectable_difference(se, level=level, power=power) == float(
        (z + norm.ppf(power)) * math.sqrt(2) * se)
    assert items_for_interval_width(se, n, width=width, level=level) == int(
        math.ceil(round(n * (2 * z * se / width) ** 2, 9)))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 300), n_cols=st.integers(1, 12),
       top=st.sampled_from([1, 2, 5, 1000, 2**30, 2**40]), dtype=st.sampled_from([np.int64, np.int32, np.float64]),
       repeats=st.booleans(), halves=st.booleans())
def test_unique_rows_is_numpy_unique_on_rows(seed, n_rows, n_cols, top, dtype, repeats, halves):
    rng = np.random.default_rng(seed)
    top = min(top, 2**31 - 1) if dtype is np.int32 else top
    rows = rng.integers(-3, top, size=(n_rows, n_cols), endpoint=True).astype(dtype)
    if repeats:  # few kinds, many clusters of each: what cluster contributions look like
        rows = rows[rng.integers(0, max(1, n_rows // 10), n_rows)]
    if dtype is np.float64 and halves:  # fractions and -0.0 take numpy's own path
        rows = rows / 2 * rng.choice([1.0, -1.0])
    kinds, counts = unique_rows(rows)
    expected_kinds, expected_counts = np.unique(rows, axis=0, return_counts=True)
    assert kinds.dtype == expected_kinds.dtype and np.array_equal(kinds, expected_kinds)
    assert np.array_equal(np.signbit(kinds), np.signbit(expected_kinds))
    assert np.array_equal(counts, expected_counts)


LABELS = st.lists(st.tuples(st.sampled_from(["i1", "i2", "i10", "b", "\u00e9", "A"]) | st.integers(0, 5).map(str),
                            st.sampled_from(["ana", "Ben", "chloe", "d\u00e9"]), st.integers(-1, 1)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(rows=LABELS)
def test_rater_by_item_matrix_is_the_pandas_pivot(rows):
    import pandas as pd

    frame = pd.DataFrame(rows, columns=["item_id", "rater", "score"]).drop_duplicates(["item_id", "rater"])
    expected = frame.pivot(index="rater", columns="item_id", values="score").to_numpy(dtype=np.float64)
    assert np.array_equal(_rater_by_item(frame), expected, equal_nan=True)


@settings(max_examples=150, deadline=None)
@given(rows=LABELS)
def test_check_labels_refuses_exactly_what_pandas_calls_duplicated(rows):
    import pandas as pd
    import pytest

    frame = pd.DataFrame(rows, columns=["item_id", "rater", "score"])
    duplicated = frame.duplicated(["item_id", "rater"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        with pytest.raises(ValueError, match=f"rater '{first['rater']}' labeled item '{first['item_id']}' more"):
            check_labels(frame, np.array([-1, 0, 1]))
    else:
        assert len(check_labels(frame, np.array([-1, 0, 1]))) == len(frame)


def test_special_functions_are_scipy_specials_own_ufuncs_loaded_without_its_init():
    import subprocess
    import sys

    probe = ("import sys; from workbench.stats._common import special_functions as f; s = f(); "
             "print('scipy.special' in sys.modules, 'numpy.f2py' in sys.modules); import scipy.special as sp; "
             "print(all(getattr(s, n) is getattr(sp, n) for n in ('ndtr', 'ndtri', 'stdtr', 'stdtrit')), "
             "f() is sp, sp.ndtri(0.975) == s.ndtri(0.975))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True", "True", "True"]
