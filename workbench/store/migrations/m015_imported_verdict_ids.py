"""The tool's own id of each imported verdict: a later export of the same project lands only what is new."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m015_imported_verdict_ids(conn: Conn) -> None:
    """An imported verdict keeps the id the tool gave it (a Langfuse score id, an MLflow assessment id, a Phoenix
    annotation id), unique per judge and tool, beside the judgment it became (run, item, repeat). A run is named by
    what it holds, so a fresh export holding old verdicts beside new ones would otherwise land the old ones again in
    a new run: the import skips ids already here. Verdicts imported before this migration have no row."""
    script(conn, """
CREATE TABLE imported_verdicts (
    id INTEGER PRIMARY KEY,
    judge_pk INTEGER NOT NULL REFERENCES judges(pk),
    source TEXT NOT NULL CHECK (length(source) > 0),
    source_id TEXT NOT NULL CHECK (length(source_id) > 0),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    repeat INTEGER NOT NULL CHECK (repeat >= 0),
    UNIQUE (judge_pk, source, source_id)
) STRICT;
""")
