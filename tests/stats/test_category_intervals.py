"""Per-category intervals that hold (issue 26, item 6): the rules, on small synthetic categories and on the demo.

* a category below ``min_category_items`` keeps its values, gets no interval and says why in one sentence;
* from that size up, every metric with a value has an interval containing it; a category of 30+ items always does,
  however its items fall into task clusters (one cluster: the metric's whole range, with a reason);
* no interval has zero width while the draws differ (a sample with no disagreement at all still gets a width);
* ``min_category_items`` <= 0 is refused: by the statistics with a ValueError, by the gate policy with a sentence
  naming the file and the key.

Coverage on real data: test_category_interval_coverage.py (slow).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, write
from workbench import stats
from workbench.core.errors import InputError
from workbench.calibration.gate import load_policy, policy_from_dict
from workbench.stats.intervals.posterior import confusion_draws, posterior_interval

SCALE = (-1, 0, 1)
METRICS = ("exact_agreement", "krippendorff_alpha_ordinal", "mean_signed_error")


def _data(sizes: dict[str, int], *, seed: int = 0, per_task: int = 3, agree: float = 0.7):
    rng = np.random.default_rng(seed)
    cats = np.concatenate([[name] * n for name, n in sizes.items()])
    n = len(cats)
    c = rng.choice(SCALE, size=n, p=[0.2, 0.2, 0.6])
    j = np.where(rng.random(n) < agree, c, rng.choice(SCALE, size=n))
    return c, j, cats, np.arange(n) // per_task


def _per_category(c, j, cats, clusters, **kw):
    return stats.per_category_agreement(c, j, cats, clusters, scale=SCALE, pass_threshold=0, resamples=400, **kw)


def test_a_category_below_min_category_items_keeps_its_values_but_gets_no_interval_and_says_why():
    c, j, cats, clusters = _data({"tiny": 8, "mid": 12, "big": 200})
    out = _per_category(c, j, cats, clusters)
    tiny = out["tiny"]
    assert tiny["n_items"] == 8
    assert tiny["reason"] == ("8 items: below min_category_items 10, so no interval; label 2 more items of this "
                              "category for one")
    for m in METRICS:
        assert np.isfinite(tiny[m]["value"]) and np.isnan(tiny[m]["ci_low"]) and np.isnan(tiny[m]["ci_high"])
        assert tiny["reasons"][m] == tiny["reason"]
    w = tiny["worse_than_rest"]
    assert w["significant"] is False and w["difference"] is None and w["reason"] == tiny["reason"]
    # 12 items are at least 10: intervals, and the flag is tested against the rest
    assert out["mid"]["reason"] is None and out["mid"]["worse_than_rest"]["difference"] is not None
    for m in METRICS:
        assert out["mid"][m]["ci_low"] <= out["mid"][m]["value"] <= out["mid"][m]["ci_high"]
    # the JSON says null, never NaN
    assert json.loads(json.dumps(stats.jsonable(out)))["tiny"]["exact_agreement"]["ci_low"] is None


def test_min_category_items_is_the_callers_and_the_flag_is_corrected_for_the_categories_tested():
    c, j, cats, clusters = _data({"a": 8, "b": 40, "c": 60})
    low = _per_category(c, j, cats, clusters, min_category_items=5)
    assert low["a"]["reason"] is None and np.isfinite(low["a"]["krippendorff_alpha_ordinal"]["ci_low"])
    assert low["b"]["worse_than_rest"]["level"] == pytest.approx(1 - 0.05 / 3)
    high = _per_category(c, j, cats, clusters, min_category_items=50)
    assert high["a"]["reason"].startswith("8 items: below min_category_items 50")
    assert high["b"]["reason"].startswith("40 items: below min_category_items 50, so no interval; label 10 more")
    assert high["c"]["reason"] is None
    assert high["c"]["worse_than_rest"]["level"] == pytest.approx(0.95)  # one category tested: no correction


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10", None])
def test_min_category_items_below_one_or_not_a_whole_number_is_refused(bad):
    c, j, cats, clusters = _data({"a": 20})
    with pytest.raises(ValueError, match="min_category_items must be a whole number of at least 1"):
        _per_category(c, j, cats, clusters, min_category_items=bad)


@pytest.mark.parametrize("value", [0, -3])
def test_the_policy_refuses_min_category_items_below_one_naming_the_file_and_the_key(tmp_path, value):
    with pytest.raises(InputError) as e:
        policy_from_dict({"min_category_items": value}, source="rubrics/policy.yaml")
    assert "rubrics/policy.yaml" in str(e.value) and "min_category_items" in str(e.value)
    f = write(tmp_path / "policy.yaml", f"min_category_items: {value}\n")
    with pytest.raises(InputError) as e:
        load_policy(f)
    assert "policy.yaml" in str(e.value) and "min_category_items" in str(e.value)
    assert "at least 1" in str(e.value)
    assert policy_from_dict({"min_category_items": 30}).min_category_items == 30


def test_a_category_of_one_task_cluster_gets_the_whole_range_and_a_reason():
    c, j, _, _ = _data({"x": 40})
    out = _per_category(c, j, ["x"] * 40, ["one-task"] * 40)["x"]
    assert out["n_clusters"] == 1
    a, mse = out["krippendorff_alpha_ordinal"], out["mean_signed_error"]
    assert (a["ci_low"], a["ci_high"]) == (min(-1.0, a["value"]), 1.0)
    assert (mse["ci_low"], mse["ci_high"]) == (-2.0, 2.0)
    assert "belong to one task cluster" in out["reasons"]["mean_signed_error"]
    ea = out["exact_agreement"]
    assert ea["ci_low"] < ea["value"] < ea["ci_high"] and ea["design_effect"] == 40  # counts as one item


def test_a_category_without_any_disagreement_still_gets_intervals_of_some_width():
    """All 30 items agree on the same label: alpha is undefined (its reason stays), exact agreement and the mean
    signed error have intervals of non-zero width, because a category of 30 could still hold disagreements."""
    c = np.full(30, 1)
    out = _per_category(c, c, ["x"] * 30, np.arange(30) // 2)["x"]
    assert np.isnan(out["krippendorff_alpha_ordinal"]["value"])
    assert "only one scale value" in out["reasons"]["krippendorff_alpha_ordinal"]
    mse, ea = out["mean_signed_error"], out["exact_agreement"]
    assert mse["value"] == 0 and mse["ci_low"] < 0 < mse["ci_high"]
    assert ea["value"] == 1 and ea["ci_low"] < 1 == ea["ci_high"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(30, 90), per_task=st.integers(1, 40), agree=st.floats(0.0, 1.0), seed=st.integers(0, 10_000))
def test_every_category_of_30_or_more_items_gets_an_interval_around_each_value(n, per_task, agree, seed):
    c, j, _, clusters = _data({"x": n}, seed=seed, per_task=per_task, agree=agree)
    out = _per_category(c, j, ["x"] * n, clusters, seed=seed)["x"]
    assert out["reason"] is None
    for m in METRICS:
        e = out[m]
        if np.isfinite(e["value"]):
            assert np.isfinite(e["ci_low"]) and np.isfinite(e["ci_high"]), (m, out["reasons"])
            assert e["ci_low"] <= e["value"] <= e["ci_high"]
            assert e["ci_high"] > e["ci_low"], m  # never zero width: a category of 30 could always differ
        else:
            assert m in out["reasons"]


@settings(max_examples=40, deadline=None)
@given(clusters=st.lists(st.lists(st.integers(0, 8), min_size=1, max_size=6), min_size=2, max_size=15),
       seed=st.integers(0, 1000))
def test_posterior_draws_differ_so_no_interval_has_zero_width(clusters, seed):
    """Any sample of 2+ clusters (cells of a 3 x 3 table): the draws of every table differ, the mean signed error's
    interval has width, and the drawn tables weigh as many items as the sample."""
    per_cluster = np.zeros((len(clusters), 9))
    for g, cells in enumerate(clusters):
        np.add.at(per_cluster[g], cells, 1)
    draws = confusion_draws(per_cluster, draws=300, seed=seed)
    assert draws.shape == (300, 3, 3) and np.all(draws >= 0)
    assert np.allclose(draws.sum(axis=(1, 2)).mean(), per_cluster.sum(), rtol=0.2)
    signed = (draws * (np.arange(3)[None, :] - np.arange(3)[:, None])).sum(axis=(1, 2)) / draws.sum(axis=(1, 2))
    point = float((per_cluster.sum(axis=0).reshape(3, 3) * (np.arange(3)[None, :] - np.arange(3)[:, None])).sum()
                  / per_cluster.sum())
    low, high, undefined = posterior_interval(signed, point, 0.95)
    assert undefined == 0 and low <= point <= high and high > low


def test_posterior_draws_do_not_depend_on_the_order_of_clusters():
    rng = np.random.default_rng(3)
    per_cluster = rng.integers(0, 3, size=(40, 9))
    a = confusion_draws(per_cluster, draws=200, seed=7)
    b = confusion_draws(per_cluster[rng.permutation(40)], draws=200, seed=7)
    assert np.array_equal(a, b)


def test_self_preference_posterior_interval_has_width_when_every_residual_is_zero():
    """50 items, every judge score equal to the consensus: the effects are 0, and a 95% interval [0, 0] would say
    nothing could differ; the posterior's has width (the expanded percentile interval's had none)."""
    n = 50
    c = np.ones(n, dtype=int)
    fam = np.array(["openai", "anthropic"] * (n // 2))
    model = np.where(fam == "openai", "gpt-4o", "claude")
    kw = dict(scale=SCALE, producer_model=model, producer_family=fam, judge_model="gpt-4o", judge_family="openai",
              clusters=np.arange(n) // 5, resamples=500)
    old = stats.self_preference(c, c, interval="expanded", **kw)["same_family"]
    assert old["ci_low"] == old["ci_high"] == 0
    new = stats.self_preference(c, c, **kw)
    for k in ("same_model", "same_family"):
        assert new[k]["value"] == 0 and new[k]["ci_low"] < 0 < new[k]["ci_high"]
    assert stats.bias.INTERVAL == "posterior"
    again = stats.self_preference(c, c, **kw)
    assert again["same_family"]["ci_low"] == new["same_family"]["ci_low"]  # seeded


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("categories") / "demo.db")
    assert cli("demo", "--no-ui").exit_code == 0
    return cli


def test_the_report_the_page_rows_and_the_text_say_why_a_category_has_no_interval(demo):
    """A workspace policy of min_category_items: 40: the demo's categories of 30 to 35 items get no interval, with
    the sentence in the JSON, in presentation.category_rows (the Calibration page's notes) and in calibrate's
    text; feature (42 items) keeps its intervals."""
    from workbench.calibration.presentation import category_rows
    from workbench.calibration.report import CalibrationReport

    policy = write(demo.db.parent / "rubrics" / "policy.yaml", "min_category_items: 40\n")
    try:
        r = demo("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--json")
        assert r.exit_code == 0, r.output
        report = json.loads(r.output)
        cats = report["per_category"]
        assert cats["feature"]["reason"] is None and cats["feature"]["exact_agreement"]["ci_low"] is not None
        small = {name: c for name, c in cats.items() if c["n_items"] < 40}
        assert sorted(small) == ["bug-fix", "refactor", "test-writing"]
        for c in small.values():
            assert c["reason"].startswith(f"{c['n_items']} items: below min_category_items 40, so no interval")
            assert c["exact_agreement"]["ci_low"] is None and c["krippendorff_alpha_ordinal"]["ci_high"] is None
        rows = {row["category"]: row for row in category_rows(CalibrationReport.from_json(report))}
        assert rows["refactor"]["reason"] == cats["refactor"]["reason"] and rows["refactor"]["ci_low"] is None
        assert rows["feature"]["reason"] is None
        text = demo("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet")
        assert text.exit_code == 0 and "refactor" in text.output
        bad = write(demo.db.parent / "rubrics" / "policy.yaml", "min_category_items: 0\n")
        r = demo("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet")
        assert r.exit_code != 0 and "Traceback" not in r.output
        assert "policy.yaml" in r.output and "min_category_items" in r.output, r.output
        assert bad == policy
    finally:
        policy.unlink()


def test_the_demo_categories_all_get_intervals_under_the_default_policy(demo):
    r = demo("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "lenient-mini", "--json")
    report = json.loads(r.output)
    assert report["policy"]["min_category_items"] == 10
    for c in report["per_category"].values():
        assert c["n_items"] >= 30 and c["reason"] is None
        for m in METRICS:
            assert c[m]["ci_low"] < c[m]["ci_high"]


def test_the_text_report_and_the_card_say_why_a_small_category_has_no_interval(cli, tmp_path):
    """With min_category_items above a category's size, calibrate's text and the Markdown card print the reason
    where the interval would be, not 'n/a to n/a'."""
    assert cli("demo", "--no-ui").exit_code == 0
    (cli.db.parent / "rubrics" / "policy.yaml").write_text("min_category_items: 32\n")  # test-writing has 30
    text = cli("calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet").output
    line = next(x for x in text.splitlines() if x.strip().startswith("test-writing"))
    assert "no interval: 30 items: below min_category_items 32" in line and "n/a to n/a" not in text
    assert cli("report", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--format", "md",
               "--out", tmp_path / "card.md").exit_code == 0
    card = (tmp_path / "card.md").read_text()
    assert "| test-writing | 30 |" in card and "none: 30 items: below min_category_items 32" in card
