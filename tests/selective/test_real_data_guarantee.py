"""The guarantee on held-out real data (Play Favorites, tests/selective/realdata.py): over repeated random
calibration/test splits, the realised agreement on the kept test items is >= the target in at least 1 - risk of
the splits, up to binomial noise (failures <= risk * S + 2.33 sd: a one-sided 99% tolerance), and the coverage is
at least 80% of an oracle's (the lowest fixed threshold whose agreement on the test half itself reaches the
target), on average over the splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.selective.realdata import judge_on_real_data
from workbench.stats.selective import choose_threshold

# judge, target, risk, calibration items; overall agreement of each judge with the humans: gpt-4o 0.85,
# llama-3.1-8b 0.52, gpt-3.5-turbo 0.87
CASES = [("gpt-4o", 0.95, 0.1, 1000), ("meta.llama3-1-8b-instruct-v1:0", 0.85, 0.1, 500),
         ("gpt-3.5-turbo", 0.9, 0.1, 500)]


def held_out(judge: str, target: float, risk: float, n_cal: int, splits: int, seed: int = 0):
    data = judge_on_real_data(judge)
    conf, agree = data.confidence, data.agree
    rng = np.random.default_rng(seed)
    failures, ratios = 0, []
    for _ in range(splits):
        order = rng.permutation(len(conf))
        cal, test = order[:n_cal], order[n_cal:]
        chosen = choose_threshold(conf[cal], agree[cal], target=target, risk=risk)
        coverage = 0.0
        if chosen.guaranteed:
            kept = conf[test] >= chosen.threshold
            coverage = kept.mean()
            failures += agree[test][kept].mean() < target
        oracle = max((float((conf[test] >= t).mean()) for t in np.unique(conf[test])
                      if agree[test][conf[test] >= t].mean() >= target), default=0.0)
        if oracle:
            ratios.append(coverage / oracle)
    return failures, float(np.mean(ratios))


def _check(judge, target, risk, n_cal, splits):
    failures, ratio = held_out(judge, target, risk, n_cal, splits)
    tolerance = risk * splits + 2.33 * math.sqrt(splits * risk * (1 - risk))
    assert failures <= tolerance, f"{judge}: realised agreement below {target} in {failures} of {splits} splits"
    assert ratio >= 0.8, f"{judge}: coverage {ratio:.2f} of the oracle's"
    return failures, ratio


def test_guarantee_and_coverage_on_real_data_quick():
    _check("meta.llama3-1-8b-instruct-v1:0", 0.85, 0.1, 500, 60)


@pytest.mark.slow
@pytest.mark.parametrize("judge, target, risk, n_cal", CASES)
def test_guarantee_and_coverage_on_real_data(judge, target, risk, n_cal):
    _check(judge, target, risk, n_cal, 400)


def test_the_derived_confidence_is_informative():
    """Without it the test above would be vacuous: agreement on the judge's surest half beats its other half."""
    data = judge_on_real_data("gpt-4o")
    top = data.confidence >= np.median(data.confidence)
    assert data.agree[top].mean() > data.agree[~top].mean() + 0.2
