"""A digest of a SQLite workspace's rows, to show that a refused input changed nothing (the sweep, the properties)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path


def db_content(db: Path) -> str | None:
    """A digest of every table's rows (None when there is no database)."""
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:  # not a database at all (a case about --db itself): its bytes
        conn.close()
        return hashlib.sha256(db.read_bytes()).hexdigest()
    try:
        h = hashlib.sha256()
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for t in tables:
            rows = sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{t}"'))
            h.update(f"{t}:{len(rows)}\n".encode())
            for r in rows:
                h.update(r.encode())
        return h.hexdigest()
    finally:
        conn.close()
