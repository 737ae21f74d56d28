"""The active labeling queue: a lead's per-golden-set choice of which items reviewers are served next.

``random`` (the default) is each reviewer's own random order. ``active``
stratifies the items by the judge's score, category and producer family and
gives each an inclusion probability by Neyman allocation toward the gate
checks that are still undecided (``stats.planning``), never below a floor, so
every item keeps a chance. Items are served in the order ``u / pi`` (``u`` a
fixed uniform number per item): wherever labeling stops, the labeled items
are a sample with probabilities proportional to ``pi``, and each label records
its item's ``pi`` for the inverse-probability weights of calibration.

The queue only orders the items; the overlap, reservations and adjudication
rules are those of the Label page, and nothing of the judge reaches a reviewer:
the order is decided here, on the server, and a reviewer receives the blind
item only.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError
from ..stats import planning as sp
from ..store import Store
from ..store import active_queue as q
from ..workspace import Workspace

ORDERS = ("random", "active")
FLOOR = 0.25  # no stratum below a quarter of the uniform rate: weights at most 4x the uniform one


@dataclass(frozen=True)
class QueueSetting:
    golden_set: str
    order: str
    design: dict | None  # rubric_name, judge_id, expected_labels, checks, created_by, created_at
    strata: list[dict]   # stratum, n_items, probability, n_labeled

    def to_dict(self) -> dict:
        return {"golden_set": self.golden_set, "order": self.order, "design": self.design, "strata": self.strata}


def unit_number(golden_set: str, item_id: str, phase: int = 1) -> float:
    """The item's uniform number in (0, 1) in a design phase: the same for every reviewer, fresh for each phase."""
    digest = hashlib.sha256(f"active\n{golden_set}\n{item_id}\n{phase}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def queue_setting(store: Store, golden_set: str) -> QueueSetting:
    gs = store.golden_set(golden_set)
    return QueueSetting(golden_set, q.queue_order(store, gs["id"]), q.design(store, gs["id"]),
                        q.design_summary(store, gs["id"]))


def set_queue_order(store: Store, golden_set: str, order: str, *, rubric: str | None = None,
                    judge: str | None = None, expected_labels: int | None = None, lead: str | None = None,
                    workspace: Workspace | None = None) -> QueueSetting:
    """Switch a golden set's queue to ``random`` or ``active`` (which needs the rubric and the judge to plan for)."""
    if order not in ORDERS:
        raise InputError(f"unknown queue order '{order}'", fix="use --order active or --order random")
    gs = store.golden_set(golden_set)
    if order == "random":
        with store.transaction():
            q.set_random(store, gs["id"])
        return queue_setting(store, golden_set)
    if not rubric or not judge:
        raise InputError("the active queue needs the rubric and the judge whose undecided checks it serves",
                         fix=f"add --rubric R --judge J (the judge's scores on golden set '{golden_set}' decide "
                             "the order)")
    from .calibration import judge_data
    from .golden_sets import consensus
    from .planning import plan, undecided_checks

    data = judge_data(store, golden_set, rubric, judge)
    rv = data.rubric
    index = store.item_index(gs["id"])
    frame = data.judgments
    first = frame[(frame["run_id"] == data.run["id"]) & (frame["repeat"] == 0)].dropna(subset=["score"])
    scores = {i: int(s) for i, s in zip(first["item_id"], first["score"])}
    unscored = [r["item_id"] for r in index if r["item_id"] not in scores]
    if len(unscored) == len(index):
        raise InputError(f"judge '{judge}' has scored no item of golden set '{golden_set}'",
                         fix="run or import the judge on the golden set first")
    cons = consensus(store, golden_set, rv.name)
    pairs = [(i, scores[i], s) for i, s in cons.resolved.items() if i in scores]
    # with no labels yet every check is open, and the rarer class is still to be found
    checks = (undecided_checks(plan(store, golden_set, rubric, judge, workspace=workspace)) if pairs
              else list(sp.CHECK_TARGETS + sp.COUNT_TARGETS))
    scale = list(rv.rubric.scale.values)
    family = (data.spec.family or "").casefold()
    # items the judge did not score get its middle score: they stay in the design, with a fair chance
    middle = scale[len(scale) // 2]
    judged = np.array([scores.get(r["item_id"], middle) for r in index])
    same = np.array([(r["producer_family"] or "").casefold() == family and bool(family) for r in index])
    group = {r["item_id"]: f"{f}|{r['category']}" for r, f in zip(index, same)}
    # P(human | judge score) in each family x category group: a judge may err more on one of them
    cond = sp.human_given_judge_by_group([j for _, j, _ in pairs], [h for _, _, h in pairs],
                                         [group[i] for i, _, _ in pairs], item_judge=judged,
                                         item_group=[group[r["item_id"]] for r in index], scale=scale)
    dev = sp.stratum_deviations(judged, same, cond, scale=scale, pass_threshold=rv.rubric.pass_threshold,
                                checks=checks, by_item=True)
    strata = [f"judge {s:+d} | {'own family' if f else 'other family'} | {r['category']}"
              for s, f, r in zip(judged, same, index)]
    expected = float(min(len(index), expected_labels or max(len(index) / 4, 1)))
    pi = sp.neyman_inclusion(strata, dev, expected_labels=expected, floor=FLOOR)
    earlier = q.design(store, gs["id"])
    # the same rubric and judge again: a re-plan, a new phase; else a fresh design whose first phase is what
    # was labeled before it
    replan = bool(earlier and earlier["rubric_name"] == rv.name and earlier["judge_id"] == judge)
    phase = earlier["phase"] + 1 if replan else 1
    pks = store.item_pks(gs["id"])
    rows = [{"item_pk": pks[r["item_id"]], "stratum": h, "probability": float(p),
             "priority": float(unit_number(golden_set, r["item_id"], phase) / p)}
            for r, h, p in zip(index, strata, pi)]
    with store.transaction():
        q.save_design(store, gs["id"], phase=phase, rubric_name=rv.name, judge_id=judge, expected_labels=expected,
                      labeled_before=earlier["labeled_before"] if replan else q.labeled_share(store, gs["id"], rv.name),
                      checks=checks, created_by=lead, rows=rows)
    return queue_setting(store, golden_set)


def order_key(store: Store, gs: dict) -> Callable[[str, str], bytes] | None:
    """The queue order of an active golden set (None: random order), as the labeling queue's sort key.

    Every reviewer gets the same order, lowest ``u / pi`` first; items added after the design come last.
    """
    if q.queue_order(store, gs["id"]) != "active":
        return None
    priority = q.priorities(store, gs["id"])
    inf = float("inf")
    return lambda rater, item_id: struct.pack(">d", priority.get(item_id, inf)) + item_id.encode()


def record_served(store: Store, gs: dict, item_pk: int, rubric_name: str, rater: str) -> None:
    """Record the item's inclusion probability on the label just saved, if the set's queue is active."""
    if q.queue_order(store, gs["id"]) != "active":
        return
    current = q.inclusion_probability(store, gs["id"], item_pk)
    if current is not None:
        phase, p = current
        q.record_inclusion(store, [{"item_pk": item_pk, "rater": rater, "rubric_name": rubric_name,
                                    "inclusion_probability": p}])
        q.record_served(store, item_pk, rubric_name, phase)


# -- estimates that describe the whole golden set -------------------------------------

def item_inclusion(store: Store, gs: dict, rubric_name: str) -> dict[str, float]:
    """item_id -> inclusion probability, when any label of the set came from the active queue (else empty).

    With the design in this database the probability is exact for its phases: a share ``f0`` of the items
    was labeled (in random order) before the queue went active, and each design phase served its items up to
    the priority ``s_p``, so ``pi = 1 - (1 - f0) prod_p (1 - min(1, s_p rate_p))``
    (:func:`workbench.stats.label_simulation.phased_inclusion`). Labels imported without the design keep the
    probabilities they recorded, which a ratio estimator needs only up to a common factor.
    """
    from ..stats.label_simulation import phased_inclusion

    by_label = q.label_inclusion(store, gs["id"], rubric_name)
    if not by_label:
        return {}
    ids = list(store.item_pks(gs["id"]))
    d = q.design(store, gs["id"])
    thresholds = q.served_thresholds(store, gs["id"], rubric_name) if d and d["rubric_name"] == rubric_name else {}
    if not thresholds:  # no design here (the labels were imported): what they recorded
        recorded: dict[str, float] = {}
        for (item_id, _), p in by_label.items():
            recorded[item_id] = min(p, recorded.get(item_id, 1.0))
        fallback = max(recorded.values())
        return {i: recorded.get(i, fallback) for i in ids}
    rates = q.phase_rates(store, gs["id"])
    phases = [(np.array([rates[p].get(i, 1.0) for i in ids]), s) for p, s in sorted(thresholds.items())]
    pi = phased_inclusion(float(d["labeled_before"]), phases)
    return dict(zip(ids, pi.tolist()))


def weighted_estimates(ids: list[str], c: np.ndarray, j: np.ndarray, sub, inclusion: dict[str, float], *,
                       spec, scale: list[int], pass_threshold: int, resamples: int, seed: int, labels, scored,
                       epsilon: float, alt_metric: str) -> tuple[dict, dict, dict, dict]:
    """(agreement, self-preference, alt-test, sampling design) with inverse-probability weights, for the report."""
    import pandas as pd

    from ..stats import alternative_annotator_test, weighted

    w = weighted.inverse_probability_weights([inclusion[i] for i in ids]) if ids else np.zeros(0)
    clusters = sub["task_id"].to_numpy()
    agreement = weighted.weighted_agreement_with_intervals(c, j, clusters, w, scale=scale,
                                                           pass_threshold=pass_threshold, resamples=resamples,
                                                           seed=seed)
    bias = weighted.weighted_self_preference(c, j, w, scale=scale, producer_model=sub["producer_model"].to_numpy(),
                                             producer_family=sub["producer_family"].to_numpy(),
                                             judge_model=spec.model_name, judge_family=spec.family,
                                             clusters=clusters, resamples=resamples, seed=seed)
    alt = alternative_annotator_test(labels, scored, scale=scale, epsilon=epsilon, metric=alt_metric,
                                     weights=1.0 / pd.Series(inclusion, dtype=float))
    design = {"design": "active", "estimator": "Hajek ratio, weights 1 / inclusion probability",
              "interval": weighted.INTERVAL, "kish_effective_n": agreement["design"]["kish_effective_n"],
              "weighted": ["metrics", "self_preference", "alt_test", "human_ceiling.human_pairwise_agreement",
                           "human_ceiling.judge_human_pairwise_agreement"],
              "unweighted": ["human_ceiling.krippendorff_alpha_ordinal", "per_category", "noise", "drift"]}
    return agreement, bias, alt, design
