"""Imports a killed process left half-landed: their hidden golden sets are removed when a store opens.

A large item import lands through a hidden set held by a lease (``staging.py``); when the lease's holder is gone,
its rows are deleted here in short transactions, so a stalled holder stops copying and no reader waits long.
"""

from __future__ import annotations

import logging
import time

from workbench.store import leases
from workbench.store.db import Connection, query, retry_busy

log = logging.getLogger(__name__)
DISCARD_ROWS = 5_000  # rows deleted per transaction
PAUSE_S = 0.2  # between two of them the lock is left free this long (staging.YIELD_S says why)


def discard_abandoned_imports(store: Connection) -> int:
    """Remove the hidden sets of imports whose process is gone; returns how many were removed."""
    removed = 0
    for row in query(store.conn, "SELECT id, importing FROM golden_sets WHERE importing IS NOT NULL"):
        holder = leases.current(store, row["importing"])
        if holder is None or leases.is_abandoned(holder):
            log.warning("discarding the rows of an interrupted import (%s)", row["importing"])
            discard(store, row["id"], row["importing"])
            removed += 1
    return removed


def discard(store: Connection, gs_id: int, key: str, *, pause_s: float = PAUSE_S) -> None:
    """Delete a hidden set in short transactions; the lease goes first, so a stalled holder stops copying."""
    def step(sql: str, params: tuple) -> int:
        def run() -> int:
            with store.transaction():
                return store.conn.execute(sql, params).rowcount
        return retry_busy(store.conn, run, what="discarding an interrupted import")

    step("DELETE FROM leases WHERE key = ?", (key,))
    while step("DELETE FROM items WHERE pk IN (SELECT pk FROM items WHERE golden_set_id = ? LIMIT ?)",
               (gs_id, DISCARD_ROWS)):
        time.sleep(pause_s)
    step("DELETE FROM golden_sets WHERE id = ? AND importing IS NOT NULL", (gs_id,))
