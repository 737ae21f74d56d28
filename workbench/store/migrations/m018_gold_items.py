"""Gold items: adjudicated items a lead mixes into reviewers' queues, unannounced, to measure each reviewer."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m018_gold_items(conn: Conn) -> None:
    """``gold_items`` marks an item gold under a rubric (its answer is the item's adjudication, read when used, so
    a corrected adjudication corrects the gold); ``gold_rates`` is the share of a reviewer's turns that serve one."""
    script(conn, """
CREATE TABLE gold_items (
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rubric_name TEXT NOT NULL CHECK (length(rubric_name) > 0),
    marked_by TEXT,
    marked_at TEXT NOT NULL,
    PRIMARY KEY (item_pk, rubric_name)
) STRICT;
CREATE TABLE gold_rates (
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    rubric_name TEXT NOT NULL CHECK (length(rubric_name) > 0),
    rate REAL NOT NULL CHECK (rate >= 0 AND rate <= 1),
    PRIMARY KEY (golden_set_id, rubric_name)
) STRICT;
""")
