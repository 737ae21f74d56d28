"""One identity per person: duplicate raters merged, emails unique and lower-case, merged names kept as aliases."""

from __future__ import annotations

import re

from workbench.store.db import now
from workbench.store.mapping import to_json
from workbench.store.migrations import Conn, migration, script

MIGRATION_ACTOR = "workbench migration m014"
# The same rule as core.names.EMAIL, copied so that this migration never changes.
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")


@migration
def m014_one_identity(conn: Conn) -> None:
    """Before issue 45 a person could be two raters: ``rater add alice@example.com`` made 'alice', and a labels file
    naming "alice@example.com" made a second rater of that name. Raters that share an email (any case), or whose
    name is another rater's email, are merged into one: the one given the email by ``rater add``/``rater set``
    (the oldest when several were), whose role and removal stand. The others' labels, flags and adjudications move
    to it (where both labeled the same item under one rubric, the later label is kept, as if changed), their names
    become aliases that still resolve to it, and each merge is one ``rater.merged`` audit entry. ``label_events``
    and the audit log are history and keep the names they were written under.

    Then every email is lower-case and unique, and a rater named by an email without one gets it as their email.
    """
    script(conn, """
CREATE TABLE rater_aliases (
    alias TEXT PRIMARY KEY CHECK (length(alias) > 0),
    rater TEXT NOT NULL REFERENCES raters(name),
    merged_at TEXT NOT NULL
) STRICT;
""")
    rows = conn.execute("SELECT name, email, created_at FROM raters ORDER BY created_at, name").fetchall()
    for survivor, merged in _duplicates([(r[0], r[1], r[2]) for r in rows]):
        for name in merged:
            _merge(conn, name, survivor)
    conn.execute("UPDATE raters SET email = lower(email) WHERE email IS NOT NULL AND email <> lower(email)")
    taken = {r[0] for r in conn.execute("SELECT email FROM raters WHERE email IS NOT NULL")}
    for (name,) in conn.execute("SELECT name FROM raters WHERE email IS NULL ORDER BY name").fetchall():
        if _EMAIL.fullmatch(name) and name.lower() not in taken:
            conn.execute("UPDATE raters SET email = ? WHERE name = ?", (name.lower(), name))
            taken.add(name.lower())
    script(conn, "CREATE UNIQUE INDEX raters_email ON raters(email)")


def _duplicates(rows: list[tuple[str, str | None, str]]) -> list[tuple[str, list[str]]]:
    """(survivor, [merged names]) for each person held by more than one row (rows: name, email, created_at, oldest
    first). Rows are one person when they share an email, or one's name is the other's email (case aside).

    >>> _duplicates([("alice", "alice@example.com", "1"), ("alice@example.com", None, "2"), ("bob", None, "3")])
    [('alice', ['alice@example.com'])]
    """
    parent = {name: name for name, _, _ in rows}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    holder: dict[str, str] = {}  # lower-case email -> the first row that holds it
    for name, email, _ in rows:
        if email:
            first = holder.setdefault(email.lower(), name)
            parent[root(name)] = root(first)
    for name, _, _ in rows:
        if (first := holder.get(name.lower())) is not None:
            parent[root(name)] = root(first)
    groups: dict[str, list[tuple[str, str | None, str]]] = {}
    for row in rows:
        groups.setdefault(root(row[0]), []).append(row)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        # the row an admin gave the email wins; rows keep their oldest-first order among equals
        survivor = min(members, key=lambda r: (r[1] is None, r[2], r[0]))[0]
        out.append((survivor, [r[0] for r in members if r[0] != survivor]))
    return out


def _merge(conn: Conn, name: str, into: str) -> None:
    """Move everything of rater ``name`` to ``into``, keep ``name`` as an alias, and record what moved."""
    dropped = 0
    for mine, mine_at, theirs, theirs_at in conn.execute(
            """SELECT m.id, m.updated_at, s.id, s.updated_at FROM labels m
               JOIN labels s ON s.item_pk = m.item_pk AND s.rubric_name = m.rubric_name AND s.rater = ?
               WHERE m.rater = ?""", (into, name)).fetchall():
        conn.execute("DELETE FROM labels WHERE id = ?", (theirs if mine_at > theirs_at else mine,))
        dropped += 1
    moved = conn.execute("SELECT count(*) FROM labels WHERE rater = ?", (name,)).fetchone()[0]
    conn.execute("UPDATE labels SET rater = ? WHERE rater = ?", (into, name))
    conn.execute("UPDATE flags SET rater = ? WHERE rater = ?", (into, name))
    conn.execute("DELETE FROM reservations WHERE rater = ?", (name,))  # a hold of minutes: the queue makes a new one
    conn.execute("UPDATE adjudications SET lead = ? WHERE lead = ?", (into, name))
    conn.execute("UPDATE refine_rounds SET decided_by = ? WHERE decided_by = ?", (into, name))
    conn.execute("UPDATE active_designs SET created_by = ? WHERE created_by = ?", (into, name))
    role, email, removed_at = conn.execute("SELECT role, email, removed_at FROM raters WHERE name = ?",
                                           (name,)).fetchone()
    conn.execute("DELETE FROM raters WHERE name = ?", (name,))
    at = now()
    conn.execute("INSERT INTO rater_aliases (alias, rater, merged_at) VALUES (?, ?, ?)", (name, into, at))
    conn.execute("INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)",
                 (at, MIGRATION_ACTOR, "rater.merged", into,
                  to_json({"merged": name, "merged_role": role, "merged_email": email,
                           "merged_removed_at": removed_at, "labels_moved": moved,
                           "older_labels_dropped": dropped})))
