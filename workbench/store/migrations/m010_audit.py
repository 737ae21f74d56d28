"""The audit log, and raters who leave without taking their labels with them."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m010_audit(conn: Conn) -> None:
    """Who did what, when: one row per change a person makes (a label, an adjudication, a rubric version, an
    approved export, a rater's role), written in the transaction of the change, so neither lands without the other.

    A removed rater keeps their row (labels reference ``raters.name``, and their labels stay theirs): ``removed_at``
    takes away their role and access; adding them again clears it.
    """
    script(conn, """
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL CHECK (length(actor) > 0),
    action TEXT NOT NULL CHECK (length(action) > 0),
    target TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
) STRICT;
CREATE INDEX audit_log_at ON audit_log(at);
ALTER TABLE raters ADD COLUMN removed_at TEXT;
""")
