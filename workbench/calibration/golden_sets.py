"""Golden sets: listing and showing them, their items, consensus labels and a lead's adjudication.

Importing into a golden set is ``services/importing.py``; its frozen versions
and its export to files are ``services/snapshots.py``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from workbench.core.consensus import consensus_label
from workbench.core.errors import NotFound
from workbench.core.models import GoldenSetRecord, Item
from workbench.store import Store
from workbench.calibration.rubric_versions import get_rubric


def load_items(store: Store, golden_set: str) -> list[Item]:
    return store.items(store.golden_set(golden_set).id)


def item_pk(store: Store, gs: GoldenSetRecord, item_id: str) -> int:
    """The row id of the golden set's item (``gs``: its row), which labels and adjudications point to."""
    pk = store.item_pk(gs.id, item_id)
    if pk is None:
        raise NotFound(f"golden set '{gs.name}' has no item '{item_id}'")
    return pk


def adjudicate(store: Store, golden_set: str, rubric: str, item_id: str, score: int, *, lead: str,
               note: str | None = None) -> None:
    """A lead's final label for an item; it overrides the raters' majority."""
    rv = get_rubric(store, rubric)
    rv.require_on_scale(score)
    with store.transaction():
        pk = item_pk(store, store.golden_set(golden_set), item_id)
        store.upsert_adjudications([{"item_pk": pk, "rubric_name": rv.name, "rubric_id": rv.id,
                                     "score": score, "note": note, "lead": lead, "created_at": None}])


# -- consensus -----------------------------------------------------------------

@dataclass(frozen=True)
class Consensus:
    """Per item: the consensus score (None = unresolved) and the raw human labels."""

    labels: dict[str, int | None]
    human: dict[str, dict[str, int]]  # item_id -> rater -> score
    adjudicated: dict[str, int]

    @property
    def unresolved(self) -> list[str]:
        return [i for i, s in self.labels.items() if s is None]

    @property
    def resolved(self) -> dict[str, int]:
        return {i: s for i, s in self.labels.items() if s is not None}


def consensus(store: Store, golden_set: str, rubric: str, *, gs: GoldenSetRecord | None = None) -> Consensus:
    """Consensus of every labeled (or adjudicated) item of the golden set under a rubric.

    ``gs`` is the golden set's row when the caller has looked it up already.
    """
    gs = gs or store.golden_set(golden_set)
    human: dict[str, dict[str, int]] = defaultdict(dict)
    for item_id, rater, score in store.label_scores(gs.id, rubric):
        human[item_id][rater] = score
    adjudicated = {r["item_id"]: r["score"] for r in store.adjudications(gs.id, rubric)}
    ids = list(human) + [i for i in adjudicated if i not in human]
    labels = {i: consensus_label(human.get(i, {}).values(), adjudicated.get(i)) for i in ids}
    return Consensus(labels, dict(human), adjudicated)


def list_golden_sets(store: Store) -> list[dict]:
    return store.golden_sets()


def show_golden_set(store: Store, golden_set: str) -> dict:
    gs = store.golden_set(golden_set)
    items = store.item_index(gs.id)
    categories: dict[str, int] = defaultdict(int)
    families: dict[str, int] = defaultdict(int)
    for r in items:
        categories[r["category"]] += 1
        families[r["producer_family"] or "unknown"] += 1
    rubrics = {}
    for rubric in store.label_rubrics(gs.id):
        c = consensus(store, golden_set, rubric)
        per_item = [len(v) for v in c.human.values()]
        rubrics[rubric] = {"labeled_items": len(c.human), "labels": sum(per_item),
                           "raters": len({r for v in c.human.values() for r in v}),
                           "with_2_or_more": sum(n >= 2 for n in per_item),
                           "resolved": len(c.resolved), "unresolved": len(c.unresolved),
                           "adjudicated": len(c.adjudicated)}
    runs = [{"rubric": r["rubric_name"], "rubric_version": r["rubric_version"], "judge": r["judge_id"],
             "run": r["name"], "source": r["source"], "judgments": r["n_judgments"], "status": r["status"]}
            for r in store.runs(gs.id)]
    return {"name": golden_set, "synthetic_demo": bool(gs.is_demo), "overlap": gs.overlap, "items": len(items),
            "categories": dict(categories), "producer_families": dict(families), "rubrics": rubrics, "runs": runs,
            "versions": store.golden_set_versions(gs.id)}
