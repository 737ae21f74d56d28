"""Connection set-up and transactions for the one SQLite file.

WAL so readers never block the writer, a busy timeout so concurrent writers
wait instead of failing, foreign keys on, and ``BEGIN IMMEDIATE`` for every
read-then-write transaction: a plain ``BEGIN`` takes the write lock only at the
first write, and two such transactions that read first can then lose an update.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

DEFAULT_DB = "workbench.db"
BUSY_TIMEOUT_MS = 30_000


def default_db_path() -> str:
    return os.environ.get("WORKBENCH_DB") or DEFAULT_DB


def connect(path: str | Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN IMMEDIATE/COMMIT ourselves.
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction that holds the write lock from its first statement."""
    if conn.in_transaction:  # nested use joins the outer transaction
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def as_sqlite_utils(conn: sqlite3.Connection) -> sqlite_utils.Database:
    return sqlite_utils.Database(conn)
