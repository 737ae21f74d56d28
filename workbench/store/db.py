"""Connection set-up and transactions for the one SQLite file.

WAL so readers never block the writer, a busy timeout so concurrent writers
wait instead of failing, foreign keys on, and ``BEGIN IMMEDIATE`` for every
read-then-write transaction: a plain ``BEGIN`` takes the write lock only at the
first write, and two such transactions that read first can then lose an update.

Long work never holds the write lock for long: writers that must not fail (a
judge run's verdicts, heartbeats) go through ``retry_busy``, which outlasts a
busy database with backoff instead of giving up after the busy timeout.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence, TypeVar

from workbench.core.errors import WorkbenchError
from workbench.store.engines.urls import parse_target

if TYPE_CHECKING:  # sqlite_utils imports pandas (0.4 s): only the callers of as_sqlite_utils pay for it
    import sqlite_utils

DEFAULT_DB = "workbench.db"  # in the workspace (workbench/core/workspace.py)
BUSY_TIMEOUT_MS = 30_000
RETRY_PATIENCE_S = 600.0  # how long retry_busy outlasts a locked database before it gives up

log = logging.getLogger(__name__)
T = TypeVar("T")


Params = Sequence | Mapping


def now() -> str:
    """The timestamp every row records: UTC, ISO 8601, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def query(conn: sqlite3.Connection, sql: str, params: Params = ()) -> list[dict]:
    """Run a read and return its rows as dicts: how the query modules of ``workbench/store/`` read.

    Only modules of this package run SQL; everything above them calls their
    functions (or ``Store`` methods) and receives rows or domain objects.
    """
    return [dict(r) for r in conn.execute(sql, params)]


def query_one(conn: sqlite3.Connection, sql: str, params: Params = ()) -> dict | None:
    """The first row of a read as a dict, or None when there is none."""
    row = conn.execute(sql, params).fetchone()
    return dict(row) if row else None


def default_db_path() -> str:
    """WORKBENCH_DB, else workbench.db in the workspace (WORKBENCH_PROJECT, else the working directory)."""
    from workbench.core.workspace import Workspace
    return str(Workspace.resolve().db)


def busy_timeout_ms() -> int:
    """The busy timeout of new connections; ``WORKBENCH_BUSY_TIMEOUT_MS`` overrides it (tests shorten it)."""
    return int(os.environ.get("WORKBENCH_BUSY_TIMEOUT_MS") or BUSY_TIMEOUT_MS)


def foreign_tables(path: str | Path) -> list[str] | None:
    """The tables of an existing SQLite file that has tables but no ``_migrations`` (another application's database,
    which migrating would fill with the workbench's tables), else None. Read-only: the file is not touched (not even
    its journal mode) before it is known to be the workbench's."""
    path = Path(path)
    if str(path) == ":memory:" or not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None  # not a database, or locked: connect() below says what it is
    return sorted(names) if names and "_migrations" not in names else None


def connect(path: str | Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN IMMEDIATE/COMMIT ourselves.
    timeout_ms = busy_timeout_ms()
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=timeout_ms / 1000, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    if str(path) != ":memory:":
        # on a brand-new file, another connection switching it at the same moment makes SQLite answer "database is
        # locked" at once, without its busy handler (the switch takes an exclusive lock): retried like a write
        retry_busy(conn, lambda: conn.execute("PRAGMA journal_mode=WAL"), what=f"opening {path}",
                   patience_s=timeout_ms / 1000)
    conn.execute(f"PRAGMA busy_timeout={timeout_ms}")
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


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's 'database is locked' / 'database is busy': the write lock is taken, try again."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def retry_busy(conn: sqlite3.Connection, write: Callable[[], T], *, what: str,
               patience_s: float = RETRY_PATIENCE_S, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``write`` (one transaction on ``conn``) until it gets through a busy database.

    Each attempt waits the connection's busy timeout; after that the write is
    tried again with exponential backoff (0.05 s doubling to 2 s, with jitter),
    for up to ``patience_s`` seconds, then the last error is raised.
    """
    deadline = time.monotonic() + patience_s
    delay, attempts = 0.05, 0
    while True:
        try:
            return write()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
            if conn.in_transaction:  # a COMMIT that failed leaves the transaction open
                conn.execute("ROLLBACK")
            attempts += 1
            if attempts == 1 or attempts % 10 == 0:
                log.warning("%s: the database is busy (%s); retrying", what, exc)
            sleep(delay * (0.5 + random.random()))
            delay = min(2.0, delay * 2)


def as_sqlite_utils(conn: sqlite3.Connection) -> sqlite_utils.Database:
    import sqlite_utils

    return sqlite_utils.Database(conn)


class Connection:
    """One open connection (SQLite, or Postgres through ``engines/postgres.py``) and its transactions: what the
    store's query modules need of a ``Store``.

    ``Store`` adds the workbench's queries on top; a heartbeat thread opens a bare ``Connection`` of its own.
    """

    def __init__(self, path: str | Path):
        target = parse_target(str(path))
        self.path = target.location  # a file path or a Postgres URL (which never holds a password)
        self.dialect = target.kind  # 'sqlite' or 'postgres'
        if target.is_postgres:
            from workbench.store.engines.postgres import PostgresConnection  # psycopg only when asked for

            self.conn = PostgresConnection(self.path)
        else:
            self.conn = connect(self.path)

    def close(self) -> None:
        self.conn.close()

    #: the writes put off while a read snapshot is open (:meth:`read_snapshot`): None when none is open
    _deferred: list[Callable[[], None]] | None = None

    @contextmanager
    def transaction(self) -> Iterator["Connection"]:
        """BEGIN IMMEDIATE ... COMMIT; nested calls join the outer transaction."""
        if self._deferred is not None:
            raise WorkbenchError("a write inside a read snapshot: a command writes after its reads (the snapshot "
                                 "ends first), so that what it read is one state of the database")
        with immediate(self.conn):
            yield self

    @contextmanager
    def read_snapshot(self) -> Iterator["Connection"]:
        """One read transaction: every read inside sees the database as it was at the first one, whatever other
        connections write meanwhile (SQLite's WAL snapshot; Postgres' REPEATABLE READ). A command's report is then
        one state, never labels of one moment beside a consensus of another.

        Nothing is written inside: writes that may wait (``defer``: the report cache) run once the snapshot ends,
        and any other write is refused. Nested calls join the outer snapshot.
        """
        if self._deferred is not None:
            yield self
            return
        if self.conn.in_transaction:
            raise WorkbenchError("a read snapshot opened inside a write transaction")
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ" if self.dialect == "postgres" else "BEGIN")
        self.conn.execute("SELECT count(*) FROM _migrations").fetchone()  # the snapshot is taken at the first read
        self._deferred = []
        try:
            yield self
        finally:
            deferred, self._deferred = self._deferred, None
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")  # nothing was written: ending it is all
        for write in deferred:
            write()

    def defer(self, write: Callable[[], None]) -> None:
        """Run ``write`` now, or when the read snapshot open on this connection ends."""
        if self._deferred is not None:
            self._deferred.append(write)
        else:
            write()

    def retrying(self, write: Callable[[], T], *, what: str) -> T:
        """Run ``write`` (one transaction) until it gets through a busy database: for writes that must not fail."""
        return retry_busy(self.conn, write, what=what)
