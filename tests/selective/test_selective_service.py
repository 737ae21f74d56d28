"""The selective service on the demo: confidence from repeats where none is stored, refusals by sentence."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.calibration.golden_sets import consensus
from workbench.core.errors import InputError
from workbench.features.selective.service import calibrate_selective, judge_items, judges_of_cascade
from workbench.stats.selective import choose_threshold

RUBRIC = "demo-patch-quality"


def test_confidence_from_repeats_where_none_is_stored(demo_store):
    """careful-sonnet's demo run has two repeats an item and no stated confidence: each item's confidence is the
    share of its two repeats giving repeat 0's score (1 or 0.5), and the threshold is chosen on those."""
    ji = judge_items(demo_store, "demo", RUBRIC, "careful-sonnet")
    assert ji.source == "repeats"
    values = set(ji.confidence.values())
    assert values <= {0.5, 1.0} and 1.0 in values
    resolved = consensus(demo_store, "demo", RUBRIC).resolved
    ids = [i for i in ji.verdict if i in resolved]
    direct = choose_threshold(np.array([ji.confidence[i] for i in ids]),
                              np.array([ji.verdict[i] == resolved[i] for i in ids]), target=0.85, risk=0.1)
    r = calibrate_selective(demo_store, "demo", RUBRIC, ["careful-sonnet"], target=0.85, risk=0.1)
    assert (r.threshold, r.coverage, r.n_calibration) == (direct.threshold, direct.coverage, len(ids))
    assert r.guaranteed and r.agreement_lower_bound >= 0.85


def test_a_judge_without_any_confidence_is_refused_by_sentence(demo_store):
    ji = judge_items(demo_store, "demo", RUBRIC, "lenient-mini")  # one repeat, nothing stated
    assert ji.source == "none" and all(np.isnan(c) for c in ji.confidence.values())
    with pytest.raises(InputError, match="judge 'lenient-mini' has no confidence on any item.*'confidence' field"):
        calibrate_selective(demo_store, "demo", RUBRIC, ["lenient-mini"], target=0.9, risk=0.05)


@pytest.mark.parametrize("judge, cascade, selective, said", [
    (None, None, False, "no judge given"),
    ("a", "a,b", False, "--cascade works with --selective"),
    ("b", "a,b", True, "--judge is 'b' but the cascade starts with 'a'"),
    (None, "a,a", True, "--cascade is 'a,a', not two or three different judges"),
    (None, "a,b,c,d", True, "not two or three different judges")])
def test_which_judges(judge, cascade, selective, said):
    with pytest.raises(InputError, match=said.replace("(", r"\(")):
        judges_of_cascade(judge, cascade, selective, 0.9, 0.05)


def test_which_judges_accepts():
    assert judges_of_cascade("a", None, False) == ["a"]
    assert judges_of_cascade(None, "a, b", True, 0.9, 0.05) == ["a", "b"]
    assert judges_of_cascade("a", "a,b,c", True, 0.9, 0.05) == ["a", "b", "c"]
