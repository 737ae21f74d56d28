"""A reviewer process for the last-slot race test (kept light: spawned children import only this)."""

from __future__ import annotations

from workbench.features.labeling.service import next_item
from workbench.store import Store


def claim(db: str, golden_set: str, rubric: str, rater: str, barrier) -> None:
    with Store(db) as s:
        barrier.wait()
        item = next_item(s, golden_set, rubric, rater)
        with s.transaction():
            s.conn.execute("CREATE TABLE IF NOT EXISTS claims (rater TEXT, item TEXT)")
            s.conn.execute("INSERT INTO claims VALUES (?, ?)", (rater, item.item_id if item else None))
