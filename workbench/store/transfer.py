"""Moving and keeping a workspace: copy it between SQLite and Postgres, back it up, restore it.

A copy reads the whole source in one snapshot (a read transaction on SQLite's WAL, ``REPEATABLE READ`` on
Postgres), so a backup taken while reviewers and runners write is consistent: every table as of one moment. It
writes the destination in one transaction, all or nothing, table by table in the order the migrations made them
(a table comes after the tables it references), with each row's own ids; Postgres' identity counters then start
after the largest id. Rows are copied as they are: the triggers that would derive rows (a label's
``label_events`` entry) are off during the copy, since those rows are copied themselves. ``_migrations`` is not
copied: both sides are migrated to the same history when they are opened.

    result = copy_workspace(Store("workbench.db"), Store("postgresql://ana@db:5432/evals"))
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from workbench.core.errors import InputError
from workbench.store import audit
from workbench.store.engines.urls import parse_target
from workbench.store.store import Store

BATCH_ROWS = 5_000
SKIPPED = ("_migrations",)


@dataclass(frozen=True)
class CopyResult:
    """Rows copied per table, in copy order."""

    rows: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.rows.values())


@lru_cache(maxsize=1)
def table_order() -> tuple[str, ...]:
    """Every workbench table in the order the migrations create them: each after the tables it references."""
    with Store(":memory:") as fresh:
        return tuple(t for t in fresh.table_names() if t not in SKIPPED)


def open_existing(text: str) -> Store:
    """The store named by ``text`` for reading from: an SQLite file that must exist (never a new empty one)."""
    target = parse_target(text)
    if not target.is_postgres and target.location != ":memory:" and not Path(target.location).is_file():
        raise InputError(f"there is no workbench database at {target.location}", fix="check the path")
    return Store(target.location)


def has_data(store: Store) -> bool:
    """True when any table of the workspace holds a row (a restore or copy into it would overwrite work)."""
    return any(store.conn.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() for t in table_order())


def copy_workspace(source: Store, dest: Store, *, replace: bool = False) -> CopyResult:
    """Copy every row of ``source`` into ``dest``; ``dest`` must be empty unless ``replace`` (then emptied first)."""
    tables = list(table_order())
    if (source.dialect, source.path) == (dest.dialect, dest.path):
        raise InputError(f"{source.path} is both the source and the destination", fix="name another destination")
    if has_data(dest) and not replace:
        raise InputError(f"{dest.path} already holds a workspace", fix="copy into an empty database, or pass --yes "
                         "to replace what it holds")
    columns = {t: _columns(source, t) for t in tables}
    counts: dict[str, int] = {}
    with _snapshot(source), dest.transaction():
        with _triggers_off(dest, tables):
            if replace:
                _empty(dest, tables)
            for table in tables:
                counts[table] = _copy_table(source, dest, table, columns[table])
        if dest.dialect == "postgres":
            _restart_identities(dest, tables)
        if replace:  # work was overwritten: say by whom (a copy into an empty database stays an exact copy)
            audit.record(dest, actor=None, action="workspace.replaced", target=source.path,
                         detail={"rows": sum(counts.values())})
    return CopyResult(counts)


def backup(source: Store, path: str | Path) -> CopyResult:
    """A consistent snapshot of the workspace as a new SQLite file at ``path`` (refused if it exists)."""
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists", fix="give the backup a new file name")
    if not path.parent.is_dir():
        raise InputError(f"the folder of {path} does not exist", fix="create it, or give another path")
    if source.dialect == "sqlite" and source.path != ":memory:":
        target = sqlite3.connect(str(path))
        try:
            source.conn.backup(target)  # SQLite's online backup: page by page, consistent while others write
        finally:
            target.close()
        with Store(path) as copy:
            return CopyResult({t: n for t, n in copy.table_counts().items() if t not in SKIPPED})
    try:
        with Store(path) as dest:
            return copy_workspace(source, dest)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        raise


def _columns(store: Store, table: str) -> list[str]:
    cur = store.conn.execute(f'SELECT * FROM "{table}" LIMIT 0')
    return [d[0] for d in cur.description]


class _snapshot:
    """One read transaction over the whole copy: every table as of the same moment."""

    def __init__(self, store: Store):
        self.store = store

    def __enter__(self) -> None:
        begin = "BEGIN" if self.store.dialect == "sqlite" else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        self.store.conn.execute(begin)
        self.store.conn.execute("SELECT count(*) FROM golden_sets").fetchone()  # SQLite takes its snapshot here

    def __exit__(self, *exc: object) -> None:
        self.store.conn.execute("COMMIT")


class _triggers_off:
    """The destination's row triggers off for the copy, back on before it commits (both engines' DDL is
    transactional, so nobody ever sees the tables without them)."""

    def __init__(self, store: Store, tables: list[str]):
        self.store, self.tables, self.saved = store, tables, []

    def __enter__(self) -> None:
        if self.store.dialect == "postgres":
            for t in self.tables:
                self.store.conn.execute(f'ALTER TABLE "{t}" DISABLE TRIGGER USER')
            return
        self.saved = [(name, sql) for name, sql in self.store.conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")]
        for name, _ in self.saved:
            self.store.conn.execute(f'DROP TRIGGER "{name}"')

    def __exit__(self, *exc: object) -> None:
        if self.store.dialect == "postgres":
            for t in self.tables:
                self.store.conn.execute(f'ALTER TABLE "{t}" ENABLE TRIGGER USER')
            return
        for _, sql in self.saved:
            self.store.conn.execute(sql)


def _empty(store: Store, tables: list[str]) -> None:
    if store.dialect == "postgres":
        store.conn.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY")
        return
    for t in reversed(tables):
        store.conn.execute(f'DELETE FROM "{t}"')


def _copy_table(source: Store, dest: Store, table: str, columns: list[str]) -> int:
    names = ", ".join(f'"{c}"' for c in columns)
    insert = f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'
    cur = source.conn.cursor()
    cur.row_factory = None  # plain tuples
    cur.execute(f'SELECT {names} FROM "{table}" ORDER BY {", ".join(str(i + 1) for i in range(len(columns)))}')
    n = 0
    while rows := cur.fetchmany(BATCH_ROWS):
        dest.conn.executemany(insert, [tuple(r) for r in rows])
        n += len(rows)
    return n


def _restart_identities(store: Store, tables: list[str]) -> None:
    """Postgres' identity counters after the largest copied id (SQLite's follow max(rowid) by themselves)."""
    for table, column in store.conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND is_identity = 'YES'").fetchall():
        if table in tables:
            store.conn.execute(f"""SELECT setval(pg_get_serial_sequence('"{table}"', '{column}'),
                                   coalesce((SELECT max("{column}") FROM "{table}"), 0) + 1, false)""")
