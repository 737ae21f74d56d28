"""Corrected pass rates whose intervals cover: simulations against a planted truth, refusals, and grade's report.

Every number checked here is planted (a judge's TPR and TNR, a true pass
rate, a task clustering) or a property, never a value the code produced.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.conftest import DEMO_DIR, write
from workbench.stats import corrected_pass_rate, ppi_mean
from workbench.stats.correction import YOUDEN_MARGIN, golden_design_effects

SIMULATIONS = 400
# The headline check: at 1,000 golden sets the Monte Carlo error of a coverage near 0.95 is about 0.007.
COVERAGE_SIMULATIONS = 1000


def _judged(rng, n, *, prevalence, tpr, tnr):
    """n items whose true label passes with probability ``prevalence``, and a judge with the given TPR and TNR."""
    human = rng.random(n) < prevalence
    judge = np.where(human, rng.random(n) < tpr, rng.random(n) > tnr)
    return human, judge


@pytest.mark.parametrize("prevalence", [0.6, 0.85])
def test_corrected_interval_covers_the_true_pass_rate(prevalence):
    # Golden sets of 100 items, a judge with TPR 0.9 and TNR 0.7, 500 new items.
    rng = np.random.default_rng(20261202)
    covered = refused = 0
    widths, raw_widths = [], []
    for i in range(COVERAGE_SIMULATIONS):
        human, judge = _judged(rng, 100, prevalence=prevalence, tpr=0.9, tnr=0.7)
        _, new = _judged(rng, 500, prevalence=prevalence, tpr=0.9, tnr=0.7)
        r = corrected_pass_rate(human, judge, new, resamples=1000, seed=i)
        if r["refused"]:
            refused += 1
            assert np.isnan(r["corrected"]["ci_low"]) and r["reason"]
            continue
        c = r["corrected"]
        covered += c["ci_low"] <= prevalence <= c["ci_high"]
        widths.append(c["ci_high"] - c["ci_low"])
        raw_widths.append(r["raw"]["ci_high"] - r["raw"]["ci_low"])
    answered = COVERAGE_SIMULATIONS - refused
    print(f"\nprevalence {prevalence}: corrected 95% interval covered the truth in {covered}/{answered} answered "
          f"golden sets ({covered / answered:.3f}); {refused} refused; counting refusals as misses "
          f"{covered / COVERAGE_SIMULATIONS:.3f}; mean width {np.mean(widths):.3f} (raw {np.mean(raw_widths):.3f})")
    assert refused <= 0.05 * COVERAGE_SIMULATIONS
    assert covered / answered >= 0.93
    # Not bought with useless width: counting the sampling variance twice covered 99-100%.
    assert covered / answered <= 0.99


def test_clustered_golden_set_covers_when_its_tasks_are_given():
    # 30 tasks of 5 items; the judge's TPR and TNR vary from task to task (beta with mean 0.9 / 0.7,
    # concentration 1.5), so items of one task err together. New items come from new tasks.
    rng = np.random.default_rng(7)
    prevalence, concentration = 0.6, 1.5
    hits = {True: 0, False: 0}
    answered = {True: 0, False: 0}
    for i in range(SIMULATIONS):
        task_tpr = rng.beta(0.9 * concentration, 0.1 * concentration, size=30)
        task_tnr = rng.beta(0.7 * concentration, 0.3 * concentration, size=30)
        task = np.repeat(np.arange(30), 5)
        human = rng.random(150) < prevalence
        judge = np.where(human, rng.random(150) < task_tpr[task], rng.random(150) > task_tnr[task])
        _, new = _judged(rng, 500, prevalence=prevalence, tpr=0.9, tnr=0.7)
        for use_tasks in (True, False):
            r = corrected_pass_rate(human, judge, new, golden_clusters=task if use_tasks else None,
                                    resamples=1000, seed=i)
            if not r["refused"]:
                answered[use_tasks] += 1
                hits[use_tasks] += r["corrected"]["ci_low"] <= prevalence <= r["corrected"]["ci_high"]
    with_tasks, without = hits[True] / answered[True], hits[False] / answered[False]
    print(f"\nclustered golden sets: coverage {with_tasks:.3f} with the tasks given ({answered[True]} answered), "
          f"{without:.3f} treating items as independent ({answered[False]} answered)")
    assert with_tasks >= 0.93
    assert without < 0.92  # the planted clustering is real: ignoring it under-covers


def test_duplicating_every_item_within_its_task_leaves_the_interval_alone():
    rng = np.random.default_rng(5)
    human, judge = _judged(rng, 120, prevalence=0.6, tpr=0.9, tnr=0.75)
    _, new = _judged(rng, 400, prevalence=0.6, tpr=0.9, tnr=0.75)
    single = corrected_pass_rate(human, judge, new, resamples=4000)
    copies = corrected_pass_rate(np.repeat(human, 5), np.repeat(judge, 5), new,
                                 golden_clusters=np.repeat(np.arange(120), 5), resamples=4000)
    assert copies["design_effect"]["tpr"] == pytest.approx(5, rel=0.03)
    assert copies["design_effect"]["tnr"] == pytest.approx(5, rel=0.03)
    for end in ("ci_low", "ci_high"):
        assert copies["corrected"][end] == pytest.approx(single["corrected"][end], abs=0.02)
    # The same numbers, for a bundle that stores them instead of the tasks.
    effects = golden_design_effects(np.repeat(human, 5), np.repeat(judge, 5), np.repeat(np.arange(120), 5))
    assert effects == copies["design_effect"]


def test_one_consensus_fail_gives_a_wide_interval_or_a_refusal():
    # 99 passing golden items (judge TPR 0.9) and a single failing one, which the judge fails: a resampling
    # bootstrap sees TNR = 1 in every resample where it is defined, and the corrected interval would be the raw one.
    human = np.array([True] * 99 + [False])
    judge = np.array([True] * 89 + [False] * 10 + [False])
    _, new = _judged(np.random.default_rng(0), 500, prevalence=0.62, tpr=0.9, tnr=0.7)
    r = corrected_pass_rate(human, judge, new, resamples=2000)
    raw_width = r["raw"]["ci_high"] - r["raw"]["ci_low"]
    assert r["youden"]["ci_low"] < 0.2 < r["youden"]["value"]  # TNR from one item could be almost anything
    if r["refused"]:
        assert "failing golden items" in r["reason"]
    else:
        assert r["corrected"]["ci_high"] - r["corrected"]["ci_low"] > 5 * raw_width
    assert r["undefined_resamples"] <= 0.025 * 2000


def test_a_judge_near_chance_is_refused_with_a_reason():
    # TPR 0.55 and TNR 0.5: J = 0.05. Golden sets of 100 items cannot show this judge is better than chance.
    rng = np.random.default_rng(11)
    refused = 0
    for i in range(200):
        human, judge = _judged(rng, 100, prevalence=0.6, tpr=0.55, tnr=0.5)
        _, new = _judged(rng, 500, prevalence=0.6, tpr=0.55, tnr=0.5)
        r = corrected_pass_rate(human, judge, new, resamples=1000, seed=i)
        if r["refused"]:
            refused += 1
            assert np.isnan(r["corrected"]["ci_low"]) and np.isnan(r["corrected"]["ci_high"])
            assert "chance" in r["reason"] or "label more" in r["reason"]
            assert r["raw"]["ci_low"] < r["raw"]["value"] < r["raw"]["ci_high"]  # the raw rate is still reported
    print(f"\njudge with TPR 0.55, TNR 0.5: refused in {refused}/200 golden sets of 100 items")
    assert refused >= 0.95 * 200
    # With 4,000 golden items J is pinned down near 0.05: refused as barely better than chance.
    human, judge = _judged(rng, 4000, prevalence=0.6, tpr=0.55, tnr=0.5)
    r = corrected_pass_rate(human, judge, new, resamples=1000)
    assert r["refused"] and r["youden"]["ci_low"] <= YOUDEN_MARGIN < r["youden"]["ci_high"]
    assert "barely better than chance" in r["reason"] and "not corrected" in r["reason"]


def test_design_effect_is_checked():
    with pytest.raises(ValueError, match="not both"):
        corrected_pass_rate([1, 0], [1, 0], [1], golden_clusters=["a", "b"], design_effect=(1, 1))
    with pytest.raises(ValueError, match="at least 1"):
        corrected_pass_rate([1, 0], [1, 0], [1], design_effect=(0.5, 1))


def test_ppi_refuses_too_few_or_one_sided_labels():
    judge_unlabeled = [1, 0, 1, 1, 0] * 20
    few = ppi_mean([1, 0, 1, 1, 0], [1, 0, 1, 0, 0], judge_unlabeled)
    assert few["refused"] and np.isnan(few["estimate"]) and np.isnan(few["ci_low"])
    assert "only 5 of the new items carry a human label" in few["reason"]
    one_sided = ppi_mean([1] * 20, [1] * 18 + [0] * 2, judge_unlabeled)
    assert one_sided["refused"] and "same label" in one_sided["reason"]
    all_labeled = ppi_mean([1, 0] * 10, [1, 0] * 10, [])
    assert all_labeled["refused"] and "every new item carries a human label" in all_labeled["reason"]
    enough = ppi_mean([1, 0, 1, 1, 0] * 4, [1, 0, 1, 0, 0] * 4, judge_unlabeled)
    assert not enough["refused"] and enough["ci_low"] < enough["estimate"] < enough["ci_high"]


@pytest.fixture
def graded_demo(cli, tmp_path):
    """The demo database with an approved careful-sonnet bundle, and 60 demo items with that judge's judgments."""
    cli("demo", "--no-ui")
    approved = tmp_path / "approved"
    assert cli("export", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--out", approved).exit_code == 0
    bundle = approved / "demo-patch-quality@v1--careful-sonnet.yaml"
    lines = (DEMO_DIR / "items.jsonl").read_text().splitlines(True)[:60]
    items = write(tmp_path / "new.jsonl", "".join(lines))
    ids = {json.loads(line)["id"] for line in lines}
    judgments = (DEMO_DIR / "demo-patch-quality" / "judgments" / "careful-sonnet.jsonl").read_text().splitlines()
    judged = write(tmp_path / "j.jsonl", "".join(line + "\n" for line in judgments
                                                 if json.loads(line)["item_id"] in ids
                                                 and json.loads(line)["repeat"] == 0))
    return bundle, items, judged


def test_cli_grade_json_carries_the_youden_index_and_the_correction(cli, graded_demo, tmp_path):
    bundle, items, judged = graded_demo
    r = cli("grade", "--bundle", bundle, "--items", items, "--judgments", judged, "--json", "--resamples", "500",
            "--out", tmp_path / "graded.jsonl")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    correction = report["correction"]
    assert correction["refused"] is False and correction["reason"] is None and report["correction_reason"] is None
    assert correction["undefined_resamples"] == 0
    assert correction["n_golden_pass"] + correction["n_golden_fail"] > 100
    # the bundle has counts, not tasks: the design effects are the ones its calibration recorded (careful-sonnet's TNR
    # is 46 of 46, a proportion without variance, so its effect is the conservative items per cluster, 46 / 41)
    recorded = yaml.safe_load(Path(bundle).read_text())["calibration"]["metrics"]
    assert correction["design_effect"] == {k: recorded[k]["design_effect"] for k in ("tpr", "tnr")}
    j = report["youden_index"]
    assert j["ci_low"] < j["value"] < j["ci_high"] and j["value"] == pytest.approx(report["tpr"] + report["tnr"] - 1)
    cor, raw = report["corrected_pass_rate"], report["raw_pass_rate"]
    assert cor["ci_low"] <= cor["value"] <= cor["ci_high"]
    assert cor["ci_high"] - cor["ci_low"] > raw["ci_high"] - raw["ci_low"]  # the golden set's uncertainty is in it


def test_cli_grade_shows_a_refused_correction_with_its_reason(cli, graded_demo, tmp_path, monkeypatch):
    # A golden set with one failing item, standing in for the bundle's confusion matrix.
    from workbench import stats
    monkeypatch.setattr(stats, "golden_pass_arrays", lambda *a, **k: (np.array([True] * 40 + [False]),
                                                                      np.array([True] * 30 + [False] * 11)))
    bundle, items, judged = graded_demo
    args = ("grade", "--bundle", bundle, "--items", items, "--judgments", judged, "--resamples", "500",
            "--out", tmp_path / "graded.jsonl")
    report = json.loads(cli(*args, "--json").stdout)
    assert report["corrected_pass_rate"] == {"value": None, "ci_low": None, "ci_high": None}
    assert report["correction"]["refused"] is True
    assert "label more failing golden items" in report["correction_reason"] == report["correction"]["reason"]
    assert report["raw_pass_rate"]["value"] is not None
    text = cli(*args).stdout
    assert "note: the judge's Youden index" in text
