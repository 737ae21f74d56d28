"""The active queue's design: strata, each item's inclusion probability and its priority, for a set of checks.

Items are stratified by the judge's score, producer family (the judge's own or not) and category; each stratum gets
an inclusion probability by Neyman allocation toward the checks (``stats.planning``), never below a floor, so every
item keeps a chance; items are served in the order ``u / pi`` with a fixed uniform ``u`` per item and design phase.
``active_queue`` saves and serves a design; ``plan`` reads the one it recommends to simulate labeling in its order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.calibration.calibrate import judge_data
from workbench.calibration.design_weights import active_design
from workbench.calibration.golden_sets import RunRow, consensus, item_index
from workbench.core.errors import InputError
from workbench.stats import planning as sp
from workbench.store import Store
from workbench.store import active_queue as q

FLOOR = 0.25  # no stratum below a quarter of the uniform rate: weights at most 4x the uniform one


def unit_number(golden_set: str, item_id: str, phase: int = 1) -> float:
    """The item's uniform number in (0, 1) in a design phase: the same for every reviewer, fresh for each phase."""
    digest = hashlib.sha256(f"active\n{golden_set}\n{item_id}\n{phase}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


@dataclass(frozen=True)
class Design:
    rubric_name: str
    checks: list[str]
    expected: float
    phase: int
    replan: bool
    earlier: Any
    rows: list[dict]      # item_pk, stratum, probability, priority: what save_design stores
    index: list[Any]      # the golden set's items, in the rows' order
    judged: list[int]     # the judge's score per item (its middle score where it scored none)
    same: list[bool]      # the item's producer is of the judge's family
    pass_threshold: int
    resolved: dict[str, int]  # items with a consensus label already
    scale: dict[int, str]     # score -> its label on the rubric's scale


def design(store: Store, golden_set: str, rubric: str, judge: str, checks: list[str], *,
           expected_labels: int | None = None) -> Design:
    """The active design (strata, inclusion probabilities, priorities) toward ``checks`` (``stats.planning``'s
    names: agreement, tpr, tnr, self_preference, find_fails, find_passes)."""
    gs = store.golden_set(golden_set)

    data = judge_data(store, golden_set, rubric, judge)
    rv = data.rubric
    index = item_index(store, gs.id)
    scores = first_scores(data)
    unscored = [r.item_id for r in index if r.item_id not in scores]
    if len(unscored) == len(index):
        raise InputError(f"judge '{judge}' has scored no item of golden set '{golden_set}'",
                         fix="run or import the judge on the golden set first")
    cons = consensus(store, golden_set, rv.name)
    pairs = [(i, scores[i], s) for i, s in cons.resolved.items() if i in scores]
    scale = list(rv.rubric.scale.values)
    family = (data.spec.family or "").casefold()
    # items the judge did not score get its middle score: they stay in the design, with a fair chance
    middle = scale[len(scale) // 2]
    judged = np.array([scores.get(r.item_id, middle) for r in index])
    same = np.array([(r.producer_family or "").casefold() == family and bool(family) for r in index])
    group = {r.item_id: f"{f}|{r.category}" for r, f in zip(index, same)}
    # P(human | judge score) in each family x category group: a judge may err more on one of them
    cond = sp.human_given_judge_by_group([j for _, j, _ in pairs], [h for _, _, h in pairs],
                                         [group[i] for i, _, _ in pairs], item_judge=judged,
                                         item_group=[group[r.item_id] for r in index], scale=scale)
    dev = sp.stratum_deviations(judged, same, cond, scale=scale, pass_threshold=rv.rubric.pass_threshold,
                                checks=checks, by_item=True)
    strata = [f"judge {s:+d} | {'own family' if f else 'other family'} | {r.category}"
              for s, f, r in zip(judged, same, index)]
    expected = float(min(len(index), expected_labels or max(len(index) / 4, 1)))
    pi = sp.neyman_inclusion(strata, dev, expected_labels=expected, floor=FLOOR)
    earlier = active_design(store, gs.id)
    # the same rubric and judge again: a re-plan, a new phase; else a fresh design whose first phase is what
    # was labeled before it
    replan = bool(earlier and earlier.rubric_name == rv.name and earlier.judge_id == judge)
    phase = earlier.phase + 1 if replan else 1
    rows = [{"item_pk": r.pk, "stratum": h, "probability": float(p),
             "priority": float(unit_number(golden_set, r.item_id, phase) / p)}
            for r, h, p in zip(index, strata, pi)]
    return Design(rv.name, checks, expected, phase, replan, earlier, rows, index, [int(x) for x in judged],
                   [bool(x) for x in same], rv.rubric.pass_threshold, cons.resolved,
                   {lv.value: lv.label for lv in rv.rubric.scale.levels})


def first_scores(data: Any) -> dict[str, int]:
    """item_id -> the judge's score in its current run (repeat 0), for the items it scored."""
    frame = data.judgments
    first = frame[(frame["run_id"] == RunRow(**data.run).id) & (frame["repeat"] == 0)].dropna(subset=["score"])
    return {i: int(s) for i, s in zip(first["item_id"], first["score"])}


@dataclass(frozen=True)
class DesignedOrder:
    """The active queue as the plan recommends it: per item of the golden set, its stratum, inclusion probability
    and priority (served lowest first), and the share of items labeled before it."""

    item_ids: list[str]
    stratum: list[str]
    probability: np.ndarray
    priority: np.ndarray
    labeled_before: float


def recommended_order(store: Store, golden_set: str, rubric: str, judge: str, checks: list[str]) -> DesignedOrder:
    """The design ``golden-set queue --order active`` would make now for ``checks`` (a re-plan when the queue is
    already active for this rubric and judge). Writes nothing."""
    d = design(store, golden_set, rubric, judge, checks)
    gs = store.golden_set(golden_set)
    before = d.earlier.labeled_before if d.replan else q.labeled_share(store, gs.id, d.rubric_name)
    stratum, probability, priority = zip(*((row["stratum"], row["probability"], row["priority"]) for row in d.rows))
    return DesignedOrder([r.item_id for r in d.index], list(stratum), np.array(probability), np.array(priority),
                         float(before))
