"""A Postgres connection that the store's queries use as they use an ``sqlite3.Connection``.

The store's SQL is written once, in the subset SQLite and Postgres share (``RETURNING``, ``ON CONFLICT``, ``IS
DISTINCT FROM``, ``coalesce(sum(...), 0)``); this module only changes what the two drivers spell differently:

- placeholders: ``?`` and ``:name`` become ``%s`` and ``%(name)s`` (and a literal ``%`` becomes ``%%``);
- ``BEGIN IMMEDIATE`` becomes ``BEGIN`` plus the workspace's write lock, a transaction-level advisory lock: every
  read-then-write of the store was written for SQLite's one writer at a time, and keeps that guarantee here
  (readers never wait; runners sharing a judge run claim items through ``run_claims`` in such transactions);
- rows read by position and by name, like ``sqlite3.Row``; integer sums (Postgres' ``numeric``) read as ``int``
  and other numerics as ``float``, as SQLite returns them; a Python ``bool`` is written as 0/1;
- errors come out as the ``sqlite3`` exception classes the callers already handle (a constraint or trigger
  refusal is an ``IntegrityError``; a lock or serialisation conflict an ``OperationalError`` that says "busy", so
  ``retry_busy`` tries again), with the driver's error chained.

Text columns are made with ``COLLATE "C"`` (``migrations.postgres_ddl``) so that ordering and comparison are
SQLite's byte order whatever the server's locale: the same workspace lists, sorts and samples the same way.
"""

from __future__ import annotations

import re
import sqlite3
from functools import lru_cache
from typing import Any, Iterator, Mapping, Sequence

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Dumper, Loader
from psycopg.pq import TransactionStatus

from workbench.core.errors import InputError
from workbench.store.engines.urls import shown

WRITE_LOCK = 0x77726974  # pg_advisory_xact_lock key of the workspace's write lock: 'writ'
CONNECT_TIMEOUT_S = 10
_BUSY = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, pg_errors.LockNotAvailable,
         pg_errors.QueryCanceled)


class Row(tuple):
    """A row readable by position and by column name, and convertible with ``dict(row)``."""

    __slots__ = ()
    names: tuple[str, ...] = ()

    def keys(self) -> tuple[str, ...]:
        return self.names

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self.names.index(key))
            except ValueError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)


def _row_factory(cursor: psycopg.Cursor) -> Any:
    names = tuple(d.name for d in cursor.description or ())
    cls = type("Row", (Row,), {"__slots__": (), "names": names})
    return lambda values: cls(values)


class _Numeric(Loader):
    """``numeric`` as SQLite gives it: a whole number (an integer sum) as int, anything else as float."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode()
        return int(text) if text.lstrip("-").isdigit() else float(text)


class _BoolAsInt(Dumper):
    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: bool) -> bytes:
        return b"1" if obj else b"0"


@lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """SQLite's placeholders in psycopg's words, outside quoted strings and names.

    >>> translate("SELECT * FROM t WHERE a = ? AND b LIKE '%?%' AND c = :name AND d::text = '1'")
    "SELECT * FROM t WHERE a = %s AND b LIKE '%%?%%' AND c = %(name)s AND d::text = '1'"
    """
    if re.match(r"\s*BEGIN\s+IMMEDIATE\s*;?\s*$", sql, re.I):
        return "BEGIN"
    out, i, n = [], 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"":
            j = sql.index(ch, i + 1) if ch in sql[i + 1:] else n - 1
            while j + 1 < n and sql[j + 1] == ch:  # a doubled quote inside the string
                j = sql.index(ch, j + 2)
            out.append(sql[i:j + 1].replace("%", "%%"))
            i = j + 1
            continue
        if ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        elif ch == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_") and (i == 0 or sql[i - 1] != ":"):
            m = re.match(r"[A-Za-z_]\w*", sql[i + 1:])
            out.append(f"%({m.group(0)})s")
            i += 1 + m.end()
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _as_sqlite_error(exc: psycopg.Error) -> sqlite3.Error:
    text = (exc.diag.message_primary if exc.diag and exc.diag.message_primary else str(exc)).strip()
    if isinstance(exc, _BUSY):
        return sqlite3.OperationalError(f"database is busy ({text})")
    if isinstance(exc, (psycopg.IntegrityError, pg_errors.RaiseException)):
        return sqlite3.IntegrityError(text)
    if isinstance(exc, psycopg.OperationalError):
        return sqlite3.OperationalError(text)
    return sqlite3.DatabaseError(text)


class Cursor:
    """The part of ``sqlite3.Cursor`` the store reads: rows, ``rowcount``, ``description``."""

    def __init__(self, connection: "PostgresConnection", tuples: bool = False):
        self._connection = connection
        self._cur = connection.raw.cursor(row_factory=psycopg.rows.tuple_row if tuples else _row_factory)

    @property
    def row_factory(self) -> None:
        return None

    @row_factory.setter
    def row_factory(self, value: Any) -> None:  # ``cursor.row_factory = None``: plain tuples, as sqlite3 does
        if value is None:
            self._cur.row_factory = psycopg.rows.tuple_row

    def execute(self, sql: str, params: Sequence | Mapping = ()) -> "Cursor":
        self._connection._run(self._cur, sql, params)
        return self

    def executemany(self, sql: str, rows: Any) -> "Cursor":
        self._connection._run_many(self._cur, sql, rows)
        return self

    def fetchone(self) -> Any:
        return self._cur.fetchone() if self._cur.description else None

    def fetchall(self) -> list:
        return self._cur.fetchall() if self._cur.description else []

    def fetchmany(self, size: int = 1000) -> list:
        return self._cur.fetchmany(size) if self._cur.description else []

    def __iter__(self) -> Iterator:
        return iter(self.fetchall())

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def description(self) -> Any:
        return self._cur.description

    def close(self) -> None:
        self._cur.close()


class PostgresConnection:
    """One autocommit connection on which the store issues BEGIN/COMMIT itself, as it does on SQLite."""

    dialect = "postgres"

    def __init__(self, url: str):
        self.url = url
        try:
            self.raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                       application_name="judge-workbench")
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot open the Postgres database {shown(url)}: {shown(reason)}",
                             fix="check that the server is running and the URL's host, port, user and database; "
                                 "a password goes in PGPASSWORD or ~/.pgpass") from None
        self.raw.adapters.register_loader("numeric", _Numeric)
        self.raw.adapters.register_dumper(bool, _BoolAsInt)
        self.total_changes = 0  # rows written through this connection, as sqlite3 counts them

    # -- sqlite3.Connection's surface ------------------------------------
    def execute(self, sql: str, params: Sequence | Mapping = ()) -> Cursor:
        return Cursor(self).execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> Cursor:
        return Cursor(self).executemany(sql, rows)

    def cursor(self) -> Cursor:
        return Cursor(self)

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def commit(self) -> None:
        """DB-API's commit: ends an open transaction (the store's own are ended by its COMMIT statements)."""
        if self.in_transaction:
            self.execute("COMMIT")

    def close(self) -> None:
        self.raw.close()

    # -- running ----------------------------------------------------------
    def _run(self, cur: psycopg.Cursor, sql: str, params: Sequence | Mapping) -> None:
        immediate = re.match(r"\s*BEGIN\s+IMMEDIATE\b", sql, re.I) is not None
        try:
            if params:
                cur.execute(translate(sql), params)
            else:  # without parameters psycopg leaves '%' alone
                cur.execute("BEGIN" if immediate else sql)
            if immediate:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        except psycopg.Error as exc:
            raise _as_sqlite_error(exc) from exc
        if cur.rowcount > 0 and cur.statusmessage and cur.statusmessage.split()[0] in ("INSERT", "UPDATE", "DELETE"):
            self.total_changes += cur.rowcount

    def _run_many(self, cur: psycopg.Cursor, sql: str, rows: Any) -> None:
        rows = list(rows)
        if not rows:
            return
        try:
            cur.executemany(translate(sql), rows, returning=False)
        except psycopg.Error as exc:
            raise _as_sqlite_error(exc) from exc
        if cur.rowcount > 0:
            self.total_changes += cur.rowcount
