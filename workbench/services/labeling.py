"""Reviewer labeling: saving one label at a time, safely under concurrency.

A save is one upsert by (item, rater, rubric) inside BEGIN IMMEDIATE, so a
double click, a rerun or two tabs give one label, and every change is kept in
label_events by the database's own triggers.
"""

from __future__ import annotations

from ..errors import InputError
from ..store import Store
from .rubrics import get_rubric


def save_label(store: Store, golden_set: str, rubric: str, item_id: str, rater: str, score: int,
               rationale: str | None = None) -> bool:
    """Insert or change this rater's label of the item; returns True when something changed."""
    rv = get_rubric(store, rubric)
    if score not in rv.rubric.scale:
        raise InputError(f"score {score} is not on the scale of rubric '{rv.name}' {rv.rubric.scale.describe()}",
                         fix="use one of the scale's values")
    rater = rater.strip()
    if not rater:
        raise InputError("the rater name is empty", fix="pick or type a rater name")
    with store.transaction():
        gs = store.golden_set(golden_set)
        item = store.item(gs["id"], item_id)
        store.ensure_raters([rater])
        n = store.count_label_events()
        store.upsert_labels([{"item_pk": item["pk"], "rater": rater, "rubric_name": rv.name, "rubric_id": rv.id,
                              "score": score, "rationale": (rationale or "").strip() or None}])
        return store.count_label_events() > n
