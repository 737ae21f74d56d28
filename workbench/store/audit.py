"""People and the audit log: raters added, removed and brought back, and who changed what, when.

Every change a person makes is recorded by :func:`record` inside the transaction of the change (the caller's
``with store.transaction():``; the insert joins it), so a change never lands without its entry, nor an entry
without its change. A removed rater keeps their row, stamped ``removed_at``: their labels reference it and stay
theirs. The SQL is the subset SQLite and Postgres share (``?`` placeholders, ``RETURNING``, ``ON CONFLICT``).
"""

from __future__ import annotations

import getpass
import os
from contextvars import ContextVar
from typing import Any, Iterable

from workbench.store.db import Connection, now
from workbench.store.mapping import from_json, to_json

ACTOR_ENV = "WORKBENCH_USER"
RATER_COLUMNS = ("name", "role", "email", "created_at", "removed_at", "n_labels")
ENTRY_COLUMNS = ("id", "at", "actor", "action", "target", "detail")
_ACTING_AS: ContextVar[str | None] = ContextVar("workbench_acting_as", default=None)


def act_as(actor: str | None) -> None:
    """The person this command line invocation acts as (``workbench --as EMAIL``); None: ask the environment."""
    _ACTING_AS.set(actor.strip() if actor and actor.strip() else None)


def who(actor: str | None = None) -> str:
    """The person a change is recorded under: ``actor`` when the caller knows it (the signed-in rater or lead),
    else the command line's ``--as``, else ``WORKBENCH_USER``, else the account running the command."""
    if actor and actor.strip():
        return actor.strip()
    if (acting := _ACTING_AS.get()) is not None:
        return acting
    env = (os.environ.get(ACTOR_ENV) or "").strip()
    if env:
        return env
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (a bare container): still someone
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def record(store: Connection, *, actor: str | None, action: str, target: str,
           detail: dict[str, Any] | None = None) -> int:
    """Write one audit entry in the caller's transaction (one of its own when there is none); returns its id.

    An actor who is a rater (by email, name or a merged name) is recorded under the rater's name, so one person is
    one actor whichever way they were named; anyone else (an OS account) as given."""
    with store.transaction():
        person = who(actor)
        rater_row = resolve(store, person)
        row = store.conn.execute(
            "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?) RETURNING id",
            (now(), rater_row["name"] if rater_row else person, action, target, to_json(detail or {}))).fetchone()
        return row[0]


def entries(store: Connection, *, since: str | None = None, actors: Iterable[str] | None = None,
            action: str | None = None) -> list[dict[str, Any]]:
    """Audit entries, oldest first, at or after ``since`` (ISO 8601 UTC text), of one person (any of the names
    ``actors`` they were recorded under) and/or one action (``label`` matches every ``label.*`` action)."""
    where, params = [], []
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    if actors is not None:
        names = sorted(set(actors))
        where.append("actor IN (" + ", ".join("?" * len(names)) + ")" if names else "1 = 0")
        params += names
    if action is not None:
        where.append("(action = ? OR action LIKE ?)")
        params += [action, action.rstrip(".") + ".%"]
    sql = "SELECT id, at, actor, action, target, detail FROM audit_log"
    rows = store.conn.execute(sql + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id",
                              params).fetchall()
    out = [dict(zip(ENTRY_COLUMNS, tuple(r))) for r in rows]
    for entry in out:
        entry.update(detail=from_json(entry.pop("detail"), {}))
    return out


# -- raters ------------------------------------------------------------------------------------------------------

def raters(store: Connection, *, include_removed: bool = False, counts: bool = False) -> list[dict[str, Any]]:
    """Raters by name with their role, email, when they were removed (None: active) and, with ``counts``, how many
    labels they hold (one pass over the labels: for listings, not for the lookups every page makes)."""
    n_labels = ("coalesce(c.n, 0)" if counts else "0")
    joined = " LEFT JOIN (SELECT rater, count(*) AS n FROM labels GROUP BY rater) c ON c.rater = r.name" if counts else ""
    rows = store.conn.execute(
        f"SELECT r.name, r.role, r.email, r.created_at, r.removed_at, {n_labels} AS n_labels FROM raters r{joined}"
        + ("" if include_removed else " WHERE r.removed_at IS NULL") + " ORDER BY r.name").fetchall()
    return [dict(zip(RATER_COLUMNS, tuple(r))) for r in rows]


def rater(store: Connection, name: str) -> dict[str, Any] | None:
    """One rater, removed or not, with the labels they hold (None when there is no such row)."""
    row = store.conn.execute(
        "SELECT r.name, r.role, r.email, r.created_at, r.removed_at, "
        "(SELECT count(*) FROM labels l WHERE l.rater = r.name) AS n_labels FROM raters r WHERE r.name = ?",
        (name,)).fetchone()
    return None if row is None else dict(zip(RATER_COLUMNS, tuple(row)))


def resolve(store: Connection, who: str) -> dict[str, Any] | None:
    """The rater, removed or not, that this text names: their email (any case), else their name, else a name that
    was merged into them (``rater_aliases``); None when it names nobody."""
    text = (who or "").strip()
    if not text:
        return None
    cols = "r.name, r.role, r.email, r.created_at, r.removed_at, 0"
    row = (store.conn.execute(f"SELECT {cols} FROM raters r WHERE r.email = ?", (text.lower(),)).fetchone()
           or store.conn.execute(f"SELECT {cols} FROM raters r WHERE r.name = ?", (text,)).fetchone()
           or store.conn.execute(f"SELECT {cols} FROM raters r JOIN rater_aliases a ON a.rater = r.name "
                                 "WHERE a.alias = ? OR a.alias = ? ORDER BY a.alias", (text, text.lower())).fetchone())
    return None if row is None else dict(zip(RATER_COLUMNS, tuple(row)))


def aliases(store: Connection, name: str) -> list[str]:
    """The names merged into this rater (what older audit entries may call them)."""
    return [r[0] for r in store.conn.execute("SELECT alias FROM rater_aliases WHERE rater = ? ORDER BY alias", (name,))]


def standing(store: Connection, name: str) -> tuple[str, str | None] | None:
    """(role, removed_at) of the rater, None when there is no such row: the lookup a save or a page makes."""
    row = store.conn.execute("SELECT role, removed_at FROM raters WHERE name = ?", (name,)).fetchone()
    return None if row is None else (row[0], row[1])


def put_rater(store: Connection, name: str, role: str, email: str | None) -> None:
    """Add the rater, or give an existing (or removed) one this role and bring them back; an email given replaces
    theirs, none keeps it."""
    with store.transaction():
        store.conn.execute(
            """INSERT INTO raters (name, role, email, created_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (name) DO UPDATE SET role = excluded.role, email = coalesce(excluded.email, raters.email),
                                                removed_at = NULL""",
            (name, role, email, now()))


def remove_rater(store: Connection, name: str) -> str:
    """Stamp the rater removed (their row and labels stay); returns the time recorded."""
    at = now()
    with store.transaction():
        store.conn.execute("UPDATE raters SET removed_at = ? WHERE name = ? AND removed_at IS NULL", (at, name))
    return at
