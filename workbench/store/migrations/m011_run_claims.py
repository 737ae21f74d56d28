"""Claims of a shared judge run: which runner asks for which (item, repeat)."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m011_run_claims(conn: Conn) -> None:
    """Several ``judge run`` processes (on one or several machines) share one run: each (item content, repeat) is
    claimed before its request is sent, so each judgment is requested once.

    ``token`` is the claiming runner's lease token (its ``leases`` row ``run:<id>:runner:<token>`` holds the pid,
    host and heartbeat that say whether it is alive). ``done`` is set in the transaction that stores the judgment,
    so a stored judgment is never claimed again; a claim whose runner died before storing it is taken over
    (``takeovers`` counts how often, an upper bound on the requests paid twice).
    """
    script(conn, """
CREATE TABLE run_claims (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    content_hash TEXT NOT NULL CHECK (length(content_hash) > 0),
    repeat INTEGER NOT NULL CHECK (repeat >= 0),
    token TEXT NOT NULL CHECK (length(token) > 0),
    claimed_at TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    takeovers INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, content_hash, repeat)
) STRICT;
CREATE INDEX run_claims_token ON run_claims(run_id, token);
""")
