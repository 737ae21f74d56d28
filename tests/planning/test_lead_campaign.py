"""A lead's campaign through the product, random queue against active queue.

A pool of 1,000 unlabeled items with the judge's scores (the demo generator's model: 10% fails, a planted judge)
is imported into a real SQLite file. Two reviewers take turns on the Label page's queue (the labeling service) and
answer as the generator's reviewers do (right 93% and 90% of the time, else one step off), each answer fixed per
reviewer and item so that both orders meet the same answers. After 50 items with a consensus, and every 10 after,
the lead reads `workbench plan` (its report computed as `calibrate` does) and stops when it has no undecided gate
check or one decided against the judge; with the active queue the lead switches before the first label and re-plans when the plan advises it. The
verdict each order reaches must be the one the whole pool gives, and the active queue must get there with fewer
labels.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from workbench.features.demo.generator import (DATA_DIR, SimRater, _adjacent, simulate_items, simulate_judge,
    with_effects)
from workbench.calibration.gate import evaluate
from workbench.features.planning import active_queue
from workbench.features.importing import service as importing
from workbench.features.labeling import service as labeling
from workbench.calibration.calibrate import Options, calibrate, policy_for
from workbench.calibration.golden_sets import consensus
from workbench.features.planning.plan import plan
from workbench.calibration.rubric_versions import add_rubric, get_rubric
from workbench.store import Store

pytestmark = pytest.mark.slow

RUBRIC = "demo-patch-quality"
OPTIONS = Options(resamples=200)
REVIEWERS = (SimRater("ana", 0.93), SimRater("ben", 0.9, harshness=0.2))


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pool(tmp_path: Path, prefix: str, db: str, *, n_items: int = 1000, fail_share: float = 0.1,
          judge_family: str = "openai", self_preference: float = 0.0) -> tuple[Store, dict[str, int]]:
    rest = 1 - fail_share
    cfg = replace(with_effects(n_items=n_items, seed=11, error=0.08, self_preference=self_preference),
                  true_distribution=(fail_share, rest * 0.7, rest * 0.3))
    rng = random.Random(11)
    items = simulate_items(cfg, rng)
    judged = {r["item_id"]: r["score"] for r in simulate_judge(cfg.judges[0], items, rng)
              if r["run"] == 0 and r["repeat"] == 0}
    store = Store(tmp_path / f"{db}-{prefix}.db")
    rubric = yaml.safe_load((DATA_DIR / "rubrics" / f"{RUBRIC}.yaml").read_text())
    rubric["judges"] = [{"id": "sim", "model": "openai/gpt-4o", "family": judge_family}]
    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(rubric))
    add_rubric(store, tmp_path / "rubric.yaml")
    importing.import_items(store, _jsonl(tmp_path / f"{prefix}-items.jsonl", [
        {"id": f"{prefix}-{it.id}", "task_id": it.task_id, "category": it.category, "input": f"task {it.task_id}",
         "output": f"patch {it.id}", "producer": {"model": it.producer_model, "family": it.producer_family}}
        for it in items]), "pool")
    importing.import_judgments(store, _jsonl(tmp_path / f"{prefix}-judge.jsonl", [
        {"item_id": f"{prefix}-{i}", "score": s} for i, s in judged.items()]), "pool", RUBRIC, "sim")
    return store, {f"{prefix}-{it.id}": it.truth for it in items}


def _answer(reviewer: SimRater, item_id: str, truth: int) -> int:
    rng = random.Random(f"{reviewer.name}:{item_id}")
    return truth if rng.random() < reviewer.accuracy else _adjacent(rng, truth, reviewer.harshness)


def _verdict(store: Store, report) -> bool:
    return evaluate(report, policy_for(get_rubric(store, RUBRIC))).calibrated


def _campaign(store: Store, truth: dict[str, int], order: str) -> tuple[int, bool]:
    """Labels given until the plan has no undecided check, and the gate's verdict then."""
    if order == "active":
        active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="sim")
    given, look = 0, 50
    while True:
        for reviewer in REVIEWERS:
            item = labeling.next_item(store, "pool", RUBRIC, reviewer.name)
            assert item is not None, "the pool ran out before the plan was done"
            labeling.submit_label(store, "pool", RUBRIC, item.item_id, reviewer.name,
                                  _answer(reviewer, item.item_id, truth[item.item_id]), rationale="read the patch")
            given += 1
        if len(consensus(store, "pool", RUBRIC).resolved) < look:
            continue
        report = calibrate(store, "pool", RUBRIC, "sim", OPTIONS)
        # the lead's stopping rule reads the gate's states and the queue advice; the ranges are not simulated
        # at every look (400 futures each, minutes over a campaign; the ranges are validated in test_plan_honesty)
        p = plan(store, "pool", RUBRIC, "sim", report=report, forecast=False)
        if not p.undecided or p.decided_failures:  # every check decided, or one decided against the judge
            return given, _verdict(store, report)
        if p.queue_advice:  # the lead re-plans as the plan advises
            active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="sim")
        look += 10


def test_the_active_queue_reaches_the_pools_verdict_with_fewer_labels(tmp_path: Path) -> None:
    runs: dict[str, list[int]] = {"random": [], "active": []}
    for prefix in ("a", "b", "c"):  # three pools: item ids, and so both queue orders and the answers, differ
        store, truth = _pool(tmp_path, prefix, "whole")
        rows = [{"item_id": i, "rater": r.name, "score": _answer(r, i, t), "rationale": "read the patch"}
                for i, t in truth.items() for r in REVIEWERS]
        importing.import_labels(store, _jsonl(tmp_path / f"{prefix}-all.jsonl", rows), "pool", RUBRIC)
        whole = _verdict(store, calibrate(store, "pool", RUBRIC, "sim", OPTIONS))
        for order in runs:
            store, truth = _pool(tmp_path, prefix, order)
            given, verdict = _campaign(store, truth, order)
            assert verdict == whole, (order, prefix, given)
            runs[order].append(given)
    # measured: random 472 / 384 / 1,098 labels, active 246 / 852 / 262 (30% fewer in all); one campaign per pool
    # varies a lot (over ten such pools 37% fewer in all, from -122% to 76% on one pool; README), so the test
    # holds 15%, not the 30%
    assert sum(runs["active"]) <= 0.85 * sum(runs["random"]), runs
