"""Landing a large item import without holding the write lock for the whole file.

The file is parsed, validated and hashed into ``StagedItems``, a private
temporary SQLite file, while every other writer carries on. The staged rows
then land in the working database, all or nothing:

- into a golden set that does not exist yet, in chunks of short transactions
  into a hidden set (``golden_sets.importing`` holds the key of the import's
  lease, and every listing leaves such a set out), which one short transaction
  then names: the whole file appears at once;
- into an existing golden set (or a small file), in one transaction that
  re-checks the ids against what landed meanwhile and copies the new rows with
  one ``INSERT ... SELECT`` from the attached staging file.

A killed import leaves nothing (killed while staging) or a hidden set whose
lease is abandoned; ``abandoned.discard_abandoned_imports`` (run when a Store opens)
removes it, so the database reads exactly as before the import.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import sqlite3
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from workbench.core.errors import WorkbenchError
from workbench.store import leases
from workbench.store.abandoned import discard
from workbench.store.db import now, query_one, retry_busy
from workbench.store.migrations import postgres_ddl
from workbench.store.store import Store

log = logging.getLogger(__name__)

# A file above either size lands through a hidden set; a smaller one in a single short transaction.
HIDDEN_SET_MIN_ROWS = 20_000
HIDDEN_SET_MIN_BYTES = 32 << 20
# The copy into a hidden set: the first transaction writes about CHUNK_BYTES, the next ones are sized to hold the
# write lock about CHUNK_TARGET_S each.
CHUNK_BYTES = 4 << 20
CHUNK_TARGET_S = 0.15
CHUNK_MIN_ROWS, CHUNK_MAX_ROWS = 100, 50_000
# Between two copy transactions the import leaves the lock free this long (checkpointing meanwhile). SQLite queues
# no one: a writer kept waiting polls the lock with sleeps that grow to 100 ms, so an import that took the lock
# straight back would starve it (reviewers measured waiting 1.7 s behind a run of 0.15 s chunks). Longer than one
# poll, with room for a busy machine to schedule the waiting process late.
YIELD_S = 0.2

_COLUMNS = "item_id, task_id, category, producer_model, producer_family, content, content_hash"


class StagedItems:
    """An import file's items, validated, in a private temporary SQLite file; use as a context manager."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="workbench-import-"))
        self.path = self.dir / "staged.db"
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE"):
            self.conn.execute(f"PRAGMA {pragma}")
        # seq = rowid, 1, 2, 3 ... in file order: the order positions follow. present = already in the
        # golden set with this content when staged (items never change, so that stays true).
        self.conn.execute(f"""CREATE TABLE staged (
            seq INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE, line INTEGER NOT NULL, task_id TEXT NOT NULL,
            category TEXT NOT NULL, producer_model TEXT, producer_family TEXT, content TEXT NOT NULL,
            content_hash TEXT NOT NULL, present INTEGER NOT NULL DEFAULT 0)""")
        # Items of the golden set below this position were there before staging began, so the ``present`` marks
        # already account for them; whatever lands meanwhile comes above it (positions only grow). None: the set
        # did not exist, every item of it is new.
        self.checked_below: int | None = None

    def check_against(self, store: Store, golden_set_id: int) -> None:
        """Call before comparing staged ids with the golden set's items (``Store.item_hashes``)."""
        self.checked_below = store.next_item_position(golden_set_id)

    def close(self) -> None:
        self.conn.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "StagedItems":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def earlier(self, item_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """item_id -> (line, content hash) of the ids already staged."""
        out: dict[str, tuple[int, str]] = {}
        for i in range(0, len(item_ids), 500):
            chunk = item_ids[i:i + 500]
            for item_id, line, h in self.conn.execute(
                    f"SELECT item_id, line, content_hash FROM staged WHERE item_id IN ({','.join('?' * len(chunk))})",
                    chunk):
                out[item_id] = (line, h)
        return out

    def add(self, rows: Sequence[dict]) -> None:
        """Stage rows (``line``, ``present`` and the item columns) whose ids are not staged yet."""
        self.conn.execute("BEGIN")
        self.conn.executemany(
            f"INSERT INTO staged (line, present, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(r["line"], int(r.get("present", False)), r["item_id"], r["task_id"], r["category"],
              r.get("producer_model"), r.get("producer_family"), r["content"], r["content_hash"]) for r in rows])
        self.conn.execute("COMMIT")

    def size(self) -> tuple[int, int, int]:
        """(rows, rows not present when staged, bytes of their content)."""
        n, new, size = self.conn.execute(
            "SELECT count(*), coalesce(sum(present = 0), 0), coalesce(sum(length(content)), 0) FROM staged").fetchone()
        return n, new, size


@dataclass(frozen=True)
class Landed:
    added: int
    conflict: tuple[str, int] | None = None  # (item id, line) already in the golden set with other content
    lock_s: float = 0.0  # the longest this import held the write lock


class _Refused(Exception):
    def __init__(self, conflict: tuple[str, int]):
        self.conflict = conflict


class ImportInterrupted(WorkbenchError):
    """The import stalled so long that its half-copied rows were discarded by another process."""


def land_items(store: Store, staged: StagedItems, golden_set: str, *, is_demo: bool = False) -> Landed:
    """Land every staged item in the golden set (creating it), or none; see the module docstring."""
    n, new, size = staged.size()
    exists = _visible_set(store, golden_set) is not None
    big = n >= HIDDEN_SET_MIN_ROWS or size >= HIDDEN_SET_MIN_BYTES
    if exists and new == 0 and not is_demo:  # a re-import: every id is there with the same content
        return Landed(0)
    if store.conn.in_transaction or store.dialect == "postgres":
        # the caller's transaction decides how long the lock is held; Postgres' readers never wait for a writer,
        # and its copy from a temporary table is one short server-side INSERT ... SELECT
        return _land_in_one_transaction(store, staged, golden_set, is_demo, attach=False)
    if not exists and big:
        landed = _land_through_hidden_set(store, staged, golden_set, is_demo, size / max(n, 1))
        if landed is not None:
            return landed
        # another import created the golden set meanwhile: land as an addition to it
    return _land_in_one_transaction(store, staged, golden_set, is_demo, attach=True)


def _visible_set(store: Store, name: str) -> dict | None:
    return query_one(store.conn, "SELECT id FROM golden_sets WHERE name = ? AND importing IS NULL", (name,))


class _Attached:
    """The staging file attached to the store's connection as schema ``staging``."""

    def __init__(self, store: Store, staged: StagedItems):
        self.store, self.staged = store, staged

    def __enter__(self) -> str:
        self.store.conn.execute("ATTACH DATABASE ? AS staging", (str(self.staged.path),))
        return "staging"

    def __exit__(self, *exc: object) -> None:
        self.store.conn.execute("DETACH DATABASE staging")


def _land_in_one_transaction(store: Store, staged: StagedItems, golden_set: str, is_demo: bool, *,
                             attach: bool) -> Landed:
    main = "main." if store.dialect == "sqlite" else ""

    def write(schema: str) -> Landed:
        t0 = 0.0
        try:
            with store.transaction():
                t0 = time.perf_counter()
                gs_id = store.ensure_golden_set(golden_set, is_demo=is_demo)
                # only items that landed after staging began can collide with an id staged as new
                since = staged.checked_below or 0
                conflict = query_one(store.conn, f"""
                    SELECT s.item_id, s.line FROM {main}items i JOIN {schema}.staged s ON s.item_id = i.item_id
                    WHERE i.golden_set_id = ? AND i.position >= ? AND s.present = 0
                      AND i.content_hash != s.content_hash ORDER BY s.seq LIMIT 1""", (gs_id, since))
                if conflict:
                    raise _Refused((conflict["item_id"], conflict["line"]))
                base = store.next_item_position(gs_id)
                # positions follow the file (with gaps where an item was already there): no sort under the lock
                cur = store.conn.execute(f"""
                    INSERT INTO {main}items (golden_set_id, {_COLUMNS}, position, created_at)
                    SELECT ?, {_COLUMNS}, ? + s.seq - 1, ? FROM {schema}.staged s
                    WHERE s.present = 0 AND s.item_id NOT IN (
                        SELECT item_id FROM {main}items WHERE golden_set_id = ? AND position >= ?)""",
                                         (gs_id, base, now(), gs_id, since))
                added = cur.rowcount
        except _Refused as refused:
            return Landed(0, refused.conflict, time.perf_counter() - t0)
        return Landed(added, None, time.perf_counter() - t0)

    if not attach:
        # ATTACH is refused inside a transaction (and Postgres has none): bring the rows into a temporary table of
        # this connection.
        temp = "temp" if store.dialect == "sqlite" else "pg_temp"
        ddl = ("CREATE TEMP TABLE IF NOT EXISTS staged (seq INTEGER PRIMARY KEY, line INTEGER, present INTEGER, "
               "item_id TEXT, task_id TEXT, category TEXT, producer_model TEXT, producer_family TEXT, content TEXT, "
               "content_hash TEXT)")
        store.conn.execute(ddl if store.dialect == "sqlite" else postgres_ddl(ddl))
        store.conn.execute(f"DELETE FROM {temp}.staged")
        cur = staged.conn.execute(f"SELECT seq, line, present, {_COLUMNS} FROM staged ORDER BY seq")
        while rows := cur.fetchmany(CHUNK_MAX_ROWS):
            store.conn.executemany(f"INSERT INTO {temp}.staged (seq, line, present, {_COLUMNS}) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        try:
            if store.conn.in_transaction:  # the caller's: it holds the lock, and a retry would roll it back
                return write(temp)
            return retry_busy(store.conn, lambda: write(temp), what=f"import into golden set '{golden_set}'")
        finally:
            store.conn.execute(f"DELETE FROM {temp}.staged")
    with _Attached(store, staged) as schema:
        return retry_busy(store.conn, lambda: write(schema), what=f"import into golden set '{golden_set}'")


def _land_through_hidden_set(store: Store, staged: StagedItems, golden_set: str, is_demo: bool,
                             row_bytes: float) -> Landed | None:
    """Copy into a hidden set in short transactions, then name it; None if the name was taken meanwhile."""
    def open_hidden_set() -> tuple[leases.Holder, int]:
        with store.transaction():  # the lease and its set together: a kill leaves both or neither
            holder, _ = leases.acquire(store, f"import:{secrets.token_hex(8)}")
            gs_id = store.conn.execute(
                "INSERT INTO golden_sets (name, overlap, is_demo, created_at, importing) VALUES (?, 2, ?, ?, ?) "
                "RETURNING id", (f"(importing {holder.key})", int(is_demo), now(), holder.key)).fetchone()[0]
            return holder, gs_id

    holder, gs_id = retry_busy(store.conn, open_hidden_set, what=f"import into golden set '{golden_set}'")
    rows = _clamp_rows(CHUNK_BYTES / max(row_bytes, 1.0))
    longest = 0.0
    named = False
    try:
        with _Attached(store, staged), _checkpoints_by_hand(store):
            last = store.conn.execute("SELECT coalesce(max(seq), 0) FROM staging.staged").fetchone()[0]
            lo = 1
            while lo <= last:
                def copy(lo: int = lo, n: int = rows) -> float:
                    with store.transaction():
                        t0 = time.perf_counter()
                        beat = store.conn.execute("UPDATE leases SET heartbeat_at = ? WHERE key = ? AND token = ?",
                                                  (now(), holder.key, holder.token))
                        if beat.rowcount != 1:
                            raise ImportInterrupted(
                                f"the import into golden set '{golden_set}' stalled for more than "
                                f"{leases.LEASE_STALE_S:.0f} s and its partial copy was discarded; run it again")
                        store.conn.execute(f"""
                            INSERT INTO main.items (golden_set_id, {_COLUMNS}, position, created_at)
                            SELECT ?, {_COLUMNS}, seq - 1, ? FROM staging.staged WHERE seq >= ? AND seq < ?""",
                                           (gs_id, now(), lo, lo + n))
                    return time.perf_counter() - t0
                held = retry_busy(store.conn, copy, what=f"import into golden set '{golden_set}'")
                released = time.perf_counter()
                longest = max(longest, held)
                lo += rows
                rows = _clamp_rows(rows * min(2.0, CHUNK_TARGET_S / max(held, 1e-3)))
                _yield_lock(store, released)

        def name_it() -> float | None:
            with store.transaction():
                t0 = time.perf_counter()
                if _visible_set(store, golden_set) is not None:
                    return None
                store.conn.execute("UPDATE golden_sets SET name = ?, importing = NULL WHERE id = ?",
                                   (golden_set, gs_id))
                leases.release(store, holder)
            return time.perf_counter() - t0

        took = retry_busy(store.conn, name_it, what=f"import into golden set '{golden_set}'")
        named = took is not None
        if not named:
            return None
        return Landed(last, None, max(longest, took))
    finally:
        if not named:
            discard(store, gs_id, holder.key, pause_s=YIELD_S)


def _clamp_rows(n: float) -> int:
    return int(min(CHUNK_MAX_ROWS, max(CHUNK_MIN_ROWS, n)))


@contextmanager
def _checkpoints_by_hand(store: Store) -> Iterator[None]:
    """No automatic checkpoint after this connection's commits: it runs while the lock is free (``_yield_lock``)."""
    store.conn.execute("PRAGMA wal_autocheckpoint=0")
    try:
        yield
    finally:
        store.conn.execute("PRAGMA wal_autocheckpoint=1000")


def _yield_lock(store: Store, released: float) -> None:
    """Leave the write lock free for YIELD_S after a copy, copying the WAL into the database meanwhile."""
    if store.path != ":memory:":
        try:
            store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # takes no write lock
        except sqlite3.OperationalError:  # another connection is checkpointing: it does the work
            pass
    rest = YIELD_S - (time.perf_counter() - released)
    if rest > 0:
        time.sleep(rest)
