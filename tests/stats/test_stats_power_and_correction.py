"""Noise floor, Rogan-Gladen corrected pass rates and prediction-powered inference."""

import numpy as np
import pytest

from workbench.stats import (agreement_with_intervals, corrected_pass_rate, golden_pass_arrays,
    items_for_interval_width, min_detectable_difference, noise_floor, ppi_mean, rogan_gladen)


def test_min_detectable_difference_formula():
    assert min_detectable_difference(0.05) == pytest.approx(1.959963985 * np.sqrt(2) * 0.05)
    assert min_detectable_difference(0.05, power=0.8) == pytest.approx((1.959963985 + 0.841621234) * np.sqrt(2) * 0.05)
    assert np.isnan(min_detectable_difference(float("nan")))


def test_items_for_interval_width_scales_with_the_square():
    # Halving the width takes four times the items.
    assert items_for_interval_width(0.05, 100, width=2 * 1.959963985 * 0.05) == 100
    assert items_for_interval_width(0.05, 100, width=1.959963985 * 0.05) == 400


def test_noise_floor_from_an_agreement_report():
    rng = np.random.default_rng(0)
    consensus = rng.choice([-1, 0, 1], size=200)
    judge = np.where(rng.random(200) < 0.8, consensus, rng.choice([-1, 0, 1], size=200))
    report = agreement_with_intervals(consensus, judge, None, scale=(-1, 0, 1), pass_threshold=0, resamples=1000)
    floor = noise_floor(report, target_width=0.05)
    alpha = floor["metrics"]["krippendorff_alpha_ordinal"]
    se = report["standard_errors"]["krippendorff_alpha_ordinal"]
    assert alpha["se"] == se
    assert alpha["min_detectable_difference"] == pytest.approx(1.959963985 * np.sqrt(2) * se)
    assert alpha["items_needed"] == items_for_interval_width(se, 200, width=0.05)
    assert alpha["additional_items"] == alpha["items_needed"] - 200 > 0
    # The percentile interval is close to the 2 * 1.96 * se the formula assumes.
    m = report["metrics"]["krippendorff_alpha_ordinal"]
    assert m["ci_high"] - m["ci_low"] == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert set(floor["metrics"]) == {"krippendorff_alpha_ordinal", "exact_agreement"}


def test_rogan_gladen_recovers_the_true_rate():
    rng = np.random.default_rng(1)
    tpr, tnr, true_rate = 0.9, 0.8, 0.35
    golden_human = rng.random(4000) < 0.5
    golden_judge = np.where(golden_human, rng.random(4000) < tpr, rng.random(4000) > tnr)
    new_human = rng.random(20000) < true_rate
    new_judge = np.where(new_human, rng.random(20000) < tpr, rng.random(20000) > tnr)
    result = corrected_pass_rate(golden_human, golden_judge, new_judge, resamples=500)
    assert result["raw"]["value"] == pytest.approx(true_rate * tpr + (1 - true_rate) * (1 - tnr), abs=0.01)
    assert result["corrected"]["ci_low"] <= true_rate <= result["corrected"]["ci_high"]
    assert result["corrected"]["value"] == pytest.approx(true_rate, abs=0.02)


def test_rogan_gladen_edge_cases():
    assert rogan_gladen(0.1, tpr=0.9, tnr=0.9) == 0.0   # clipped
    assert rogan_gladen(0.99, tpr=0.9, tnr=0.9) == 1.0
    assert np.isnan(rogan_gladen(0.5, tpr=0.5, tnr=0.5))
    chance = corrected_pass_rate([1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1])
    assert np.isnan(chance["corrected"]["value"]) and "no better than chance" in chance["reason"]
    no_fail = corrected_pass_rate([1, 1, 1], [1, 0, 1], [1, 0])
    assert "TNR is unknown" in no_fail["reason"]
    nothing_new = corrected_pass_rate([1, 0], [1, 0], [])
    assert nothing_new["reason"] == "there are no new items to grade"


def test_golden_pass_arrays_from_a_confusion_matrix():
    human, judge = golden_pass_arrays([[3, 1, 0], [1, 4, 1], [0, 0, 2]], scale=(-1, 0, 1), pass_threshold=0)
    assert human.sum() == 8 and judge.sum() == 8 and len(human) == 12
    assert (human & judge).sum() == 7


def test_ppi_with_a_useless_judge_falls_back_to_the_labels():
    # Twelve labeled items: below ten the estimate is refused (see test_corrected_pass_rate_coverage.py).
    result = ppi_mean([1, 0, 1, 1] * 3, [1] * 12, [1, 1, 1])
    assert result["lambda"] == 0.0 and result["estimate"] == 0.75 and "no information" in result["reason"]
    assert not result["refused"]


@pytest.mark.slow
def test_ppi_interval_covers_at_the_stated_rate():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(400):
        y = rng.random(60) < 0.6
        yhat = np.where(rng.random(60) < 0.85, y, ~y)
        yu_true = rng.random(600) < 0.6
        yu = np.where(rng.random(600) < 0.85, yu_true, ~yu_true)
        r = ppi_mean(y.astype(float), yhat.astype(float), yu.astype(float), level=0.9)
        hits += r["ci_low"] <= 0.6 <= r["ci_high"]
    assert 0.86 <= hits / 400 <= 0.94
