"""A judgment's confidence: what selective judging keeps or abstains on."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m013_judgment_confidence(conn: Conn) -> None:
    """A judgment may carry the judge's confidence in its verdict (0..1: stated by the provider, the share of
    repeats that agree, or imported), so a threshold can decide which items the judge keeps (features/selective).
    Absent stays NULL: no confidence is never read as zero."""
    script(conn, "ALTER TABLE judgments ADD COLUMN confidence REAL "
                 "CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1))")
