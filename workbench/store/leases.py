"""Leases: one holder at a time for long work (a judge run, a large import landing).

A lease row names its holder (a random token, the process id and the host) and
the time of its last heartbeat. Taking a lease is one ``BEGIN IMMEDIATE``
transaction, so two processes asking at the same moment cannot both get it. A
lease is taken over when its holder is gone: its heartbeat is older than
``LEASE_STALE_S``, or it was held by a process of this host that no longer
exists (a killed run is resumed at once, without waiting for the heartbeat).

    holder, ours = acquire(store, "run:12")
    if not ours: ...                      # holder says who has it, since when
    with LeaseKeeper(store.path, holder) as keeper:   # heartbeats in a thread
        ... keeper.lost.is_set() ...      # someone took it over: stop
    release(store, holder)

A shared judge run is held by several such leases at once, one per runner (``store/claims.py``); ``holders`` lists
the leases whose keys start with a prefix.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from workbench.store.db import Connection, is_busy, now, query_one, retry_busy

log = logging.getLogger(__name__)

LEASE_STALE_S = 30.0  # a heartbeat older than this means the holder is gone
HEARTBEAT_S = 5.0


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: the token tells the holder apart from any other thread or process."""

    key: str
    token: str
    pid: int
    host: str
    acquired_at: str
    heartbeat_at: str

    def heartbeat_age_s(self, at: datetime | None = None) -> float:
        at = at or datetime.now(timezone.utc)
        return (at - datetime.fromisoformat(self.heartbeat_at)).total_seconds()

    def describe(self) -> str:
        """'process 4242 on host build-7 since 2026-12-02 10:15:03 UTC'."""
        since = datetime.fromisoformat(self.acquired_at).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"process {self.pid} on host '{self.host}' since {since}"


def this_host() -> str:
    return socket.gethostname()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def is_abandoned(holder: Holder, *, stale_after_s: float = LEASE_STALE_S) -> bool:
    """The holder stopped heartbeating, or was a process of this host that no longer exists."""
    if holder.heartbeat_age_s() > stale_after_s:
        return True
    return holder.host == this_host() and not _pid_alive(holder.pid)


def current(store: Connection, key: str) -> Holder | None:
    row = query_one(store.conn, "SELECT * FROM leases WHERE key = ?", (key,))
    return Holder(**row) if row else None


def live_holder(store: Connection, key: str, *, stale_after_s: float = LEASE_STALE_S) -> Holder | None:
    """The holder of the lease if it is still alive, else None."""
    holder = current(store, key)
    return None if holder is None or is_abandoned(holder, stale_after_s=stale_after_s) else holder


def holders(store: Connection, prefix: str) -> list[Holder]:
    """Every lease whose key starts with ``prefix`` (alive or not), oldest first."""
    rows = store.conn.execute("SELECT * FROM leases WHERE substr(key, 1, ?) = ? ORDER BY acquired_at, key",
                              (len(prefix), prefix)).fetchall()
    return [Holder(**dict(r)) for r in rows]


def mint(key: str | None = None, *, prefix: str = "") -> Holder:
    """A new holder of this process (not yet written): ``key``, or ``prefix`` followed by the holder's token."""
    at, token = now(), secrets.token_hex(8)
    return Holder(key=key if key is not None else prefix + token, token=token, pid=os.getpid(), host=this_host(),
                  acquired_at=at, heartbeat_at=at)


def write(store: Connection, holder: Holder) -> None:
    """Write ``holder`` as the lease of its key, replacing whoever held it (inside the caller's transaction)."""
    store.conn.execute(
        """INSERT INTO leases (key, token, pid, host, acquired_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET token = excluded.token, pid = excluded.pid, host = excluded.host,
               acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at""",
        (holder.key, holder.token, holder.pid, holder.host, holder.acquired_at, holder.heartbeat_at))


def acquire(store: Connection, key: str, *, stale_after_s: float = LEASE_STALE_S) -> tuple[Holder, bool]:
    """Take the lease unless a live holder has it; returns (the holder now, whether it is this caller)."""
    mine = mint(key)

    def take() -> tuple[Holder, bool]:
        with store.transaction():
            held = current(store, key)
            if held is not None and not is_abandoned(held, stale_after_s=stale_after_s):
                return held, False
            if held is not None:
                log.warning("taking over lease %s from %s (last heartbeat %.0f s ago)", key, held.describe(),
                            held.heartbeat_age_s())
            write(store, mine)
            return mine, True

    return retry_busy(store.conn, take, what=f"lease {key}")


def heartbeat(store: Connection, holder: Holder) -> bool:
    """Refresh the heartbeat; False when the lease is no longer this holder's (it was taken over)."""
    with store.transaction():
        cur = store.conn.execute("UPDATE leases SET heartbeat_at = ? WHERE key = ? AND token = ?",
                                 (now(), holder.key, holder.token))
        return cur.rowcount == 1


def release(store: Connection, holder: Holder) -> None:
    """Give the lease up (joins the caller's transaction, if any); a lease taken over is left alone."""
    with store.transaction():
        store.conn.execute("DELETE FROM leases WHERE key = ? AND token = ?", (holder.key, holder.token))


class LeaseKeeper:
    """Heartbeats a held lease from a thread with its own connection; sets ``lost`` if it is taken over."""

    def __init__(self, path: str, holder: Holder, *, every_s: float | None = None):
        self.path, self.holder = path, holder
        self.every_s = HEARTBEAT_S if every_s is None else every_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "LeaseKeeper":
        if self.path != ":memory:":  # nobody else can see an in-memory database
            self._thread = threading.Thread(target=self._beat, name=f"lease-{self.holder.key}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> "LeaseKeeper":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _beat(self) -> None:
        store = Connection(self.path)  # a connection of its own; the holder's process migrated the schema
        try:
            while not self._stop.wait(self.every_s):
                try:
                    if not heartbeat(store, self.holder):
                        log.warning("lease %s was taken over by another process", self.holder.key)
                        self.lost.set()
                        return
                except Exception as exc:  # noqa: BLE001 - a missed beat is retried at the next one
                    if not is_busy(exc):
                        log.warning("lease %s: heartbeat failed: %s", self.holder.key, exc)
        finally:
            store.close()
