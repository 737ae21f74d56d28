"""The plan's predictive ranges (issue 48): the simulation against exact answers on small cases, and the gate's
verdict on a real store built from a simulated future.

* The futures' posterior predictive: on one stratum of singleton clusters, a future's share of fails is
  ``D_f + D_0 f / K`` with ``(D_f, D_other, D_0) ~ Dirichlet(k, n - k, alpha)``: its mean and variance exactly.
* The paths, looks and first decided look: a check decided by a count (the 10th consensus fail) on a known pool in
  random order is decided at the first look past the 10th fail's position, whose distribution is the negative
  hypergeometric: every look's probability exactly.
* Through ``plan`` itself: a perfect judge whose TNR waits only for the policy's count of consensus fails; the
  judge's fails in the pool are known, so the items to a decision follow that same distribution.
* The simulated state of a check on a simulated future equals the state ``calibrate`` and the gate give on a real
  store holding that future's labels, at the look that decides it and at the look before.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats as scipy_stats

from workbench.calibration.calibrate import Options, calibrate
from workbench.calibration.rubric_versions import add_rubric
from workbench.core.workspace import Workspace
from workbench.features.demo.generator import DATA_DIR
from workbench.features.importing import service as importing
from workbench.features.planning import forecast as fc
from workbench.features.planning.plan import plan
from workbench.stats.planning import OPEN, PASS, threshold_states
from workbench.stats.plans.futures import draw_donors
from workbench.stats.plans.paths import LookSums, first_decided, looks, predictive_range, random_positions
from workbench.store import Store

RUBRIC = "demo-patch-quality"


def test_a_futures_share_of_fails_has_the_dirichlet_mixtures_mean_and_variance():
    """k = 12 fails of n = 40 labeled items (singleton clusters, one stratum), prior weight 1 on a uniform draw of
    the 3-point scale (one fail value): a future's probability of a fail is D_f + D_0 / 3, (D_f, D_o, D_0) ~
    Dirichlet(12, 28, 1). 4,000 futures of 2,000 items: mean within 4 standard errors, variance within 12%."""
    n, k, alpha, paths, items = 40, 12, 1.0, 4000, 2000
    stratum = np.zeros(n, dtype=int)
    d = draw_donors([stratum], [np.zeros(items, dtype=int)], np.arange(n), n_values=3, paths=paths, seed=5,
                    prior_items=alpha)
    human = np.r_[np.zeros(k, dtype=int), np.full(n - k, 2)]  # position 0 fails; 2 passes
    fail = np.where(d.index >= 0, human[np.maximum(d.index, 0)] == 0, d.prior_value == 0)
    share = fail.mean(axis=1)
    a0 = n + alpha
    a = np.array([k, n - k, alpha])
    mean = (k + alpha / 3) / a0
    cov = (np.diag(a) * a0 - np.outer(a, a)) / (a0**2 * (a0 + 1))
    c = np.array([1.0, 0.0, 1 / 3])
    var = c @ cov @ c + (mean * (1 - mean) - c @ cov @ c) / items  # the path's probability, then its items' draws
    assert abs(share.mean() - mean) < 4 * np.sqrt(var / paths), (share.mean(), mean)
    assert abs(share.var() / var - 1) < 0.12, (share.var(), var)


def test_a_count_check_in_random_order_is_decided_as_the_negative_hypergeometric_says():
    """A pool of 300 items holds 30 fails; the check is decided once 10 are labeled. Over 20,000 random orders the
    share decided by each look equals P(Hypergeometric(300, 30, look) >= 10) within 0.015 (3.5 standard errors at
    most), and the predictive range's median and 10%/90% ends are the looks where that probability crosses."""
    pool, fails, need, paths = 300, 30, 10, 20_000
    marks = looks(100, pool)
    rng = np.random.default_rng(7)
    position = random_positions(paths, pool, rng)
    is_fail = np.r_[np.ones(fails), np.zeros(pool - fails)]
    counted = LookSums(position, marks).add(np.broadcast_to(is_fail, (paths, pool)))[:, :, 0]
    states = np.where(counted >= need, PASS, OPEN)
    look, state = first_decided(states)
    assert (state == PASS).all()
    items = np.concatenate([[0], marks])[look]
    exact = scipy_stats.hypergeom(pool, fails, marks).sf(need - 1)  # P(10 or more fails among the first m)
    simulated = np.array([(items <= m).mean() for m in marks])
    assert np.abs(simulated - exact).max() < 0.015, np.abs(simulated - exact).max()
    r = predictive_range(items)
    for q, got in ((0.5, r.median), (0.1, r.low), (0.9, r.high)):
        assert got == marks[np.searchsorted(exact, q)] or abs(exact[np.searchsorted(marks, got)] - q) < 0.015, (q, got)


def _perfect_judge_store(tmp_path: Path, *, labeled_fails: int = 50, labeled_passes: int = 150, pool_fails: int = 30,
                         pool_passes: int = 270) -> tuple[Store, Workspace]:
    """A golden set of singleton tasks, one reviewer an item, and a judge that agrees with every label: TPR, TNR
    and agreement are 1, and TNR waits only for the policy's 60 consensus fails (50 labeled)."""
    folder = tmp_path / "ws"
    (folder / "rubrics").mkdir(parents=True)
    ws = Workspace(folder, folder / "workbench.db")
    ws.policy_file.write_text(yaml.safe_dump({"min_class_items": 60, "min_multi_rated_share": 0.0}))
    store = Store(ws.db)
    rubric = yaml.safe_load((DATA_DIR / "rubrics" / f"{RUBRIC}.yaml").read_text())
    rubric["judges"] = [{"id": "perfect", "model": "openai/gpt-4o", "family": "openai"}]
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(rubric))
    add_rubric(store, tmp_path / "r.yaml")
    truth = {f"f{k}": -1 for k in range(labeled_fails + pool_fails)}
    truth.update({f"p{k}": 1 for k in range(labeled_passes + pool_passes)})
    labeled = [f"f{k}" for k in range(labeled_fails)] + [f"p{k}" for k in range(labeled_passes)]

    def jsonl(name: str, rows: list[dict]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path

    store.ensure_golden_set("perfect", overlap=1)  # one reviewer an item: no second opinions are due
    importing.import_items(store, jsonl("items.jsonl", [
        {"id": i, "task_id": i, "category": "one", "input": f"task {i}", "output": f"answer {i}",
         "producer": {"model": "m", "family": "other"}} for i in truth]), "perfect")
    importing.import_judgments(store, jsonl("j.jsonl", [{"item_id": i, "score": s} for i, s in truth.items()]),
                               "perfect", RUBRIC, "perfect")
    importing.import_labels(store, jsonl("l.jsonl", [{"item_id": i, "rater": "ana", "score": truth[i]}
                                                      for i in labeled]), "perfect", RUBRIC)
    return store, ws


def test_plan_gives_the_perfect_judges_count_check_its_exact_range(tmp_path: Path) -> None:
    """TNR needs 10 more consensus fails, and the pool's 300 unlabeled items hold 30 the judge fails: in random order
    the items to a decision are the negative hypergeometric's look. The plan's median and 80% range of items are
    those looks, one look off at most (400 futures: a quantile's level is uncertain by about 2.5 points; and a
    future can draw a non-fail for a judge's fail from the prior, with weight 1 against 50 labeled fails); its
    labels are its items (one reviewer an item), and the pool decides it in every future."""
    store, ws = _perfect_judge_store(tmp_path)
    p = plan(store, "perfect", RUBRIC, "perfect", workspace=ws)
    pass_fail = next(c for c in p.checks if c.check == "pass_fail")
    assert pass_fail.state == "undecided" and "TNR cannot be judged yet: 50 items" in pass_fail.reason
    got = pass_fail.random.items
    marks = looks(200, p.n_unlabeled)
    exact = scipy_stats.hypergeom(300, 30, marks).sf(9)
    for q, value in ((0.5, got.median), (0.1, got.low), (0.9, got.high)):
        expected = int(np.searchsorted(exact, q))
        assert abs(int(np.searchsorted(marks, value)) - expected) <= 1, (q, value, marks[expected])
    assert pass_fail.random.labels == pass_fail.random.items
    assert pass_fail.random.pool_decides == 1.0 and not pass_fail.pool_cannot_decide
    assert "80% range" in pass_fail.sentence and "in 100% of simulated futures" in pass_fail.sentence


def _future_rows(labels_now: list[dict], sim, arrays, path: int, upto: int) -> list[dict]:
    """The labels now, and the first ``upto`` future items of future ``path`` (in its random order), each labeled
    as its donor was."""
    position = sim.looks["runs"]["random"].position[path]
    donors = sim.looks["donors"].index[path]
    rows = list(labels_now)
    for f in np.flatnonzero(position < upto):
        donor = arrays.labeled_ids[donors[f]]
        rows += [{"item_id": arrays.pool_ids[f], "rater": r["rater"], "score": r["score"]} for r in labels_now
                 if r["item_id"] == donor]
    return rows


@pytest.mark.slow
def test_the_simulated_decision_is_the_gates_verdict_on_a_real_store_of_that_future(tmp_path: Path) -> None:
    """On the perfect judge's golden set (singleton tasks: the report's TPR and TNR intervals are Wilson's with no
    design effect, as the simulation computes them), for three simulated futures: a real store holding the
    future's labels up to the look the simulation says decides 'passes and fails' gets that state from calibrate's
    gate, and the store up to the look before gets 'undecided'."""
    from workbench.calibration.calibrate import judge_data, policy_for
    from workbench.calibration.golden_sets import consensus, item_index
    from workbench.features.planning.design import first_scores

    store, ws = _perfect_judge_store(tmp_path)
    data = judge_data(store, "perfect", RUBRIC, "perfect")
    report = calibrate(store, "perfect", RUBRIC, "perfect", Options(resamples=300), workspace=ws)
    cons = consensus(store, "perfect", RUBRIC)
    index = {r.item_id: r for r in item_index(store, store.golden_set("perfect").id)}
    arrays = fc.arrays_from(scale=[-1, 0, 1], pass_threshold=0, overlap=1, index=index, scores=first_scores(data),
                            human=cons.human, consensus=cons.labels, judge_model="gpt-4o", judge_family="openai")
    sim = fc.simulate(arrays, report, report.verdict, policy_for(data.rubric, ws), paths=40, seed=3, keep=True)
    marks = np.concatenate([[0], sim.looks["marks"]])
    states = sim.looks["runs"]["random"].states["pass_fail"]
    position = sim.looks["runs"]["random"].position
    labels_now = [{"item_id": i, "rater": r, "score": s} for i, by in cons.human.items() for r, s in by.items()]
    checked = 0
    for path in range(40):
        look, state = (int(x[0]) for x in first_decided(states[path:path + 1]))
        served = position[path] < marks[min(look, len(marks) - 1)]
        if state == OPEN or (sim.looks["donors"].index[path][served] < 0).any():
            continue  # undecided in the horizon, or a label drawn from the prior: no labeled item to copy
        for at, expected in ((look, {PASS: "passed", 0: "failed"}[state]), (look - 1, "undecided")):
            folder = tmp_path / f"path-{path}-{at}"
            folder.mkdir()
            copy = Store(folder / "wb.db")
            add_rubric(copy, tmp_path / "r.yaml")
            copy.ensure_golden_set("perfect", overlap=1)
            importing.import_items(copy, tmp_path / "items.jsonl", "perfect")
            importing.import_judgments(copy, tmp_path / "j.jsonl", "perfect", RUBRIC, "perfect")
            (folder / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in
                                                    _future_rows(labels_now, sim, arrays, path, int(marks[at]))))
            importing.import_labels(copy, folder / "l.jsonl", "perfect", RUBRIC)
            got = calibrate(copy, "perfect", RUBRIC, "perfect", Options(resamples=300), workspace=ws)
            gate = next(c for c in got.verdict.checks if c.id == "pass_fail")
            assert gate.status == expected, (path, at, gate.reason)
            copy.close()
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_the_interval_rule_on_arrays_is_the_gates_on_each_estimate():
    """threshold_states is the rule threshold_decision (the gate's) applies, on every entry of an array."""
    from workbench.stats.planning import threshold_decision

    rng = np.random.default_rng(2)
    value = rng.normal(0.6, 0.1, 500)
    low, high = value - rng.uniform(0, 0.2, 500), value + rng.uniform(0, 0.2, 500)
    states = threshold_states(value, low, high, 0.6)
    mapped = {True: PASS, False: 0, None: OPEN}
    assert [mapped[threshold_decision(v, lo, hi, 0.6)] for v, lo, hi in zip(value, low, high)] == states.tolist()
