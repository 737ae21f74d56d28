"""Run-to-run noise across repeats, and drift between runs."""

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import SquareTable

from workbench.stats import drift, paired_bootstrap_delta, pass_at_k, pass_hat_k, repeat_noise, stuart_maxwell

SCALE = (-1, 0, 1)


def repeats_frame(scores_by_item):
    rows = [(item, r, s) for item, scores in scores_by_item.items() for r, s in enumerate(scores)]
    return pd.DataFrame(rows, columns=["item_id", "repeat", "score"])


def test_repeat_noise_by_hand():
    frame = repeats_frame({"a": [1, 1, 1], "b": [0, 1, 0], "c": [-1, -1, -1], "d": [0, 0, 1]})
    result = repeat_noise(frame, scale=SCALE, consensus={"a": 1, "b": 0, "c": 0, "d": 0})
    assert result.flip_rate == 0.5                           # b and d are not all equal
    assert result.pairwise_flip_rate == pytest.approx((0 + 2 / 3 + 0 + 2 / 3) / 4)
    assert result.pass_hat_k == 0.25                         # only a: every repeat equals its consensus
    curve = {p.k: p.value for p in result.pass_hat_k_curve}
    assert curve[1] == pytest.approx((3 / 3 + 2 / 3 + 0 + 2 / 3) / 4)
    assert curve[3] == pytest.approx(result.pass_hat_k)
    matrix = frame.pivot(index="repeat", columns="item_id", values="score").to_numpy(float)
    assert result.krippendorff_alpha_ordinal == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=list(SCALE)))
    assert result.n_items == 4 and result.repeats == 3


def test_pass_hat_k_over_items_and_pass_at_k():
    assert pass_hat_k([4, 4], [4, 2], 2) == pytest.approx((1 + 1 / 6) / 2)
    assert pass_at_k([4, 4], [0, 2], 2) == pytest.approx((0 + 1 - 1 / 6) / 2)
    with pytest.raises(ValueError, match="k=3 is more than"):
        pass_hat_k([2], [1], 3)
    with pytest.raises(ValueError, match="between 0 and"):
        pass_hat_k([2], [3], 1)


def test_unequal_repeats_and_unscored_repeats():
    frame = repeats_frame({"a": [1, 1, None], "b": [0, 0], "c": [1]})
    result = repeat_noise(frame, scale=SCALE, consensus={"a": 1, "b": 0, "c": 1})
    assert result.n_unscored == 1 and result.n_items == 2  # c has a single repeat
    assert result.flip_rate == 0.0 and result.pass_hat_k == 1.0
    assert [p.k for p in result.pass_hat_k_curve] == [1, 2]


def test_no_item_with_two_repeats():
    result = repeat_noise(repeats_frame({"a": [1], "b": [None, None]}), scale=SCALE, consensus={"a": 1})
    assert np.isnan(result.flip_rate) and result.pass_hat_k is None
    assert "two or more scored repeats" in result.reasons["flip_rate"]


def test_perfectly_stable_single_label_judge():
    result = repeat_noise(repeats_frame({"a": [0, 0], "b": [0, 0]}), scale=SCALE)
    assert result.flip_rate == 0.0 and np.isnan(result.krippendorff_alpha_ordinal)
    assert "no variation" in result.reasons["krippendorff_alpha_ordinal"]


def test_stuart_maxwell_ignores_labels_no_item_moved_to_or_from():
    # Label 2 is never used, label -1 is used but never changes: statsmodels on the full table
    # cannot invert the covariance; the test restricted to the labels that changed can.
    table = np.array([[5, 0, 0, 0], [0, 10, 4, 0], [0, 1, 12, 0], [0, 0, 0, 0]])
    rows, cols = np.divmod(np.repeat(np.arange(16), table.ravel()), 4)
    result = stuart_maxwell(rows - 1, cols - 1, scale=(-1, 0, 1, 2))
    expected = SquareTable(table[1:3, 1:3], shift_zeros=False).homogeneity()
    assert result.statistic == pytest.approx(expected.statistic) == pytest.approx((4 - 1) ** 2 / 5)
    assert result.df == 1 and result.p_value == pytest.approx(expected.pvalue)
    assert result.table == table.tolist()


def test_stuart_maxwell_when_nothing_changed():
    result = stuart_maxwell([0, 1, 1], [0, 1, 1], scale=SCALE)
    assert result.statistic == 0.0 and result.p_value == 1.0 and "no item changed" in result.reason
    empty = stuart_maxwell([None], [0], scale=SCALE)
    assert np.isnan(empty.p_value) and empty.reason


def test_drift_report():
    rng = np.random.default_rng(0)
    consensus = rng.choice(SCALE, size=300)
    before = np.where(rng.random(300) < 0.8, consensus, rng.choice(SCALE, size=300))
    after = np.where(rng.random(300) < 0.3, np.minimum(before + 1, 1), before)  # later run drifts lenient
    tasks = np.arange(300) // 3
    result = drift(consensus, before, after, tasks, scale=SCALE, pass_threshold=0, resamples=500,
                   baseline_versions=["m-2024", "m-2024"], candidate_versions=["m-2025"])
    assert result.flip_rate == pytest.approx(np.mean(before != after))
    assert result.stuart_maxwell.p_value < 0.01
    assert result.deltas["mean_signed_error"]["ci_low"] > 0
    paired = paired_bootstrap_delta(consensus, before, after, tasks, scale=SCALE, pass_threshold=0, resamples=500)
    assert result.deltas == paired["metrics"]
    assert result.model_versions.to_json() == {"baseline": ["m-2024"], "candidate": ["m-2025"], "changed": True}


def test_drift_with_unscored_items():
    result = drift([0, 1, None, 1], [0, 1, 1, None], [0, 0, 1, 1], None, scale=SCALE, pass_threshold=0,
                   resamples=50)
    assert result.n_items == 3 and result.flip_rate == pytest.approx(1 / 3)
    assert result.n_items_with_consensus == 2
