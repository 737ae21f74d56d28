"""The split and the acceptance rule: properties of the stratified split, and the rule's error rates on
simulations with a planted improvement (found) and without one (rarely accepted)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.features.refine.optimizer import UnusableEdit, parse_edit
from workbench.features.refine.records import PairedDelta
from workbench.stats import paired_bootstrap_delta
from workbench.features.refine.stats import paired_gain, stratified_split

SCALE = [-1, 0, 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SCALE), st.sampled_from("abc")), min_size=8, max_size=80),
       st.integers(0, 2**16), st.sampled_from([0.3, 0.5]))
def test_split_is_a_seeded_partition_that_keeps_each_stratum_proportion(rows, seed, fraction):
    ids = [f"i{k}" for k in range(len(rows))]
    labels, cats = [r[0] for r in rows], [r[1] for r in rows]
    s = stratified_split(ids, labels, cats, held_out_fraction=fraction, seed=seed)
    assert sorted(s.development + s.held_out) == sorted(ids) and not set(s.development) & set(s.held_out)
    assert s == stratified_split(ids, labels, cats, held_out_fraction=fraction, seed=seed)
    assert len(s.held_out) == int(np.ceil(fraction * len(ids)))
    if s.strata.startswith("consensus label x category") and "pooled" not in s.strata:
        held = set(s.held_out)
        for key, n in Counter(zip(labels, cats)).items():  # each stratum split at the fraction, give or take one
            k = sum(1 for i, r in zip(ids, rows) if r == key and i in held)
            assert abs(k - fraction * n) <= 1 + 1e-9, (key, k, n)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SCALE), st.sampled_from("abc"), st.integers(0, 30)), min_size=12,
                max_size=90), st.integers(0, 2**16))
def test_items_of_one_task_stay_on_one_side(rows, seed):
    ids = [f"i{k}" for k in range(len(rows))]
    labels, cats, tasks = [r[0] for r in rows], [r[1] for r in rows], [f"t{r[2]}" for r in rows]
    if len(set(tasks)) < 2 or len(set(tasks)) == len(tasks):
        return  # one task cannot be split; all distinct is the ungrouped split above
    s = stratified_split(ids, labels, cats, groups=tasks, seed=seed)
    assert sorted(s.development + s.held_out) == sorted(ids) and not set(s.development) & set(s.held_out)
    assert s == stratified_split(ids, labels, cats, groups=tasks, seed=seed)
    side = {i: "held" for i in s.held_out} | {i: "dev" for i in s.development}
    for task in set(tasks):
        assert len({side[i] for i, t in zip(ids, tasks) if t == task}) == 1, task
    assert s.held_out and s.development and "whole tasks on one side" in s.strata


def test_a_grouped_split_of_many_small_tasks_keeps_the_fraction_and_the_labels():
    rng = np.random.default_rng(0)
    tasks = [f"t{k // 2}" for k in range(300)]  # two models' answers per task, as in the demo
    labels = rng.choice(SCALE, size=300, p=[0.3, 0.5, 0.2]).tolist()
    s = stratified_split([f"i{k}" for k in range(300)], labels, ["a"] * 300, groups=tasks, seed=1)
    assert abs(len(s.held_out) - 150) <= 6
    held = set(s.held_out)
    for label in SCALE:
        n = labels.count(label)
        k = sum(1 for i, lab in enumerate(labels) if lab == label and f"i{i}" in held)
        assert abs(k - n / 2) <= 0.1 * n, (label, k, n)
    with pytest.raises(ValueError, match="too few to hold whole tasks out"):
        stratified_split([f"i{k}" for k in range(6)], [0, 1] * 3, ["a"] * 6, groups=["t"] * 6)


def test_lone_items_are_pooled_and_the_strata_named():
    labels = [0] * 10 + [1] * 10 + [-1]
    cats = ["a"] * 5 + ["b"] * 5 + ["a"] * 9 + ["c"] + ["a"]
    s = stratified_split([f"i{k}" for k in range(21)], labels, cats, seed=0)
    assert s.strata.startswith("consensus label x category") and "of small strata pooled" in s.strata
    with pytest.raises(ValueError, match="too few to split"):
        stratified_split(["a", "b", "c"], [0, 1, 0], ["x"] * 3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        stratified_split([f"i{k}" for k in range(8)], [0] * 8, ["x"] * 8, held_out_fraction=1.0)


def _simulate(rng, n: int, fix: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Consensus, a lenient parent (fails passed 50% of the time) and a child: fixed, or the same judge redrawn."""
    truth = rng.choice(SCALE, size=n, p=[0.35, 0.45, 0.2])
    noise = lambda: np.where(rng.random(n) < 0.1, np.clip(truth + rng.choice([-1, 1], n), -1, 1), truth)  # noqa: E731
    lenient = lambda s: np.where((truth == -1) & (rng.random(n) < 0.5), 0, s)  # noqa: E731
    parent = lenient(noise())
    child = noise() if fix else lenient(noise())
    return truth, parent, child


@pytest.mark.slow
def test_the_rule_finds_a_planted_fix_and_rarely_accepts_a_redraw():
    """Measured with 200 runs each: a planted fix is accepted 58% / 81% / 99.5% of the time with 35 / 70 / 140
    held-out items, a redrawn equal judge 2.5-4% (the one-sided 2.5% of the interval). Bounds leave room for
    the 60 runs here."""
    rng = np.random.default_rng(7)
    runs = 60

    def accepted(n: int, fix: bool) -> float:
        hits = 0
        for k in range(runs):
            c, p, ch = _simulate(rng, n, fix)
            d = paired_bootstrap_delta(c, p, ch, None, scale=SCALE, pass_threshold=0, resamples=500, seed=k)
            hits += paired_gain(PairedDelta.of(d), "krippendorff_alpha_ordinal")[0]
        return hits / runs

    assert accepted(140, True) >= 0.9
    assert accepted(70, True) >= 0.6  # fewer held-out items miss a real fix more often
    assert accepted(70, False) <= 0.1


def test_paired_gain_sentence_gives_the_numbers():
    c = np.array([-1, 0, 1, 0, -1, 0, 1, -1] * 5)
    d = paired_bootstrap_delta(c, np.zeros_like(c), c, None, scale=SCALE, pass_threshold=0, resamples=300, seed=0)
    ok, said = paired_gain(PairedDelta.of(d), "exact_agreement")
    assert ok and said.startswith("exact_agreement changes by +0.625 (95% interval") and said.endswith("above 0")
    same = paired_bootstrap_delta(c, c, c, None, scale=SCALE, pass_threshold=0, resamples=300, seed=0)
    assert paired_gain(PairedDelta.of(same), "exact_agreement") == (False, "exact_agreement changes by +0.000 (95% interval +0.000 "
                                                           "to +0.000, 40 items): the interval does not lie above 0")


def test_an_edit_is_read_only_when_it_may_be_applied():
    ok = parse_edit('{"summary": "s", "levels": [{"value": -1, "description": "d"}], "criteria": [], '
                    '"instructions": null, "examples": [{"item_id": "dev-1", "score": 0, "rationale": "r"}]}',
                    scale=SCALE, allowed_items=["dev-1"], max_examples=2)
    assert ok.levels == {-1: "d"} and ok.examples[0].item_id == "dev-1"
    bad = [({"examples": [{"item_id": "held-9", "score": 0, "rationale": ""}]}, "not one of the development items"),
           ({"levels": [{"value": 5, "description": "x"}]}, "not a value of the scale"),
           ({"examples": [{"item_id": "dev-1", "score": 3}]}, "not on the scale"),
           ({"examples": [{"item_id": "dev-1", "score": 0}] * 3}, "more than the 2 allowed"),
           ({"summary": "nothing"}, "changes nothing"), ("not json", "not JSON")]
    for payload, problem in bad:
        with pytest.raises(UnusableEdit, match=problem):
            parse_edit(payload, scale=SCALE, allowed_items=["dev-1"], max_examples=2)
