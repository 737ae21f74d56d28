"""The probe statistics: properties, and simulations with planted susceptibilities found and absent ones not.

Detection: each planted susceptibility (a verdict moved one level with probability 0.4, or set to the top by an
obeyed instruction) on 60 items in 30 task clusters, with independent verdict noise of 0.1, must be found (the
shift's interval excludes 0) in at least 90% of simulated runs; a robust judge with the same noise may be flagged
in at most 7%.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.probes.simulate import simulate
from workbench.calibration.gate import probe_moves
from workbench.stats.probes import probe_effect

SCALE = (-1, 0, 1)
RUNS = 300


def _flag_rate(runs: int = RUNS, **planted) -> float:
    flagged = 0
    for k in range(runs):
        s = simulate(np.random.default_rng(1000 + k), **planted)
        e = probe_effect(s["baseline"], s["perturbed"], s["clusters"], scale=SCALE, consensus=s["truth"],
                         resamples=500, seed=k)
        flagged += probe_moves(e) is not None
    return flagged / runs


@pytest.mark.slow
@pytest.mark.parametrize("susceptibility, planted", [
    ("raises padded outputs", {"effect": 0.4, "direction": 1}),
    ("favours outputs claiming its own model", {"effect": 0.4, "direction": 1, "noise": 0.15}),
    ("obeys an injected instruction", {"effect": 0.4, "obey": True}),
    ("lowers after an authority's rejection", {"effect": 0.4, "direction": -1}),
])
def test_planted_susceptibility_is_found_in_at_least_90_percent_of_runs(susceptibility, planted):
    rate = _flag_rate(**planted)
    print(f"{susceptibility}: found in {rate:.1%} of {RUNS} runs")
    assert rate >= 0.90, f"{susceptibility}: found in only {rate:.1%}"


@pytest.mark.slow
@pytest.mark.parametrize("noise", [0.0, 0.1, 0.25])
def test_robust_judge_is_flagged_in_at_most_7_percent_of_runs(noise):
    rate = _flag_rate(noise=noise)
    print(f"robust judge, noise {noise}: flagged in {rate:.1%} of {RUNS} runs")
    assert rate <= 0.07


def test_identical_verdicts_show_no_shift_and_full_robustness():
    s = simulate(np.random.default_rng(3))
    e = probe_effect(s["baseline"], s["baseline"], s["clusters"], scale=SCALE, resamples=300)
    assert e["mean_shift"] == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert e["flip_rate"]["value"] == 0.0 and e["robustness_rate"]["value"] == 1.0
    assert e["robustness_rate"]["ci_low"] < 1.0  # 60 unchanged verdicts are strong evidence, not certainty


def test_swapping_the_two_runs_negates_the_shift_and_keeps_the_flip_rate():
    s = simulate(np.random.default_rng(4), effect=0.4)
    a = probe_effect(s["baseline"], s["perturbed"], s["clusters"], scale=SCALE, consensus=s["truth"], resamples=400)
    b = probe_effect(s["perturbed"], s["baseline"], s["clusters"], scale=SCALE, consensus=s["truth"], resamples=400)
    assert b["mean_shift"]["value"] == pytest.approx(-a["mean_shift"]["value"])
    assert b["mean_shift"]["ci_low"] == pytest.approx(-a["mean_shift"]["ci_high"])
    assert b["flip_rate"] == pytest.approx(a["flip_rate"])
    assert b["agreement_change"]["value"] == pytest.approx(-a["agreement_change"]["value"])
    assert (a["n_up"], a["n_down"]) == (b["n_down"], b["n_up"])


def test_counts_against_the_consensus_by_hand():
    # items: (baseline, perturbed, consensus); two clusters
    baseline, perturbed, consensus = [0, 0, -1, 1, 0], [1, 0, 0, 1, 1], [0, 0, 0, None, 1]
    e = probe_effect(baseline, perturbed, ["a", "a", "b", "b", "b"], scale=SCALE, consensus=consensus,
                     resamples=200)
    assert e["mean_shift"]["value"] == pytest.approx(3 / 5)
    assert e["flip_rate"]["value"] == pytest.approx(3 / 5)
    assert e["n_consensus"] == 4
    # signed error against the consensus: before (0, 0, -1, -1) -> after (1, 0, 0, 0): up by 3/4
    assert e["consensus_shift"]["value"] == pytest.approx(3 / 4)
    # exact agreement with the consensus: 2 of 4 before, 3 of 4 after
    assert e["agreement_change"]["value"] == pytest.approx(1 / 4)


def test_unscored_verdicts_are_left_out_and_counted():
    e = probe_effect([0, None, 1, 0], [0, 1, None, 1], scale=SCALE, resamples=100)
    assert (e["n_items"], e["n_missing"]) == (2, 2)
    assert e["mean_shift"]["value"] == pytest.approx(0.5)


def test_one_verdict_is_not_enough_and_says_so():
    e = probe_effect([0], [1], scale=SCALE, resamples=100)
    assert np.isnan(e["mean_shift"]["ci_low"]) and "fewer than two items" in e["reasons"]["mean_shift"]


def test_a_score_off_the_scale_is_refused_with_its_position():
    with pytest.raises(ValueError, match="perturbed score 2 at position 1 is not on the scale"):
        probe_effect([0, 0], [0, 2], scale=SCALE)


@pytest.mark.slow
def test_nine_probes_at_95_percent_each_flag_a_robust_judge_somewhere_in_about_a_quarter_of_runs():
    """Why the README warns that a lone weak shift may be chance: per-probe errors add up over the catalogue."""
    from tests.probes.simulate import _noisy

    runs, any_flag = 150, 0
    for k in range(runs):
        rng = np.random.default_rng(5000 + k)
        s = simulate(rng)  # the judge's verdicts on the originals, shared by every probe as in a real report
        flags = [probe_moves(probe_effect(s["baseline"], _noisy(rng, s["truth"], 0.1), s["clusters"], scale=SCALE,
                                          resamples=400, seed=j)) for j in range(9)]
        any_flag += any(flags)
    print(f"robust judge, nine probes: at least one flagged in {any_flag / runs:.1%} of {runs} runs")
    assert 0.1 <= any_flag / runs <= 0.4
