"""Failure attribution's statistics (workbench/stats/steps.py): baselines against a hand computation on three shared
Who&When runs, and planted judges on all 155 runs whose intervals cover the planted values at their nominal rate."""

from __future__ import annotations

import numpy as np
import pytest

from tests.steps.shared import needs_data, runs
from workbench.features.steps.who_and_when import step_agent
from validation.who_and_when_steps import early_blamer, planted
from workbench.stats.steps import agent_key, attribution, human_vs_human

pytestmark = needs_data


def shared():
    data = runs()
    files = list(data)
    h = np.array([int(data[f]["mistake_step"]) for f in files])
    n = np.array([len(data[f]["history"]) for f in files])
    clusters = np.array([str(data[f]["question_ID"]) for f in files])
    agents = [[step_agent(s) for s in data[f]["history"]] for f in files]
    people = [data[f]["mistake_agent"] for f in files]
    return files, h, n, clusters, agents, people


def test_baselines_match_a_hand_computation_on_three_runs():
    files, h, n, clusters, agents, people = shared()
    # AG/1: step 0 of 6 (Excel_Expert; the last step is DataVerification_Expert's); AG/10: step 5 of 10
    # (Validation_Expert, 7 of the 10 steps, the last one too); HC/1: step 12 of 29 (WebSurfer: 7 of 29, the last)
    pick = [files.index(f) for f in ("Algorithm-Generated/1.json", "Algorithm-Generated/10.json", "Hand-Crafted/1.json")]
    assert h[pick].tolist() == [0, 5, 12] and n[pick].tolist() == [6, 10, 29]
    res = attribution(h[pick], h[pick], n[pick], clusters[pick], human_agent=[people[i] for i in pick],
                      step_agents=[agents[i] for i in pick], resamples=200)
    b = res["groups"]["all"]["baselines"]
    hand = {
        ("random", "exact"): (1 / 6 + 1 / 10 + 1 / 29) / 3,
        ("random", "within_1"): (2 / 6 + 3 / 10 + 3 / 29) / 3,
        ("random", "within_3"): (4 / 6 + 7 / 10 + 7 / 29) / 3,
        ("random", "agent"): (1 / 6 + 7 / 10 + 7 / 29) / 3,
        ("random", "offset"): (2.5 - 0.5 + 2.0) / 3,
        ("last_step", "exact"): 0.0, ("last_step", "within_1"): 0.0, ("last_step", "within_3"): 0.0,
        ("last_step", "agent"): 2 / 3, ("last_step", "offset"): (5 + 4 + 16) / 3,
    }
    for (base, metric), value in hand.items():
        assert b[base][metric]["value"] == pytest.approx(value, abs=1e-12), (base, metric)
    # the judge is exactly right here: it beats both baselines on every hit rate's point value
    assert res["groups"]["all"]["judge"]["exact"]["value"] == 1.0
    assert res["groups"]["short"]["n_items"] == 2 and res["groups"]["long"]["n_items"] == 1


def test_agent_names_compare_as_people_write_them():
    assert agent_key("Websurfer") == agent_key("WebSurfer") == agent_key("Web Surfer")
    assert agent_key("Orchestrator (thought)") == agent_key("Orchestrator")
    assert agent_key("Orchestrator (-> WebSurfer)") != agent_key("WebSurfer")


SIMS = 200
NOMINAL = 0.95
FLOOR = NOMINAL - 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / SIMS)  # 0.904: the nominal rate less three standard errors


@pytest.mark.slow
def test_planted_judges_intervals_cover_the_planted_values_at_their_nominal_rate():
    files, h, n, clusters, agents, people = shared()
    rng = np.random.default_rng(46)
    groups = {"all": np.ones(len(h), bool), "short": n <= 10, "long": n > 10}
    covered = {(g, m): 0 for g in groups for m in ("exact", "within_1", "within_3", "agent", "offset")}
    early_below_zero = 0
    for sim in range(SIMS):
        j, agent_right, truth = planted(h, n, clusters, rng)
        judge_agent = [p if ok else "Someone_Else" for p, ok in zip(people, agent_right)]
        res = attribution(h, j, n, clusters, human_agent=people, judge_agent=judge_agent, step_agents=agents,
                          resamples=400, seed=sim)
        early, offset_truth = early_blamer(h, clusters, rng)
        off = attribution(h, early, n, clusters, resamples=400, seed=sim)
        for g, mask in groups.items():
            for m in ("exact", "within_1", "within_3", "agent"):
                iv = res["groups"][g]["judge"][m]
                covered[(g, m)] += iv["ci_low"] <= truth[m][mask].mean() <= iv["ci_high"]
            iv = off["groups"][g]["judge"]["offset"]
            covered[(g, "offset")] += iv["ci_low"] <= offset_truth[mask].mean() <= iv["ci_high"]
        early_below_zero += off["groups"]["all"]["judge"]["offset"]["ci_high"] < 0
    rates = {k: v / SIMS for k, v in covered.items()}
    assert min(rates.values()) >= FLOOR, rates
    assert early_below_zero / SIMS >= 0.95  # the early blamer is told apart: its offset interval lies below 0


def test_a_planted_judge_beats_the_random_baseline_and_the_last_step_judge_does_not_beat_itself():
    files, h, n, clusters, agents, people = shared()
    rng = np.random.default_rng(7)
    hit = rng.random(len(h)) < 0.45
    j = np.where(hit, h, n - 1)
    res = attribution(h, j, n, clusters, human_agent=people, step_agents=agents, resamples=1000)
    beats = res["groups"]["all"]["beats"]
    assert beats["random"]["exact"]["beats"] and beats["random"]["exact"]["ci_low"] > 0
    last = attribution(h, n - 1, n, clusters, human_agent=people, step_agents=agents, resamples=1000)
    same = last["groups"]["all"]["beats"]["last_step"]["exact"]
    assert same["value"] == 0 and not same["beats"]


def test_people_against_people():
    steps = [[3, 3], [2, 5], [0, 1, 0], [4]]
    agents = [["A", "a"], ["A", "B"], ["X", "X", "Y"], ["Z"]]
    res = human_vs_human(steps, ["t1", "t2", "t3", "t4"], agents_by_item=agents, n_steps=[5, 8, 30, 6], resamples=200)
    m = res["groups"]["all"]["metrics"]
    assert res["groups"]["all"]["n_items"] == 3  # one reviewer's step alone is no comparison
    assert m["exact"]["value"] == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert m["within_1"]["value"] == pytest.approx((1 + 0 + 1) / 3)
    assert m["within_3"]["value"] == pytest.approx(1.0)
    assert m["agent"]["value"] == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert res["groups"]["long"]["n_items"] == 1 and res["groups"]["short"]["n_items"] == 2
