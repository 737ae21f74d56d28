"""Assignments: a lead gives a golden set (or a share of it) to named reviewers."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m019_assignments(conn: Conn) -> None:
    """Once a golden set has an assignment under a rubric, only its assigned reviewers are served its items there,
    each up to their share of the items; a golden set without one serves everyone, as before."""
    script(conn, """
CREATE TABLE assignments (
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    rubric_name TEXT NOT NULL CHECK (length(rubric_name) > 0),
    rater TEXT NOT NULL CHECK (length(rater) > 0),
    share REAL NOT NULL CHECK (share > 0 AND share <= 1),
    assigned_by TEXT,
    assigned_at TEXT NOT NULL,
    PRIMARY KEY (golden_set_id, rubric_name, rater)
) STRICT;
""")
