"""Self-preference: a planted same-family leniency is found, an absent one is not, at the stated rates."""

import random

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from workbench.core.consensus import consensus_label
from workbench.features.demo.generator import simulate_items, simulate_judge, simulate_labels, with_effects
from workbench.stats import self_preference

SCALE = (-1, 0, 1)
CONSENSUS_P = np.array([0.3, 0.5, 0.2])
# The judge copies the consensus with probability .75, else moves one step (clipped to the scale).
JUDGE_GIVEN_CONSENSUS = np.array([[0.875, 0.125, 0.0], [0.125, 0.75, 0.125], [0.0, 0.125, 0.875]])
P_BELOW_TOP = 1 - CONSENSUS_P @ JUDGE_GIVEN_CONSENSUS[:, 2]  # chance the judge's score can still go up


def golden_set(rng, n_items=200, effect=0.0):
    """Items from three families (a third by the judge's family 'anthropic', half of those by its own
    model), in two categories and tasks of two items. The judge is lenient by ``effect`` (in mean
    residual) on its own family: such an item is moved up one step with probability
    effect / P(below the top), so the expected residual rises by exactly ``effect``."""
    family = rng.choice(["anthropic", "openai", "google"], size=n_items)
    model = np.where(family == "anthropic", rng.choice(["claude-x", "claude-y"], size=n_items),
                     np.where(family == "openai", "gpt-4o", "gemini"))
    consensus = rng.choice(3, size=n_items, p=CONSENSUS_P)
    judge = np.array([rng.choice(3, p=JUDGE_GIVEN_CONSENSUS[c]) for c in consensus])
    bump = (family == "anthropic") & (judge < 2) & (rng.random(n_items) < effect / P_BELOW_TOP)
    judge = judge + bump
    return dict(consensus=consensus - 1, judge=judge - 1, producer_model=model, producer_family=family,
                category=rng.choice(["bugfix", "feature"], size=n_items), clusters=np.arange(n_items) // 2)


def run(data, **kwargs):
    return self_preference(data["consensus"], data["judge"], scale=SCALE, producer_model=data["producer_model"],
                           producer_family=data["producer_family"], judge_model="claude-x",
                           judge_family="anthropic", category=data["category"], clusters=data["clusters"], **kwargs)


def demo_golden_set(seed, effect):
    """A golden set from the demo generator (DESIGN 9): 200 items in tasks and categories, a third
    of them by the judge's own model and family (openai/gpt-4o), labeled by the three simulated
    reviewers; consensus by strict majority (unresolved items left out, as in calibration).

    The generator plants self-preference as the chance of a one-level move up on own-family items,
    so a residual effect of ``effect`` needs the chance effect / P(the score is below the top)."""
    base = with_effects(n_items=200, seed=seed)
    truth_p = np.array(base.true_distribution)
    error = base.judges[0].error
    # Before the self-preference move the judge is at the top when the truth is and it made no
    # error, or the truth is in the middle and its error went up (half of them).
    at_top = truth_p[2] * (1 - error) + truth_p[1] * error / 2
    cfg = with_effects(n_items=200, seed=seed, self_preference=effect / (1 - at_top))
    rng = random.Random(cfg.seed)
    items = simulate_items(cfg, rng)
    labels = simulate_labels(cfg, items, rng)
    judged = {r["item_id"]: r["score"] for r in simulate_judge(cfg.judges[0], items, rng)}
    by_item = {}
    for lab in labels:
        by_item.setdefault(lab["item_id"], []).append(lab["score"])
    consensus = [consensus_label(by_item.get(it.id, [])) for it in items]
    return dict(consensus=np.array(consensus, dtype=float), judge=np.array([judged[it.id] for it in items]),
                producer_model=[it.producer_model for it in items],
                producer_family=[it.producer_family for it in items],
                category=[it.category for it in items], clusters=[it.task_id for it in items])


def run_demo(data, **kwargs):
    return self_preference(data["consensus"], data["judge"], scale=SCALE, producer_model=data["producer_model"],
                           producer_family=data["producer_family"], judge_model="gpt-4o",
                           judge_family="openai", category=data["category"], clusters=data["clusters"], **kwargs)


@pytest.mark.slow
def test_planted_effect_is_found():
    """200 demo golden sets of 200 items with +0.3 planted; 400 resamples per set (not 2,000) to stay fast."""
    sets = 200
    found = p_found = 0
    for i in range(sets):
        planted = run_demo(demo_golden_set(1000 + i, effect=0.3), resamples=400, seed=i)["same_family"]
        found += planted["ci_low"] > 0
        p_found += planted["p_value"] < 0.05
    assert found / sets >= 0.90  # observed: 0.975
    assert p_found / sets >= 0.90  # observed: 0.98


@pytest.mark.slow
def test_absent_effect_is_not_found():
    """1,000 demo golden sets with nothing planted; 400 resamples per set.

    The interval's true false-alarm rate here is about 6% (1,000 sets: 5.9% with 400 resamples,
    6.1% with 2,000; the cluster-robust OLS p-value 5.9%): slightly above the nominal 5%, as
    percentile intervals are with ~60 same-family items. Checked on 1,000 sets rather than 200
    because at 6% a block of 200 sets exceeds 7% about one time in four by chance alone (the
    block of seeds 5000-5199 gave 8%)."""
    sets = 1000
    false_alarm = 0
    for i in range(sets):
        null = run_demo(demo_golden_set(20000 + i, effect=0.0), resamples=400, seed=i)["same_family"]
        false_alarm += not (null["ci_low"] <= 0 <= null["ci_high"])
    assert false_alarm / sets <= 0.07  # observed: 0.059


@pytest.mark.slow
def test_planted_effect_size_is_recovered_on_average():
    """The same check on this file's own generator, where the effect is planted directly on residuals."""
    rng = np.random.default_rng(2025)
    values = [run(golden_set(rng, effect=0.3), resamples=50, seed=i)["same_family"]["value"] for i in range(200)]
    assert np.mean(values) == pytest.approx(0.3, abs=0.02)


def test_effects_by_hand():
    data = {
        "consensus":       [0, 0, 0, 0, 0, 0, 0, 0],
        "judge":           [1, 1, 0, 1, 0, 0, -1, 0],
        "producer_model":  ["claude-x", "claude-x", "claude-y", "claude-y", "gpt-4o", "gpt-4o", "gemini", "gemini"],
        "producer_family": ["Anthropic", "anthropic", "anthropic", "anthropic", "openai", "openai", "google",
                            "google"],
        "category": None,
        "clusters": None,
    }
    result = run(data, resamples=200)
    other = np.mean([0, 0, -1, 0])
    assert result["same_model"]["value"] == pytest.approx(1 - other)
    assert result["same_family"]["value"] == pytest.approx(0.75 - other)
    assert result["same_model"]["n"] == 2 and result["same_family"]["n"] == 4
    assert result["same_family"]["n_other_family"] == 4
    assert result["judge_model"] == "claude-x"


def test_p_value_is_the_cluster_robust_ols_with_category_fixed_effects():
    data = golden_set(np.random.default_rng(8), effect=0.2)
    result = run(data, resamples=200)["same_family"]
    frame = pd.DataFrame({"r": data["judge"] - data["consensus"],
                          "same": (data["producer_family"] == "anthropic") * 1.0,
                          "category": data["category"]})
    fit = smf.ols("r ~ same + C(category)", frame).fit(cov_type="cluster", cov_kwds={"groups": data["clusters"]})
    assert result["p_value"] == pytest.approx(fit.pvalues["same"], rel=1e-9)
    assert result["ols_coefficient"] == pytest.approx(fit.params["same"], rel=1e-9)


def test_no_same_family_items_is_not_measurable_never_zero():
    data = golden_set(np.random.default_rng(1))
    keep = data["producer_family"] != "anthropic"
    subset = {k: (v[keep] if v is not None else None) for k, v in data.items()}
    result = run(subset, resamples=100)
    for name in ("same_model", "same_family"):
        entry = result[name]
        assert entry["measurable"] is False
        assert entry["value"] is None and entry["ci_low"] is None and entry["p_value"] is None
        assert "not measurable" in entry["reason"]


def test_no_other_family_or_no_judge_family_is_not_measurable():
    data = golden_set(np.random.default_rng(1))
    keep = data["producer_family"] == "anthropic"
    subset = {k: v[keep] for k, v in data.items()}
    assert "another family" in run(subset, resamples=100)["same_family"]["reason"]
    result = self_preference([0, 1], [0, 1], scale=SCALE, producer_model=["a", "b"], producer_family=["x", "y"],
                             judge_model="a", judge_family=None)
    assert result["same_family"]["measurable"] is False and "no family" in result["same_family"]["reason"]


def test_category_confounded_with_family_has_an_effect_but_no_p_value():
    data = {
        "consensus": [0] * 6, "judge": [1, 1, 0, 0, 0, -1],
        "producer_model": ["claude-x"] * 3 + ["gpt-4o"] * 3,
        "producer_family": ["anthropic"] * 3 + ["openai"] * 3,
        "category": ["a"] * 3 + ["b"] * 3, "clusters": None,
    }
    entry = run(data, resamples=100)["same_family"]
    assert entry["measurable"] and entry["value"] == pytest.approx(2 / 3 + 1 / 3)
    assert entry["p_value"] is None and "fixed effects absorb" in entry["reason"]


def test_judge_model_is_the_bare_name_as_producers_name_it():
    """The caller strips the provider prefix (workbench.core.models.parse_model, tested in tests/judges)."""
    data = {"consensus": [0, 0, 0, 0], "judge": [1, 1, 0, 0], "producer_model": ["meta-llama/Llama-3-8B"] * 2 + ["x"] * 2,
            "producer_family": ["meta", "meta", "openai", "openai"], "category": None, "clusters": None}
    result = self_preference(data["consensus"], data["judge"], scale=SCALE, producer_model=data["producer_model"],
                             producer_family=data["producer_family"], judge_model="meta-llama/Llama-3-8B",
                             judge_family="meta", resamples=50)
    assert result["judge_model"] == "meta-llama/Llama-3-8B" and result["same_model"]["n"] == 2
    with pytest.raises(ValueError, match="bare model name"):
        self_preference([0], [0], scale=SCALE, producer_model=["a"], producer_family=["x"], judge_model=" ",
                        judge_family="x")


def test_lengths_must_agree():
    with pytest.raises(ValueError, match="producer_family has 1"):
        self_preference([0, 1], [0, 1], scale=SCALE, producer_model=["a", "b"], producer_family=["x"],
                        judge_model="a", judge_family="x")
