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

from dataclasses import dataclass

from workbench.calibration.rubric_versions import get_rubric
from workbench.core.errors import InputError
from workbench.core.workspace import Workspace
from workbench.features.planning.design import Design, design
from workbench.stats import planning as sp
from workbench.store import Store
from workbench.store import active_queue as q

ORDERS = ("random", "active")


@dataclass(frozen=True)
class QueueSetting:
    golden_set: str
    order: str
    design: dict | None  # rubric_name, judge_id, expected_labels, checks, created_by, created_at
    strata: list[dict]   # stratum, n_items, probability, n_labeled

    def to_dict(self) -> dict:
        return {"golden_set": self.golden_set, "order": self.order, "design": self.design, "strata": self.strata}


def queue_setting(store: Store, golden_set: str) -> QueueSetting:
    gs = store.golden_set(golden_set)
    return QueueSetting(golden_set, q.queue_order(store, gs.id), q.design(store, gs.id),
                        q.design_summary(store, gs.id))


def set_queue_order(store: Store, golden_set: str, order: str, *, rubric: str | None = None,
                    judge: str | None = None, expected_labels: int | None = None, lead: str | None = None,
                    workspace: Workspace | None = None) -> QueueSetting:
    """Switch a golden set's queue to ``random`` or ``active`` (which needs the rubric and the judge to plan for)."""
    if order not in ORDERS:
        raise InputError(f"unknown queue order '{order}'", fix="use --order active or --order random")
    gs = store.golden_set(golden_set)
    if order == "random":
        with store.transaction():
            q.set_random(store, gs.id)
        return queue_setting(store, golden_set)
    if not rubric or not judge:
        raise InputError("the active queue needs the rubric and the judge whose undecided checks it serves",
                         fix=f"add --rubric R --judge J (the judge's scores on golden set '{golden_set}' decide "
                             "the order)")
    d = _design(store, golden_set, rubric, judge, expected_labels, workspace)
    with store.transaction():
        q.save_design(store, gs.id, phase=d.phase, rubric_name=d.rubric_name, judge_id=judge,
                      expected_labels=d.expected,
                      labeled_before=d.earlier.labeled_before if d.replan else q.labeled_share(store, gs.id,
                                                                                                d.rubric_name),
                      checks=d.checks, created_by=lead, rows=d.rows)
    return queue_setting(store, golden_set)


def _design(store: Store, golden_set: str, rubric: str, judge: str, expected_labels: int | None,
            workspace: Workspace | None) -> Design:
    """The active design for the judge's undecided checks (those ``plan`` finds; with no label yet, every check and
    the search for both classes)."""
    from workbench.calibration.golden_sets import consensus
    from workbench.features.planning.plan import plan, undecided_checks

    rv = get_rubric(store, rubric)
    labeled = consensus(store, golden_set, rv.name).resolved
    checks = (undecided_checks(plan(store, golden_set, rubric, judge, workspace=workspace, forecast=False))
              if labeled else list(sp.CHECK_TARGETS + sp.COUNT_TARGETS))
    return design(store, golden_set, rubric, judge, checks, expected_labels=expected_labels)


@dataclass(frozen=True)
class NextItem:
    """An item the active queue would serve soon, and why it is drawn more (or less) often than at random."""

    item_id: str
    category: str
    probability: float
    vs_random: float  # its inclusion probability over the uniform one: 2.0 = twice as likely as a random pick
    why: str


_SERVES = {"tnr": "the TNR check needs items whose consensus is a fail, and they are found among the judge's fails",
           "tpr": "the TPR check needs items whose consensus is a pass, and they are found among the judge's passes",
           "find_fails": "too few consensus fails are labeled yet, and the judge's fails are where they are",
           "find_passes": "too few consensus passes are labeled yet, and the judge's passes are where they are",
           "self_preference": "the self-preference check compares items of the judge's own family with the others",
           "agreement": "every labeled item narrows the agreement interval"}


def next_items(store: Store, golden_set: str, rubric: str, judge: str, labels: int, *,
               workspace: Workspace | None = None) -> list[NextItem]:
    """The unlabeled items the active queue would serve first for about ``labels`` more labels, in its order
    (``u / pi``), each with the reason its stratum is drawn as often as it is. Writes nothing."""
    if labels < 1:
        return []
    d = _design(store, golden_set, rubric, judge, labels, workspace)
    uniform = d.expected / max(len(d.index), 1)
    order = sorted(range(len(d.index)), key=lambda k: d.rows[k]["priority"])
    out = []
    for k in order:
        r = d.index[k]
        if r.item_id in d.resolved:
            continue
        fails = d.judged[k] < d.pass_threshold
        serves = [c for c in d.checks if (c in ("tnr", "find_fails") and fails)
                  or (c in ("tpr", "find_passes") and not fails) or (c == "self_preference" and d.same[k])]
        if not serves and "agreement" in d.checks:
            serves = ["agreement"]
        p = d.rows[k]["probability"]
        score = d.scale.get(d.judged[k], str(d.judged[k]))
        why = (f"the judge {'fails' if fails else 'passes'} it ({score}), "
               f"{'its own' if d.same[k] else 'another'} family, category {r.category}: "
               + ("; ".join(_SERVES[c] for c in serves) or "every item keeps a chance, so the estimates stay fair"))
        out.append(NextItem(r.item_id, r.category, float(p), float(p / uniform) if uniform else 0.0, why))
        if len(out) >= labels:
            break
    return out

