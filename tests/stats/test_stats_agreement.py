"""Agreement metrics: equal to the library calls DESIGN section 5 names, with the properties they must have."""

import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from workbench.stats import METRIC_NAMES, agreement_metrics, confusion_matrix, jsonable, metrics_from_confusion

ORDINAL_INVARIANT = ("exact_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                     "krippendorff_alpha_ordinal", "gwet_ac2_linear", "spearman", "tpr", "tnr")
SYMMETRIC = ("exact_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
             "krippendorff_alpha_ordinal", "gwet_ac2_linear", "spearman")


@st.composite
def labeled_items(draw, min_items=2, max_items=60):
    """A scale of 2-6 integers and aligned consensus/judge labels on it, correlated like a real judge."""
    scale = sorted(draw(st.sets(st.integers(-5, 12), min_size=2, max_size=6)))
    n = draw(st.integers(min_items, max_items))
    consensus = draw(st.lists(st.sampled_from(scale), min_size=n, max_size=n))
    noise = draw(st.lists(st.sampled_from(scale), min_size=n, max_size=n))
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    judge = [c if k else x for c, x, k in zip(consensus, noise, keep)]
    threshold = draw(st.sampled_from(scale[1:]))
    return tuple(scale), consensus, judge, threshold


def _library(consensus, judge, scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {
            "cohen_kappa": cohen_kappa_score(consensus, judge, labels=list(scale)),
            "cohen_kappa_linear": cohen_kappa_score(consensus, judge, labels=list(scale), weights="linear"),
            "cohen_kappa_quadratic": cohen_kappa_score(consensus, judge, labels=list(scale), weights="quadratic"),
            "spearman": spearmanr(consensus, judge).statistic,
        }
        try:
            out["krippendorff_alpha_ordinal"] = krippendorff.alpha(
                reliability_data=[consensus, judge], level_of_measurement="ordinal", value_domain=list(scale))
        except ValueError:
            out["krippendorff_alpha_ordinal"] = np.nan
    return out


def _same(a, b, rel=1e-9):
    return (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, rel=rel, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(labeled_items())
def test_equals_sklearn_krippendorff_scipy(case):
    scale, consensus, judge, threshold = case
    ours = agreement_metrics(consensus, judge, scale=scale, pass_threshold=threshold)
    for name, expected in _library(consensus, judge, scale).items():
        assert _same(ours[name], expected), (name, ours[name], expected)
    c, j = np.array(consensus), np.array(judge)
    assert ours["exact_agreement"] == pytest.approx(np.mean(c == j))
    assert ours["mean_signed_error"] == pytest.approx(np.mean(j - c))
    passed = c >= threshold
    if passed.any():
        assert ours["tpr"] == pytest.approx(np.mean(j[passed] >= threshold))
    if (~passed).any():
        assert ours["tnr"] == pytest.approx(np.mean(j[~passed] < threshold))


@settings(max_examples=60, deadline=None)
@given(labeled_items(), st.randoms(use_true_random=False))
def test_item_order_does_not_matter(case, rnd):
    scale, consensus, judge, threshold = case
    order = list(range(len(consensus)))
    rnd.shuffle(order)
    a = agreement_metrics(consensus, judge, scale=scale, pass_threshold=threshold)
    b = agreement_metrics([consensus[i] for i in order], [judge[i] for i in order], scale=scale,
                          pass_threshold=threshold)
    assert jsonable(dict(a)) == jsonable(dict(b))


@settings(max_examples=80, deadline=None)
@given(labeled_items(), st.lists(st.integers(1, 9), min_size=6, max_size=6))
def test_ordinal_metrics_ignore_a_monotone_relabeling(case, steps):
    scale, consensus, judge, threshold = case
    # A strictly increasing map with uneven steps (not affine), e.g. -1, 0, 1 -> 3, 10, 11.
    new_values = list(np.cumsum(steps[:len(scale)]) + 2)
    relabel = dict(zip(scale, new_values))
    a = agreement_metrics(consensus, judge, scale=scale, pass_threshold=threshold)
    b = agreement_metrics([relabel[v] for v in consensus], [relabel[v] for v in judge], scale=new_values,
                          pass_threshold=relabel[threshold])
    for name in ORDINAL_INVARIANT:
        assert _same(a[name], b[name], rel=1e-12), name


@settings(max_examples=80, deadline=None)
@given(labeled_items())
def test_symmetric_metrics_are_symmetric(case):
    scale, consensus, judge, threshold = case
    a = agreement_metrics(consensus, judge, scale=scale, pass_threshold=threshold)
    b = agreement_metrics(judge, consensus, scale=scale, pass_threshold=threshold)
    for name in SYMMETRIC:
        assert _same(a[name], b[name], rel=1e-12), name
    assert b["mean_signed_error"] == pytest.approx(-a["mean_signed_error"])
    # TPR of one direction is the positive predictive value of the other; they are not symmetric.
    assert confusion_matrix(judge, consensus, scale=scale).tolist() == \
        confusion_matrix(consensus, judge, scale=scale).T.tolist()


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(-5, 12), min_size=2, max_size=6).map(sorted), st.data())
def test_perfect_agreement_gives_one(scale, data):
    labels = data.draw(st.lists(st.sampled_from(scale), min_size=2, max_size=50))
    m = agreement_metrics(labels, labels, scale=scale, pass_threshold=scale[1])
    varied = len(set(labels)) >= 2
    for name in ("exact_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                 "krippendorff_alpha_ordinal", "gwet_ac2_linear", "spearman"):
        if varied or name in ("exact_agreement", "gwet_ac2_linear"):
            assert m[name] == pytest.approx(1.0), name
        else:
            assert np.isnan(m[name]) and name in m.reasons
    assert m["mean_signed_error"] == 0
    for name in ("tpr", "tnr"):
        assert m[name] == 1.0 or (np.isnan(m[name]) and name in m.reasons)


def test_a_scale_value_never_used_changes_nothing_it_should_not():
    consensus, judge = [-1, 0, 0, 1, 1, 0], [-1, 0, 1, 1, 0, 0]
    narrow = agreement_metrics(consensus, judge, scale=(-1, 0, 1), pass_threshold=0)
    wide = agreement_metrics(consensus, judge, scale=(-1, 0, 1, 2), pass_threshold=0)
    lib = _library(consensus, judge, (-1, 0, 1, 2))
    for name, value in lib.items():
        assert wide[name] == pytest.approx(value)
    assert wide["exact_agreement"] == narrow["exact_agreement"]
    assert wide["krippendorff_alpha_ordinal"] == pytest.approx(narrow["krippendorff_alpha_ordinal"])


def test_confusion_rows_are_consensus_in_scale_order():
    matrix = confusion_matrix([1, 1, -1, 0], [0, 1, -1, -1], scale=(-1, 0, 1))
    assert matrix.tolist() == [[1, 0, 0], [1, 0, 0], [0, 1, 1]]


def test_metrics_from_confusion_equal_metrics_from_items():
    consensus, judge = [-1, 0, 0, 1, 1, 0, -1], [-1, 0, 1, 1, 0, 0, 0]
    a = agreement_metrics(consensus, judge, scale=(-1, 0, 1), pass_threshold=0)
    b = metrics_from_confusion(confusion_matrix(consensus, judge, scale=(-1, 0, 1)), scale=(-1, 0, 1),
                               pass_threshold=0)
    assert dict(a) == pytest.approx(dict(b))


# Degenerate inputs: a number that cannot be computed is NaN with a reason, never a crash or a silent number.

def test_empty_input():
    m = agreement_metrics([], [], scale=(-1, 0, 1), pass_threshold=0)
    assert m.n_items == 0
    assert all(np.isnan(m[name]) for name in METRIC_NAMES)
    assert set(m.reasons) == set(METRIC_NAMES)
    assert "no items" in m.reasons["cohen_kappa"]


def test_one_item():
    m = agreement_metrics([1], [1], scale=(-1, 0, 1), pass_threshold=0)
    assert all(np.isnan(m[name]) for name in METRIC_NAMES)
    assert "at least two" in m.reasons["exact_agreement"]


def test_all_one_label():
    m = agreement_metrics([0] * 20, [0] * 20, scale=(-1, 0, 1), pass_threshold=0)
    assert m["exact_agreement"] == 1.0
    assert m["gwet_ac2_linear"] == 1.0  # AC2 stays defined where kappa is not: its appeal for skewed labels
    for name in ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "krippendorff_alpha_ordinal",
                 "spearman", "tnr"):
        assert np.isnan(m[name])
        assert m.reasons[name]
    assert m["tpr"] == 1.0
    assert "tpr" not in m.reasons


def test_all_unscored_counts_the_missing():
    m = agreement_metrics([0, 1, -1], [None, np.nan, None], scale=(-1, 0, 1), pass_threshold=0)
    assert m.n_items == 0 and m.n_missing == 3
    assert all(np.isnan(v) for v in m.values())


def test_missing_scores_are_left_out_and_counted():
    m = agreement_metrics([0, 1, -1, 1, None], [0, 1, None, 0, 1], scale=(-1, 0, 1), pass_threshold=0)
    ref = agreement_metrics([0, 1, 1], [0, 1, 0], scale=(-1, 0, 1), pass_threshold=0)
    assert m.n_items == 3 and m.n_missing == 2
    assert jsonable(dict(m)) == jsonable(dict(ref))


@pytest.mark.parametrize("kwargs, message", [
    (dict(consensus=[0, 2], judge=[0, 1], scale=(-1, 0, 1), pass_threshold=0), "consensus score 2 at position 1"),
    (dict(consensus=[0, 1], judge=[0, 1, 1], scale=(-1, 0, 1), pass_threshold=0), "judge has 3"),
    (dict(consensus=[0, 1], judge=[0, 1], scale=(1,), pass_threshold=1), "at least two distinct"),
    (dict(consensus=[0, 1], judge=[0, 1], scale=(1, 0, -1), pass_threshold=0), "lowest first"),
    (dict(consensus=[0, 1], judge=[0, 1], scale=(-1, 0, 1), pass_threshold=5), "not a value of the scale"),
    (dict(consensus=[0, 1], judge=[0, 1], scale=(-1, 0, 1), pass_threshold=-1), "no score could fail"),
    (dict(consensus=["pass", "fail"], judge=[0, 1], scale=(-1, 0, 1), pass_threshold=0), "must be numbers"),
    (dict(consensus=[0.5, 1], judge=[0, 1], scale=(-1, 0, 1), pass_threshold=0), "0.5 at position 0"),
])
def test_bad_input_is_refused_in_plain_words(kwargs, message):
    with pytest.raises(ValueError, match=message):
        agreement_metrics(kwargs.pop("consensus"), kwargs.pop("judge"), **kwargs)
